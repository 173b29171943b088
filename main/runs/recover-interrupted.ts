// A turn that was working when Parley stopped: its stale processes are ended, and it is
// finished (its stop was committed), dropped (what it was given is held, or it was
// interrupted twice), or run once more with a notice to its agent.
import type { Db } from '../store/database';
import { transaction } from '../store/database';
import {
  dropInterrupted,
  endTurn,
  finishStoppedTurn,
  getRun,
  heldAfterCrash,
  insertInput,
  requeueInterrupted,
  type RunRow,
  type TurnRow,
} from '../store/queries/runs';
import { endStaleGroup } from './process-tree';
import { postNotice } from './run-lines';

export async function recoverInterrupted(
  db: Db,
  turn: TurnRow,
  graceMs: number,
  /** The peer that asked is told the turn ended (its texts go unanswered). */
  ended: (run: RunRow, turnId: number) => void,
): Promise<void> {
  if (turn.pid !== null) await endStaleGroup(turn.pid, turn.proc_start, graceMs);
  const run = getRun(db, turn.run_id);
  let dropped = false;
  transaction(db, () => {
    if (!run) return;
    // Stopped before the crash: the stop was committed, only its end was not.
    if (turn.reason !== null) {
      finishStoppedTurn(db, turn.id);
      return;
    }
    const held = heldAfterCrash(db, run);
    if (held) {
      dropInterrupted(db, turn.id, `Parley stopped while this turn was working; not run again: ${held}`);
      dropped = true;
      return;
    }
    if (turn.attempt === 0) {
      // Re-run once: its inputs wait again, still pointing at the interrupted turn.
      requeueInterrupted(db, turn.id, 'Parley stopped while this turn was working; it runs again once');
      insertInput(
        db,
        run.id,
        'notice',
        'Parley was restarted while your previous turn was working. You are given the same request again; check what you already did before repeating it.',
        'parley',
        false,
      );
    } else {
      endTurn(db, turn.id, 'interrupted', null, 'Parley stopped while this turn was working again; not re-run');
      postNotice(db, run, 'Parley stopped twice while the agent worked on this request; it was dropped.');
      dropped = true;
    }
  });
  // Whoever asked heard `working`; nothing will answer it now.
  if (dropped && run?.context_kind === 'thread') ended(run, turn.id);
}
