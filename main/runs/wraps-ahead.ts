// The wraps made ahead for runs' next turns (main/sandbox/wrap-ahead.ts), one per run and
// a few at most, each started ahead too (started-ahead.ts): each holds a network
// registration, a temporary folder and a waiting sandbox until its turn takes it, so the
// oldest goes when another comes, and all go at close.
//
// Making one is background work of a few hundred milliseconds of CPU (the wrap, bubblewrap,
// its relays, a worker's Node start), and a turn that starts meanwhile competes with it for
// the machine: a peer's quick answer lands in the agent conversation that asked while the
// conversation's own next sandbox is being started. So a run's next turn is made once the
// installation has had no turn start or end for a moment (`SETTLE_MS`), and at the latest
// `SETTLE_AT_MOST_MS` after its turn ended.
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { log } from '../log';
import { mountPointsLeft } from '../sandbox/sandbox';
import { wrapAhead, type AheadWrap, type TurnSandboxOptions, type TurnToWrap } from '../sandbox/turn-sandbox';
import { sameTurnEnv, StartedAhead } from './started-ahead';
import { WhenSettled } from './when-settled';

/** A run's next turn, wrapped and (once the wrap is made) started. */
export interface NextTurn {
  ahead: AheadWrap;
  /** The environment of the turn that ended, which the started process has. */
  env: NodeJS.ProcessEnv;
  /** Null until the wrap is made, and when it could not be started. */
  started: StartedAhead | null;
  /** Resolves once the wrap is made and started, or will not be. */
  launched: Promise<void>;
  /** Dropped before it was taken: it is not started any more. */
  dropped: boolean;
}

/** How long the installation's turns must have been quiet before a next turn is made ahead. */
export const SETTLE_MS = 150;
/** The longest a next turn waits to be made after its turn ended, however busy the installation is. */
export const SETTLE_AT_MOST_MS = 1000;

export class WrapsAhead {
  /** In the order they were made. */
  private readonly byRun = new Map<number, NextTurn>();
  /** Next turns to make once the turns have settled, by run. */
  private readonly toMake = new WhenSettled<number>(SETTLE_MS, SETTLE_AT_MOST_MS);
  private closed = false;

  constructor(private readonly max = 4) {}

  /** A turn started or ended: what waits to be made waits for the turns to settle again. */
  turnMoment(): void {
    this.toMake.moment();
  }

  /** `prepare(…)` once the turns have settled (see above); not at all if the run's turn comes first. */
  prepareWhenSettled(...args: Parameters<WrapsAhead['prepare']>): void {
    const [, runId] = args;
    if (!this.closed) this.toMake.later(runId, () => this.prepare(...args));
  }

  /**
   * Wraps the run's next turn as `ended` was (its command, folder and level, with a new
   * temporary folder in `dir`), in the background; the turn compares it with its own when
   * it starts. `runExists` tells the runs not deleted meanwhile.
   */
  private prepare(
    sandbox: TurnSandboxOptions,
    runId: number,
    ended: TurnToWrap,
    dir: string,
    runExists: (runId: number) => boolean,
  ): void {
    if (!runExists(runId) || mountPointsLeft()) return;
    // Those of runs deleted without the run manager dropping theirs.
    this.dropWhere((held) => !runExists(held));
    const tmpDir = path.join(dir, `next-${runId}-${randomBytes(6).toString('hex')}`);
    try {
      mkdirSync(tmpDir, { mode: 0o700 });
      const ahead = wrapAhead(sandbox, { ...ended, runTmp: tmpDir });
      if (ahead) this.put(runId, this.startWhenMade(ahead, ended));
      else rmSync(tmpDir, { recursive: true, force: true });
    } catch (error) {
      rmSync(tmpDir, { recursive: true, force: true });
      log.warn('could not wrap a run’s next turn ahead', { runId, error: String(error) });
    }
  }

  /** Starts the wrap once it is made, unless it was dropped meanwhile (a taken one starts for its turn). */
  private startWhenMade(ahead: AheadWrap, ended: TurnToWrap): NextTurn {
    const next: NextTurn = { ahead, env: ended.env, started: null, launched: Promise.resolve(), dropped: false };
    next.launched = ahead.wrapped.then(async (made) => {
      if (made && !this.closed && !next.dropped) next.started = await StartedAhead.start(made, ended.cwd, ended.env);
    });
    return next;
  }

  put(runId: number, next: NextTurn): void {
    if (this.closed) {
      void discard(next);
      return;
    }
    void this.drop(runId);
    this.byRun.set(runId, next);
    for (const [oldest] of this.byRun) {
      if (this.byRun.size <= this.max) break;
      void this.drop(oldest);
    }
  }

  /**
   * The run's, now the caller's: its folder is the turn's, its wrap the turn's to use or
   * release, and its started process the turn's to take or end.
   */
  take(runId: number): NextTurn | undefined {
    // Its turn came before it was made: that turn's end makes the next one.
    this.toMake.cancel(runId);
    const next = this.byRun.get(runId);
    this.byRun.delete(runId);
    return next;
  }

  /** Ends the run's started process, releases its wrap and removes its folder. */
  drop(runId: number): Promise<void> {
    const next = this.take(runId);
    return next ? discard(next) : Promise.resolve();
  }

  /** Drops those of runs that are gone. */
  dropWhere(gone: (runId: number) => boolean): void {
    this.toMake.cancelWhere(gone);
    for (const runId of [...this.byRun.keys()]) if (gone(runId)) void this.drop(runId);
  }

  /**
   * Resolves once every next turn waiting to be made is made, and every wrap held then is
   * started, waiting for its turn (or failed).
   */
  async made(): Promise<void> {
    await this.toMake.settled();
    await Promise.all(
      [...this.byRun.values()].map(async (next) => {
        await next.launched;
        await next.started?.ready;
      }),
    );
  }

  /** Ends their started processes, releases their wraps and removes their folders; none waits to be made. */
  async dropAll(): Promise<void> {
    this.toMake.clear();
    await Promise.all([...this.byRun.keys()].map((runId) => this.drop(runId)));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.toMake.close();
    await this.dropAll();
  }
}

/**
 * The process started for `next` if it serves a turn with this environment, once it is
 * ready: a turn that comes while it is starting waits for it, which is never longer than
 * wrapping and starting anew. Null when it does not serve.
 */
export async function startedFor(next: NextTurn, env: NodeJS.ProcessEnv): Promise<StartedAhead | null> {
  if (!sameTurnEnv(next.env, env)) return null;
  await next.launched;
  const started = next.started;
  return started && (await started.ready) && started.fits(env) ? started : null;
}

/** Ends what was started for `next`, unless its turn took it; nothing is started for it from now on. */
export async function endStarted(next: NextTurn): Promise<void> {
  next.dropped = true;
  await next.launched;
  await next.started?.end();
}

async function discard(next: NextTurn): Promise<void> {
  rmSync(next.ahead.tmpDir, { recursive: true, force: true });
  await endStarted(next);
  await next.ahead.release();
}
