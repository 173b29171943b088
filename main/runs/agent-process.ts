// A turn's agent process: spawned in its own group, its output read line by line (what
// the adapter makes of each line: the session, live output, a failure, the model's
// state), and its whole tree ended once, however many ask.
import { deadline, observe, type ModelSignal } from '../agents/model-watch';
import type { AgentLaunch, ProcessResult, StreamUpdate } from '../agents/types';
import { log } from '../log';
import type { Db } from '../store/database';
import type { RunRow } from '../store/queries/runs';
import { setRunSession, setTurnProcess } from '../store/queries/runs';
import type { ActiveTurn } from './active-turn';
import { notStartedResult, startFailure } from './agent-start';
import type { AgentChild, ProcessStarter } from '../sandbox/runtime-host';
import { endTree, processStartTime, ProcessTree, startInGroup } from './process-tree';
import { nextPhase, stopReason } from './turn-phase';

export interface AgentProcessDeps {
  db: Db;
  /** Cap on an agent's stdout kept for its output. */
  maxOutput: number;
  /** How long an agent has between SIGTERM and SIGKILL. */
  graceMs: number;
  /** Whether the turn still runs (live output is told only then). */
  isActive: (turnId: number) => boolean;
  /** People watching the run are told it changed. */
  changed: (run: RunRow) => void;
}

const LIVE_LINES = 200;
const LIVE_EVENT_MS = 500;

/** How long the output pipes are read after the tree is gone, before they are closed. */
const PIPE_DRAIN_MS = 2_000;
/** After a stop the output is not used: people are waiting for the stop to answer. */
const STOPPED_PIPE_DRAIN_MS = 50;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Resolves when the stream has closed (its writers are gone, or it was destroyed). */
function closed(stream: NodeJS.ReadableStream & { closed?: boolean }): Promise<void> {
  return new Promise((resolve) => {
    if (stream.closed) resolve();
    else stream.once('close', () => resolve());
  });
}

export class AgentProcesses {
  /** Set when the run manager closes: a process whose start was under way then is ended once it exists. */
  private closed = false;

  constructor(private readonly deps: AgentProcessDeps) {}

  close(): void {
    this.closed = true;
  }

  /**
   * Spawns the agent and collects its output. The turn is over when the leader has
   * exited and nothing of its tree is left: whatever it left running is ended then,
   * and the output pipes are not waited on past that (a command it started may hold
   * them). A start that fails resolves with the reason in stderr.
   */
  run(
    active: ActiveTurn,
    launch: AgentLaunch,
    start: { command: string; args: string[]; env: NodeJS.ProcessEnv; starter?: ProcessStarter },
    token: string,
    /** The sandbox started ahead for this turn (started-ahead.ts): it waits for the token on stdin. */
    waiting?: AgentChild,
  ): Promise<ProcessResult> {
    return new Promise((resolve) => {
      const notStarted = (error: unknown) => resolve(notStartedResult(startFailure(launch.command, error)));
      // Where it starts: the sandbox's host while the sandbox runs, else this process.
      const started = waiting
        ? Promise.resolve(waiting)
        : startInGroup(start.command, start.args, { cwd: launch.cwd, env: start.env, starter: start.starter });
      started
        .then((child) => this.follow(active, launch, child, start, token, waiting !== undefined, resolve), notStarted)
        .catch((error: unknown) => {
          log.error('could not follow an agent process', { turnId: active.turnId, error: String(error) });
          notStarted(error);
        });
    });
  }

  /** Writes the agent's input and reads its output until its tree is gone, then resolves with what it did. */
  private follow(
    active: ActiveTurn,
    launch: AgentLaunch,
    child: AgentChild,
    start: { command: string },
    token: string,
    waiting: boolean,
    resolve: (result: ProcessResult) => void,
  ): void {
    const { pid, stdin, stdout: out, stderr: err } = child;
    if (pid === undefined || !stdin || !out || !err) {
      resolve(notStartedResult(startFailure(launch.command, new Error('its pipes are missing'))));
      return;
    }
    child.on('error', (error) => log.warn('agent process error', { turnId: active.turnId, error: String(error) }));
    let stdout = '';
    let stderr = '';
    let truncated = false;
    let lineBuffer = '';
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
      if (child.exitCode !== null || child.signalCode !== null)
        done({ code: child.exitCode, signal: child.signalCode });
      else child.once('exit', (code, signal) => done({ code, signal }));
    });
    active.exited = exit.then(() => undefined);
    stdin.on('error', () => {
      // The agent may exit without reading its input; that is its business.
    });
    // Input first: the agent can start while we record its pid. The token goes first to
    // the sandbox's shell waiting for it, or to a worker of Parley's that reads it.
    stdin.end(waiting || launch.readsTokenFirst ? `${token}\n${launch.stdin}` : launch.stdin);
    const wrapped = start.command !== launch.command;
    active.tree = new ProcessTree(pid, active.marker, wrapped ? [launch.command, ...launch.args] : null);
    try {
      setTurnProcess(this.deps.db, active.turnId, pid, processStartTime(pid));
    } catch (error) {
      // Only crash recovery reads it (to end a stale process tree); the turn goes on.
      log.warn('could not record the agent process', { turnId: active.turnId, error: String(error) });
    }
    // A stop (or the close) asked for before the process existed takes effect now.
    if (stopReason(active.phase) !== null || this.closed) void this.endTree(active);
    out.setEncoding('utf8');
    err.setEncoding('utf8');
    out.on('data', (chunk: string) => {
      // Anything past the cap, even a chunk that starts exactly at it, marks the output as cut.
      if (stdout.length + chunk.length > this.deps.maxOutput) {
        stdout += chunk.slice(0, Math.max(0, this.deps.maxOutput - stdout.length));
        truncated = true;
      } else stdout += chunk;
      lineBuffer += chunk;
      let newline: number;
      while ((newline = lineBuffer.indexOf('\n')) >= 0) {
        const line = lineBuffer.slice(0, newline);
        lineBuffer = lineBuffer.slice(newline + 1);
        this.onLine(active, launch, line);
      }
    });
    err.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-64 * 1024);
    });
    // A sandbox started ahead paused its stdout once it said it was ready.
    out.resume();
    const drained = Promise.all([closed(out), closed(err)]);
    void exit.then(async ({ code, signal }) => {
      // Whatever the agent left running ends with its turn.
      if (active.tree!.alive(true)) await this.endTree(active);
      else await active.ending;
      // Nothing of the tree is left, so what it wrote is in the pipes: read it, but do
      // not wait on a pipe someone outside the tree still holds open.
      await Promise.race([drained, delay(stopReason(active.phase) === null ? PIPE_DRAIN_MS : STOPPED_PIPE_DRAIN_MS)]);
      out.destroy();
      err.destroy();
      if (lineBuffer) this.onLine(active, launch, lineBuffer);
      lineBuffer = '';
      resolve({ code, signal, stdout, stderr, truncated, ...(child.lost ? { lost: child.lost } : {}) });
    });
  }

  /** Ends the turn's process tree (once, however many ask). */
  endTree(active: ActiveTurn, graceMs = this.deps.graceMs): Promise<void> {
    if (!active.tree) return Promise.resolve();
    active.ending ??= endTree(active.tree, graceMs, active.exited, { leaderFirst: active.leaderFirst });
    return active.ending;
  }

  private onLine(active: ActiveTurn, launch: AgentLaunch, line: string): void {
    let update: StreamUpdate | void;
    try {
      update = launch.onLine?.(line);
    } catch (error) {
      log.warn('an adapter could not read a line of its agent', { turnId: active.turnId, error: String(error) });
      return;
    }
    if (!update) return;
    if (update.fail !== undefined && active.phase.name === 'working') {
      // The agent cannot succeed (a refused key, say): end it now rather than let it retry.
      active.phase = nextPhase(active.phase, { type: 'fail', failure: update.fail });
      void this.endTree(active);
    }
    if (update.model !== undefined) {
      this.watchModel(active, launch, update.model);
      const retrying =
        update.model === 'retrying'
          ? (update.live ?? active.retrying)
          : update.model === 'answered'
            ? null
            : active.retrying;
      if (retrying !== active.retrying) {
        active.retrying = retrying;
        // A live line follows (or the model answered): people watching hear of it with that.
        if (update.live === undefined) this.deps.changed(active.run);
      }
    }
    if (update.session !== undefined && update.session !== active.session) {
      active.session = update.session;
      try {
        setRunSession(this.deps.db, active.run.id, update.session);
      } catch (error) {
        // Kept in memory and saved with the turn's end.
        log.warn('could not record the agent session yet', { runId: active.run.id, error: String(error) });
      }
    }
    if (update.live !== undefined) {
      active.live.push(update.live);
      if (active.live.length > LIVE_LINES) active.live.shift();
      // People watching see live output at most twice a second, not once per line.
      if (!active.liveTimer) {
        active.liveTimer = setTimeout(() => {
          active.liveTimer = null;
          if (this.deps.isActive(active.turnId)) this.deps.changed(active.run);
        }, LIVE_EVENT_MS);
        active.liveTimer.unref();
      }
    }
  }

  /** An agent that cannot reach its model fails its turn at the role's model timeout, not minutes later. */
  private watchModel(active: ActiveTurn, launch: AgentLaunch, signal: ModelSignal): void {
    const limit = launch.modelTimeout;
    if (!limit) return;
    const before = deadline(active.modelWatch, limit.limitSec * 1000);
    active.modelWatch = observe(active.modelWatch, signal, Date.now());
    const at = deadline(active.modelWatch, limit.limitSec * 1000);
    if (at === before) return;
    if (active.modelTimer) clearTimeout(active.modelTimer);
    active.modelTimer = null;
    if (at === null) return;
    active.modelTimer = setTimeout(
      () => {
        active.modelTimer = null;
        if (active.phase.name !== 'working') return;
        active.phase = nextPhase(active.phase, { type: 'fail', failure: limit.fail() });
        void this.endTree(active);
      },
      Math.max(0, at - Date.now()),
    );
    active.modelTimer.unref();
  }
}
