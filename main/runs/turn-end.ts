// How a turn ends once its agent's process is gone: what it came to, and its end written
// with its output or failure where people see them, or, in an agent conversation, with
// what follows from it (the reply guard's reply, or the note that an answer arrived).
import type { AgentLaunch, ProcessResult, TurnOutcome } from '../agents/types';
import { log } from '../log';
import { transaction, type Db } from '../store/database';
import {
  appendTurnOutput,
  endTurn,
  finishStoppedTurn,
  getRun,
  setRunSession,
  turnStatus,
  type RunRow,
} from '../store/queries/runs';
import type { ActiveTurn } from './active-turn';
import type { DurableWrites } from './durable-writes';
import { deliverOutput, postNotice } from './run-lines';
import type { ThreadHooks } from './thread-hooks';
import { failureOf, stopReason } from './turn-phase';

/** What writing a turn's end needs of the run manager. */
export interface EndWriter {
  db: Db;
  /** Writes that wait for the disk to take them. */
  durable: DurableWrites;
  /** Read when the end is written: the engine's hooks, once it gave them. */
  hooks(): ThreadHooks | null;
  /** People watching the run are told it changed. */
  changed(run: RunRow): void;
}

/**
 * The turn's process is gone: its end is written (a stopped one's keeps its session), and
 * a turn given texts that sent no answer back has its asker hear how it ended.
 */
export async function recordEnd(
  ends: EndWriter,
  active: ActiveTurn,
  launch: AgentLaunch,
  result: ProcessResult,
): Promise<void> {
  const { run, turnId } = active;
  const what = `the end of turn ${turnId}`;
  if (stopReason(active.phase) !== null) {
    await ends.durable.durably(what, () => commitStopped(ends, active));
    return;
  }
  const outcome = turnOutcome(active, launch, result);
  await ends.durable.durably(what, async () => {
    if (turnStatus(ends.db, turnId) !== 'running') return;
    if (!(await endWithFollowUp(ends.db, ends.hooks(), active, outcome, (changed) => ends.changed(changed))))
      commitEnd(ends, run, turnId, outcome, active.session);
  });
  // No answer went back: the asker hears how it ended, or that the turn relayed the
  // question and waits on those asks (their answer comes down the chain, or a notice
  // that they ended unanswered starts a turn here that answers).
  if ((active.texts > 0 || active.answers) && !active.sent.has('replied') && !active.sent.has('reported'))
    ends.hooks()?.turnState(run, turnId, active.sent.has('relayed') ? 'relayed' : outcome.ok ? 'ended' : 'failed');
}

/** The stopped turn's process is gone: the turn ends, keeping the session. */
function commitStopped(ends: EndWriter, active: ActiveTurn): void {
  if (!getRun(ends.db, active.run.id)) return;
  transaction(ends.db, () => {
    if (active.session !== null) setRunSession(ends.db, active.run.id, active.session);
    finishStoppedTurn(ends.db, active.turnId);
  });
  ends.changed(active.run);
}

/** The turn's end, unless its run was deleted meanwhile. */
export function commitEnd(
  ends: EndWriter,
  run: RunRow,
  turnId: number,
  result: TurnOutcome,
  session: string | null,
): void {
  if (!getRun(ends.db, run.id)) return;
  transaction(ends.db, () => writeEnd(ends.db, run, turnId, result, session));
  ends.changed(run);
}

/** What a turn that was not stopped came to. */
export function turnOutcome(active: ActiveTurn, launch: AgentLaunch, result: ProcessResult): TurnOutcome {
  if (result.notStarted !== undefined) return { ok: false, error: result.notStarted };
  const failure = failureOf(active.phase);
  if (failure !== null) return { ok: false, error: failure };
  if (result.lost !== undefined)
    return { ok: false, error: `${result.lost} while the agent ran: the agent was ended with it` };
  try {
    return launch.finish(result);
  } catch (error) {
    return { ok: false, error: `Parley could not read the agent’s output: ${(error as Error).message}` };
  }
}

/**
 * The end of a turn in an agent conversation that was given texts from the peer
 * (DESIGN §11.7), committed in one transaction with what follows from it. In one the
 * peer started, a turn that did not reply has its final output sent as the reply
 * (unless it relayed the question: the answer comes back down the chain, and the
 * relay is not revealed); one that cannot be sent (the budget, a paused connection,
 * too long) leaves a note in the run log instead. In one rooted elsewhere (an answer came back) nothing is
 * ever sent back by itself; if the turn passed nothing on, the root shows that the
 * answer arrived. False when there is nothing to follow (the caller commits the end).
 */
export async function endWithFollowUp(
  db: Db,
  hooks: ThreadHooks | null,
  active: ActiveTurn,
  outcome: TurnOutcome,
  /** People watching the run are told it changed. */
  changed: (run: RunRow) => void,
): Promise<boolean> {
  const context = active.context;
  const { run, turnId } = active;
  if (run.context_kind !== 'thread' || !hooks || !context || (active.texts === 0 && !active.answers)) return false;
  if (!getRun(db, run.id)) return false;
  let follow: ((alongside: () => void) => Promise<unknown>) | null = null;
  if (context.peerStarted) {
    if (!active.sent.has('replied') && !active.sent.has('relayed') && outcome.ok && outcome.output.trim())
      follow = (alongside) => hooks.replyWithOutput(run, turnId, outcome.output, alongside);
  } else if (!active.sent.has('reported')) follow = (alongside) => hooks.answerArrived(run, turnId, outcome, alongside);
  if (!follow) return false;
  // Written inside the engine's commit, and again there if that commit is rerun: only while the turn is open.
  const end = () => {
    if (turnStatus(db, turnId) === 'running') writeEnd(db, run, turnId, outcome, active.session);
  };
  try {
    await follow(end);
    // The reply guard's text is the answer.
    if (context.peerStarted) active.sent.add('replied');
  } catch (error) {
    const reason = (error as Error).message ?? String(error);
    if (context.peerStarted)
      transaction(db, () => {
        end();
        appendTurnOutput(db, turnId, `\n\n[Parley did not send this as the reply: ${reason}]`);
      });
    else log.warn('could not show that an answer arrived', { turnId, error: reason });
  }
  // Nothing was written with it (the root was gone, or it failed): the end on its own.
  if (turnStatus(db, turnId) === 'running') transaction(db, end);
  changed(run);
  return true;
}

/** Inside a transaction: the turn's end, its session, and its output or failure where people see them. */
export function writeEnd(db: Db, run: RunRow, turnId: number, result: TurnOutcome, session: string | null): void {
  if (result.ok) {
    const next = result.session !== undefined ? result.session : session;
    setRunSession(db, run.id, next);
    endTurn(db, turnId, 'done', result.output, null);
    if (result.output.trim()) deliverOutput(db, run, turnId, result.output);
  } else {
    if (session !== null) setRunSession(db, run.id, session);
    endTurn(db, turnId, 'failed', null, result.error);
    postNotice(db, run, `The agent failed: ${result.error}`);
  }
}
