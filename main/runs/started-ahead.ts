// A run's next turn's sandbox, started when its last turn ended: bubblewrap, its shell
// and its network relays take most of a sandboxed turn's start (tens of milliseconds),
// and none of that depends on the turn's input. The process waits, with its relays
// listening, for the turn's token on stdin: a shell that starts the agent only then, or,
// for Parley's own workers (`AgentLaunch.readsTokenFirst`), the worker itself, started
// and reading its stdin. It has the environment of the turn that ended, token left out,
// so it serves a turn whose own is the same; any other turn is wrapped and started anew,
// and this one ended.
import { SANDBOX_READY_LINE, wrapperEnv, type WrappedArgv } from '../sandbox/sandbox';
import type { AgentChild } from '../sandbox/runtime-host';
import { endGroup, startInGroup } from './process-tree';

const TOKEN = 'PARLEY_TOKEN';
const READY_WITHIN_MS = 10_000;

function withoutToken(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const rest = { ...env };
  delete rest[TOKEN];
  return rest;
}

function sameEnv(a: NodeJS.ProcessEnv, b: NodeJS.ProcessEnv): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}

/** Whether two turns' environments are the same but for their tokens. */
export function sameTurnEnv(a: NodeJS.ProcessEnv, b: NodeJS.ProcessEnv): boolean {
  return sameEnv(withoutToken(a), withoutToken(b));
}

export class StartedAhead {
  private readonly env: NodeJS.ProcessEnv;
  private state: 'starting' | 'ready' | 'taken' | 'gone' = 'starting';
  private ending: Promise<void> | null = null;
  /** True once it waits for its turn; false when it will never serve one. */
  readonly ready: Promise<boolean>;
  private readonly exited: Promise<void>;

  private constructor(
    readonly child: AgentChild,
    env: NodeJS.ProcessEnv,
  ) {
    this.env = env;
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    const { stdout } = child;
    this.ready = new Promise<boolean>((resolve) => {
      if (!stdout || child.pid === undefined) {
        this.state = 'gone';
        resolve(false);
        return;
      }
      let seen = '';
      const onData = (chunk: Buffer) => {
        seen += chunk.toString('utf8');
        const newline = seen.indexOf('\n');
        if (newline < 0 && seen.length < 256) return;
        stdout.off('data', onData);
        clearTimeout(stuck);
        // Nothing follows the line before the turn's token: the agent's output starts after it.
        stdout.pause();
        if (seen.slice(0, newline) === SANDBOX_READY_LINE && this.state === 'starting') {
          this.state = 'ready';
          resolve(true);
        } else {
          void this.end();
          resolve(false);
        }
      };
      stdout.on('data', onData);
      // The relays give up waiting after 0.3 s and the shell speaks next: one that is
      // silent much longer is stuck, and ended.
      const stuck = setTimeout(() => {
        stdout.off('data', onData);
        void this.end();
      }, READY_WITHIN_MS);
      stuck.unref();
      void this.exited.then(() => {
        clearTimeout(stuck);
        if (this.state !== 'taken') this.state = 'gone';
        resolve(false);
      });
    });
  }

  /**
   * Starts the wrap made ahead (`wrapArgv(…, { startedAhead: true })`) in `cwd`, with the
   * environment of the turn that ended (its token is not kept). Null when it cannot start.
   */
  static async start(wrapped: WrappedArgv, cwd: string, env: NodeJS.ProcessEnv): Promise<StartedAhead | null> {
    const own = withoutToken(env);
    let child: AgentChild;
    try {
      child = await startInGroup(wrapped.command, wrapped.args, {
        cwd,
        env: wrapperEnv(own),
        starter: wrapped.starter,
      });
    } catch {
      return null;
    }
    child.on('error', () => {
      // A start that failed: `ready` says false once it has exited.
    });
    child.stdin?.on('error', () => {});
    return new StartedAhead(child, own);
  }

  /** Whether it waits, ready, for a turn with this environment (its token aside). */
  fits(env: NodeJS.ProcessEnv): boolean {
    return this.state === 'ready' && this.child.exitCode === null && sameEnv(this.env, withoutToken(env));
  }

  /** The turn's now: its stdin starts with the token (`AgentProcesses.run` writes it). */
  take(): AgentChild {
    this.state = 'taken';
    return this.child;
  }

  /** Ends it and everything it started, unless a turn took it. */
  end(): Promise<void> {
    if (this.state === 'taken') return Promise.resolve();
    this.state = 'gone';
    this.ending ??= this.child.pid === undefined ? Promise.resolve() : endGroup(this.child.pid, 0, this.exited);
    return this.ending.then(() => {
      for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) stream?.destroy();
    });
  }
}
