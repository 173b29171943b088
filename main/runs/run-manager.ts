// Runs and turns. Inputs to a context are committed as pending; when the context's
// run is idle a turn starts with everything pending, as one agent process in its own
// process group. At most `maxConcurrentTurns` processes run at once; the rest wait in
// the order their work arrived.
//
// Stop is committed before the first signal: what the turn was given counts as
// handled, what waited (text that arrived meanwhile, notices) is held for the next
// turn, and a notice tells the agent. Then the process tree ends and the session is
// kept. Nothing but new work — a text, a person's message — starts the agent again;
// notices for a stopped run wait with the rest.
//
// This is the facade over a turn's life; its steps are in files named for them: the
// start (./turn-start, ./agent-start), the stop (./turn-stop), the end (./turn-end).
import { chmodSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { ContextRef } from '../../shared/domain';
import type { AgentContext } from '../agents/types';
import { log } from '../log';
import type { Db } from '../store/database';
import { transaction } from '../store/database';
import { getRole } from '../store/queries/roles';
import {
  getRun,
  insertInput,
  runnableRuns,
  runningTurns,
  findRun,
  ensureRun,
  lastTurnStopped,
  type InputKind,
  type RunRow,
} from '../store/queries/runs';
import { isStorageFailure } from '../store/storage-errors';
import { newToken } from '../tokens';
import type { ActiveTurn, TurnAction } from './active-turn';
import { AgentProcesses } from './agent-process';
import { notStartedResult, startOf, turnToWrap } from './agent-start';
import { DurableWrites } from './durable-writes';
import { PermissionRequests } from './permission-requests';
import { recoverInterrupted } from './recover-interrupted';
import { tellChanged } from './run-changed';
import { describeRun } from './run-context';
import type { ThreadHooks } from './thread-hooks';
import { commitEnd, recordEnd, type EndWriter } from './turn-end';
import { nextPhase, stopIsCommitted, stopReason } from './turn-phase';
import { claimInputs, newActiveTurn, prepareLaunch, type PreparedTurn } from './turn-start';
import { commitStop, holdUnstarted, timeLimitReason } from './turn-stop';
import { mountPointsLeft } from '../sandbox/sandbox';
import type { RunManagerOptions } from './run-options';
import { endStarted, startedFor, WrapsAhead } from './wraps-ahead';

export type { TurnAction } from './active-turn';
export type { ThreadHooks } from './thread-hooks';
export { agentEnvironment, startFailure } from './agent-start';
export type { RunManagerOptions } from './run-options';

export class RunManager {
  private readonly db: Db;
  private readonly active = new Map<number, ActiveTurn>();
  private readonly max: number;
  private readonly timeoutSec: number;
  private readonly graceMs: number;
  private readonly maxOutput: number;
  private pumpScheduled = false;
  private threadHooks: ThreadHooks | null = null;
  private closed = false;
  /** Turns' private files (MCP configs, system prompts): `DATA/turns`. */
  private readonly privateDir: string;
  /** Writes waiting for the disk to take them (a turn's end, a turn's start). */
  private readonly durable: DurableWrites;
  /** The agents' processes: spawned, read, ended. */
  private readonly processes: AgentProcesses;
  /** Agents' requests to use a tool, waiting for a person; they last as long as their turn. */
  readonly permissions: PermissionRequests;
  /** Runs' next turns, wrapped in the sandbox when their last one ended. */
  private readonly aheads = new WrapsAhead();
  /** Ended turns whose end is still being written (and their next turn wrapped). */
  private readonly ending = new Set<Promise<void>>();
  /** What writing a turn's end needs (./turn-end). */
  private readonly ends: EndWriter;

  constructor(private readonly options: RunManagerOptions) {
    this.db = options.db;
    this.permissions = new PermissionRequests(options.db, options.events, options.permissionTimeoutMs);
    this.max = options.maxConcurrentTurns ?? 4;
    this.timeoutSec = options.defaultTurnTimeoutSec ?? 30 * 60;
    this.graceMs = options.stopGraceMs ?? 2_000;
    this.maxOutput = options.maxOutputBytes ?? 1024 * 1024;
    this.durable = new DurableWrites(
      () => this.closed,
      () => this.schedule(),
    );
    this.processes = new AgentProcesses({
      db: options.db,
      maxOutput: this.maxOutput,
      graceMs: this.graceMs,
      isActive: (turnId) => this.active.has(turnId),
      changed: (run) => this.changed(run),
    });
    this.ends = {
      db: options.db,
      durable: this.durable,
      hooks: () => this.threadHooks,
      changed: (run) => this.changed(run),
    };
    mkdirSync(options.workDir, { recursive: true, mode: 0o700 });
    this.privateDir = options.turnsDir ?? path.join(path.dirname(path.resolve(options.workDir)), 'turns');
    mkdirSync(this.privateDir, { recursive: true, mode: 0o700 });
    chmodSync(this.privateDir, 0o700);
    // What turns cut off by a crash left behind: no turn of ours runs yet, and their tokens are dead.
    for (const entry of readdirSync(this.privateDir))
      rmSync(path.join(this.privateDir, entry), { recursive: true, force: true });
  }

  /** Recovers from an earlier crash, then starts whatever work is waiting. */
  async start(): Promise<void> {
    this.permissions.recover();
    for (const turn of runningTurns(this.db))
      await recoverInterrupted(this.db, turn, this.graceMs, (run, turnId) =>
        this.threadHooks?.turnState(run, turnId, 'ended'),
      );
    this.schedule();
  }

  /**
   * Commits an input for a context's run (inside the caller's transaction when there
   * is one) and schedules a turn for after the commit. A notice for a run whose last
   * turn was stopped does not wake it: it waits for new work.
   */
  addInput(
    context: ContextRef,
    roleId: number,
    kind: InputKind,
    body: string,
    from: string,
    wakes = kind !== 'notice',
    /** The turn that takes it answers for it (see InputRow.answers). */
    answers = false,
  ): number {
    const run = ensureRun(this.db, context, roleId);
    const wakesNow = wakes && !(kind === 'notice' && lastTurnStopped(this.db, run.id));
    const id = insertInput(this.db, run.id, kind, body, from, wakesNow, answers);
    if (wakesNow) this.schedule();
    return id;
  }

  /**
   * New work was committed outside `addInput`: texts received in an agent conversation
   * wait as texts until a turn takes them (see `runnableRuns`).
   */
  wake(): void {
    this.schedule();
  }

  /** The connection engine describes agent conversations and knows who may see them. */
  setThreadHooks(hooks: ThreadHooks): void {
    this.threadHooks = hooks;
  }

  /** Turn ids of turns whose stop is in progress, for run summaries. */
  stoppingTurns(): ReadonlySet<number> {
    return new Set(
      [...this.active.values()].filter((turn) => stopReason(turn.phase) !== null).map((turn) => turn.turnId),
    );
  }

  /** Turn ids of running turns whose agent retries its model, with the line saying so, for run summaries. */
  retryingTurns(): ReadonlyMap<number, string> {
    const retrying = new Map<number, string>();
    for (const turn of this.active.values()) if (turn.retrying !== null) retrying.set(turn.turnId, turn.retrying);
    return retrying;
  }

  /** The last lines an agent printed in its current turn. */
  liveOutput(runId: number): string[] {
    for (const turn of this.active.values()) if (turn.run.id === runId) return [...turn.live];
    return [];
  }

  /**
   * Stops the run's agent: its process tree is gone and the turn is committed as
   * stopped when this resolves. A run waiting for a turn holds what waited instead:
   * it goes to the next turn, which new work starts.
   */
  async stop(context: ContextRef, stoppedBy: string): Promise<{ stopped: boolean }> {
    const signal = transaction(this.db, () => this.stopInTransaction([context], stoppedBy));
    return { stopped: await signal() };
  }

  /**
   * Inside the caller's transaction: commits the stop of these contexts' agents, and
   * returns what to call right after the commit, which signals them and resolves (true
   * if anything was stopped) once their processes are gone. Deleting a root commits its
   * stops in the transaction that deletes it.
   */
  stopInTransaction(
    contexts: ContextRef[],
    stoppedBy: string,
    /** What the agent and people are told, when it is not a plain stop (a peer's withdrawal). */
    reason = `Stopped by ${stoppedBy}`,
  ): () => Promise<boolean> {
    const turns: ActiveTurn[] = [];
    const runIds: number[] = [];
    let held = false;
    for (const context of contexts) {
      const run = findRun(this.db, context);
      if (!run) continue;
      runIds.push(run.id);
      const active = this.activeTurnOf(run.id);
      if (active) {
        if (turns.includes(active)) continue;
        if (!stopIsCommitted(active.phase)) commitStop(this.db, this.permissions, active, reason);
        turns.push(active);
      } else if (holdUnstarted(this.db, run, stoppedBy)) {
        held = true;
        this.changedAfterCommit(run);
      }
    }
    return async () => {
      // Deleted with its context: its next turn will not come.
      this.aheads.dropWhere((runId) => runIds.includes(runId) && !getRun(this.db, runId));
      for (const turn of turns) turn.phase = nextPhase(turn.phase, { type: 'stop-committed', reason });
      await Promise.all(turns.map((turn) => this.signalStop(turn, reason)));
      return held || turns.length > 0;
    };
  }

  private activeTurnOf(runId: number): ActiveTurn | undefined {
    for (const turn of this.active.values()) if (turn.run.id === runId) return turn;
    return undefined;
  }

  /**
   * Ends running agents without committing their end: the next start re-runs them once.
   * `graceMs` (default: the stop grace) is their time between SIGTERM and SIGKILL.
   */
  async close(graceMs = this.graceMs): Promise<void> {
    this.closed = true;
    this.processes.close();
    this.durable.close();
    this.permissions.close();
    const turns = [...this.active.values()];
    await Promise.all(
      turns.map(async (turn) => {
        if (turn.timer) clearTimeout(turn.timer);
        await this.processes.endTree(turn, graceMs);
      }),
    );
    await this.aheads.close();
  }

  /**
   * Resolves once no turn's end is being written and every next turn wrapped ahead is
   * made and started, waiting: what a person's next message finds when they answer after
   * a moment.
   */
  async quiet(): Promise<void> {
    while (this.ending.size > 0) await Promise.all(this.ending);
    await this.aheads.made();
  }

  private schedule(): void {
    if (this.pumpScheduled || this.closed) return;
    this.pumpScheduled = true;
    // After the caller's transaction commits, and before any timer.
    queueMicrotask(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.closed || this.options.startTurns === false) return;
    const free = this.max - this.active.size;
    if (free <= 0) return;
    if (this.db.inTransaction) {
      // Still inside someone's transaction: wait for it to end.
      setImmediate(() => this.schedule());
      return;
    }
    for (const runId of runnableRuns(this.db, free)) {
      try {
        this.startTurn(runId);
      } catch (error) {
        if (!isStorageFailure(error)) {
          log.error('could not start a turn', { runId, error: String(error) });
          continue;
        }
        // Its inputs wait, committed; the turn starts once the disk takes writes again.
        log.warn('could not start a turn: the disk refused the write; trying again', { runId, error: String(error) });
        this.durable.later(() => this.schedule());
        return;
      }
    }
  }

  private startTurn(runId: number): void {
    const run = getRun(this.db, runId);
    if (!run) return;
    const token = newToken('prt');
    const { turnId, inputs, attempt } = claimInputs(this.db, run, token);
    const role = getRole(this.db, run.role_id);
    // The run's next turn made ahead comes with its folder; it is released, and the process
    // started with it ended, if it does not serve.
    const next = this.options.sandbox ? this.aheads.take(run.id) : undefined;
    if (this.options.sandbox) this.aheads.turnMoment();
    const ahead = next?.ahead;
    // The turn's own temporary folder (TMPDIR, and its adapter's private files); gone with the turn.
    const runTmp = ahead?.tmpDir ?? path.join(this.privateDir, `turn-${turnId}`);
    let prepared: PreparedTurn;
    try {
      prepared = prepareLaunch(
        this.db,
        this.options,
        { describe: (run) => this.describeContext(run), peers: () => this.threadHooks?.peers() ?? [] },
        { run, role, inputs, token, runTmp },
      );
    } catch (error) {
      rmSync(runTmp, { recursive: true, force: true });
      if (next) void endStarted(next).then(() => next.ahead.release());
      void this.durable.durably(`the end of turn ${turnId}`, () =>
        commitEnd(this.ends, run, turnId, { ok: false, error: (error as Error).message }, null),
      );
      if (inputs.some((input) => input.kind === 'text' || input.answers === 1))
        this.threadHooks?.turnState(run, turnId, 'failed');
      return;
    }
    const { launch } = prepared;
    const active = newActiveTurn(turnId, run, token, prepared, inputs);
    this.active.set(turnId, active);
    if (active.texts > 0 || active.answers) this.threadHooks?.turnState(run, turnId, 'working');
    const toWrap = turnToWrap(prepared.role, prepared.trust, active.context, launch, runTmp);
    let sandboxed = false;
    const startedFits = async (env: NodeJS.ProcessEnv) => !!next && (await startedFor(next, env)) !== null;
    active.settled = startOf(this.options.sandbox, toWrap, ahead, startedFits)
      .then((start) => {
        // `startedAhead` says the process `startedFits` found serves.
        const waiting = start.kind === 'start' && start.startedAhead ? next?.started?.take() : undefined;
        // What was started for it and does not serve goes.
        if (next && !waiting) void endStarted(next);
        if (start.kind === 'refused') return notStartedResult(start.reason);
        sandboxed = start.sandboxed === true;
        // Its wrap made mount points: they go once no wrap is held, so none is held ahead meanwhile.
        if (sandboxed && mountPointsLeft()) void this.aheads.dropAll();
        return this.processes.run(active, launch, start, token, waiting).finally(start.release);
      })
      .then(async (result) => {
        rmSync(runTmp, { recursive: true, force: true });
        if (active.timer) clearTimeout(active.timer);
        if (active.modelTimer) clearTimeout(active.modelTimer);
        this.active.delete(turnId);
        if (this.closed) return;
        // Its process is gone: nothing it asked for waits any more.
        this.endPermissions(turnId);
        await recordEnd(this.ends, active, launch, result);
      })
      .catch((error: unknown) => log.error('could not record the end of a turn', { turnId, error: String(error) }))
      .finally(() => {
        // Its end is written: the run's next turn is wrapped once the turns settle, not when it starts.
        if (sandboxed && !this.closed && this.options.sandbox)
          this.aheads.prepareWhenSettled(
            this.options.sandbox,
            run.id,
            toWrap,
            this.privateDir,
            (id) => !!getRun(this.db, id),
          );
        this.ending.delete(active.settled);
        this.schedule();
      });
    this.ending.add(active.settled);
    const limitSec = prepared.role.agent.turnTimeoutSec ?? this.timeoutSec;
    active.timer = setTimeout(() => {
      this.stopTurn(active, timeLimitReason(limitSec)).catch((error: unknown) =>
        log.error('could not stop a turn at its time limit', { turnId, error: String(error) }),
      );
    }, limitSec * 1000);
    active.timer.unref();
    this.changed(run);
    if (attempt > 0) log.info('re-running an interrupted turn', { turnId, runId });
  }

  /** Commits the stop, then signals the agent and waits until its end is committed. */
  private async stopTurn(active: ActiveTurn, reason: string): Promise<void> {
    if (!stopIsCommitted(active.phase)) {
      transaction(this.db, () => commitStop(this.db, this.permissions, active, reason));
      active.phase = nextPhase(active.phase, { type: 'stop-committed', reason });
    }
    await this.signalStop(active, reason);
  }

  /** After the stop is committed: ends the process tree (SIGTERM, SIGKILL after the grace). */
  private async signalStop(active: ActiveTurn, reason: string): Promise<void> {
    // Committed with the stop: the agent hears its requests are cancelled before its signal.
    active.answerPermissions();
    active.answerPermissions = () => {};
    if (stopReason(active.phase) === null) {
      active.phase = nextPhase(active.phase, { type: 'signalled', reason });
      this.changed(active.run);
      if (active.texts > 0 || active.answers) this.threadHooks?.turnState(active.run, active.turnId, 'stopped');
      await this.processes.endTree(active);
    }
    await active.settled;
  }

  /**
   * The turn's process is gone: its requests to use a tool are cancelled. Best effort: on
   * a full disk the rows stay pending until the next start cancels them, and no agent
   * waits for them either way.
   */
  private endPermissions(turnId: number): void {
    try {
      transaction(this.db, () => this.permissions.endTurnInTransaction(turnId, 'the agent’s turn ended'))();
    } catch (error) {
      log.warn('could not cancel the requests of a turn that ended', { turnId, error: String(error) });
    }
  }

  /** The role API tells what a running turn sent (see `afterThreadTurn`). */
  noteTurnAction(turnId: number, action: TurnAction): void {
    const active = this.active.get(turnId);
    if (!active) return;
    active.sent.add(action);
  }

  /** Ends agents whose context was deleted under them (a turn that started while a delete waited). */
  async reapOrphans(): Promise<void> {
    this.aheads.dropWhere((runId) => !getRun(this.db, runId));
    const orphans = [...this.active.values()].filter((turn) => !getRun(this.db, turn.run.id));
    await Promise.all(orphans.map((turn) => this.stopTurn(turn, 'Stopped: its conversation or task was deleted')));
  }

  /** What a run works on, as told to its agent and returned by `parley context`. */
  describeContext(run: RunRow): AgentContext {
    return describeRun(this.db, run, this.threadHooks ? (thread) => this.threadHooks!.describe(thread) : null);
  }

  /** Inside a transaction: `changed` once it has committed. */
  private changedAfterCommit(run: RunRow): void {
    queueMicrotask(() => this.changed(run));
  }

  private changed(run: RunRow): void {
    tellChanged(this.db, this.options.events, this.threadHooks, run);
  }
}
