// What a stop commits before its first signal: what the turn was given counts as
// handled, what waited is held for the next turn, and the agent and people hear of it.
import type { Db } from '../store/database';
import { getRun, holdWaitingWork, insertInput, markTurnStopping, type RunRow } from '../store/queries/runs';
import type { ActiveTurn } from './active-turn';
import type { PermissionRequests } from './permission-requests';
import { postNotice } from './run-lines';

/** Inside a transaction, before the first signal: the running turn's stop. */
export function commitStop(db: Db, permissions: PermissionRequests, active: ActiveTurn, reason: string): void {
  const run = getRun(db, active.run.id);
  // The context was deleted meanwhile: its run, turns and inputs went with it.
  if (!run) return;
  markTurnStopping(db, active.turnId, reason);
  active.answerPermissions = permissions.endTurnInTransaction(active.turnId, reason);
  holdWaitingWork(db, run);
  insertInput(
    db,
    run.id,
    'notice',
    `${reason.replace(/^Stopped by/, 'You were stopped by').replace(/^Withdrawn by/, 'Your work was withdrawn by')} before your previous turn finished. What you were given in it was dropped and will not be retried.`,
    'parley',
    false,
  );
  postNotice(db, run, `${reason}.`);
}

/**
 * Inside a transaction: the stop of a run whose agent has not started on what waits. It
 * is held for the next turn, which new work starts; false when nothing waited.
 */
export function holdUnstarted(db: Db, run: RunRow, stoppedBy: string): boolean {
  if (holdWaitingWork(db, run) === 0) return false;
  insertInput(
    db,
    run.id,
    'notice',
    `${stoppedBy} stopped you before you started on what follows; it waited until now.`,
    'parley',
    false,
  );
  postNotice(
    db,
    run,
    `Stopped by ${stoppedBy} before the agent started; what waited goes to it with the next message.`,
  );
  return true;
}

/** The stop's reason when a turn runs out its time. */
export function timeLimitReason(seconds: number): string {
  return `Stopped by the time limit (${formatDuration(seconds)})`;
}

function formatDuration(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
