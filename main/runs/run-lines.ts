// What a run posts where people read it: a turn's final output, and Parley's notices
// about its agent. Inside the caller's transaction; the run manager tells people after.
import { linePlace, PARLEY_AUTHOR, roleAuthor, writeLine } from '../posting/post-line';
import type { Db } from '../store/database';
import { roleRefById } from '../store/queries/roles';
import type { RunRow } from '../store/queries/runs';

/** A turn's final output goes to its context (agent conversations: the run log only). */
export function deliverOutput(db: Db, run: RunRow, turnId: number, output: string): void {
  const place = linePlace({ kind: run.context_kind, id: run.context_id });
  if (!place) return;
  const author = roleAuthor({ id: run.role_id, name: roleRefById(db, run.role_id)?.name ?? 'role' });
  writeLine(db, place, { author, text: output, entry: 'output', turnId });
}

/** Something people should see happened to the agent: a stop, a failure. */
export function postNotice(db: Db, run: RunRow, text: string): void {
  const place = linePlace({ kind: run.context_kind, id: run.context_id });
  if (place) writeLine(db, place, { author: PARLEY_AUTHOR, text, entry: 'notice' });
}
