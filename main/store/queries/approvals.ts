// What waits for a person (DESIGN §11.9): a held text, either way, or an agent's request
// to use a tool. A pending approval and its held text change together, in one
// transaction: the text is `held` exactly while its approval is `pending`.
import type { ApprovalKind, ApprovalState, ContextKind, ContextRef } from '../../../shared/domain';
import type { Db } from '../database';
import { all, get, insert, run } from '../sql';
import { WAITING_ON_CONNECTION } from './threads';

export interface ApprovalRow {
  id: number;
  kind: ApprovalKind;
  context_kind: ContextKind;
  context_id: number;
  text_id: number | null;
  run_id: number | null;
  turn_id: number | null;
  title: string;
  detail: string | null;
  state: ApprovalState;
  reason: string | null;
  decided_by: number | null;
  decided_by_name: string | null;
  created_at: string;
  decided_at: string | null;
}

export function insertApproval(
  db: Db,
  values: {
    kind: ApprovalKind;
    context: ContextRef;
    textId?: number;
    runId: number | null;
    turnId?: number | null;
    title?: string;
    detail?: unknown;
  },
): number {
  return insert(
    db,
    `INSERT INTO approvals (kind, context_kind, context_id, text_id, run_id, turn_id, title, detail)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    values.kind,
    values.context.kind,
    values.context.id,
    values.textId ?? null,
    values.runId,
    values.turnId ?? null,
    values.title ?? '',
    values.detail === undefined ? null : JSON.stringify(values.detail),
  );
}

export function getApproval(db: Db, id: number): ApprovalRow | undefined {
  return get<ApprovalRow>(db, 'SELECT * FROM approvals WHERE id = ?', id);
}

/**
 * Settles a pending approval: approved or denied by a person, or cancelled with a
 * reason. False when it no longer waited (decided meanwhile, or cancelled).
 */
export function settleApproval(
  db: Db,
  id: number,
  state: Exclude<ApprovalState, 'pending'>,
  by: { id: number | null; name: string } | null,
  reason: string | null = null,
): boolean {
  return (
    run(
      db,
      `UPDATE approvals SET state = ?, reason = ?, decided_by = ?, decided_by_name = ?,
         decided_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
       WHERE id = ? AND state = 'pending'`,
      state,
      reason,
      by?.id ?? null,
      by?.name ?? null,
      id,
    ).changes > 0
  );
}

/** Cancels the pending approvals of these texts (they failed or closed without a person's word). */
export function cancelTextApprovals(db: Db, textIds: readonly number[], reason: string): ApprovalRow[] {
  if (textIds.length === 0) return [];
  return all<ApprovalRow>(
    db,
    `UPDATE approvals SET state = 'cancelled', reason = ?, decided_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
     WHERE text_id IN (SELECT value FROM json_each(?)) AND state = 'pending' RETURNING *`,
    reason,
    JSON.stringify(textIds),
  );
}

/** Cancels a turn's pending permission requests (it ended, or was stopped). */
export function cancelTurnApprovals(db: Db, turnId: number, reason: string): ApprovalRow[] {
  return all<ApprovalRow>(
    db,
    `UPDATE approvals SET state = 'cancelled', reason = ?, decided_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
     WHERE turn_id = ? AND state = 'pending' AND kind = 'permission' RETURNING *`,
    reason,
    turnId,
  );
}

/** Cancels what waits in a context (a conversation or task being deleted). */
export function cancelContextApprovals(db: Db, context: ContextRef, reason: string): ApprovalRow[] {
  return all<ApprovalRow>(
    db,
    `UPDATE approvals SET state = 'cancelled', reason = ?, decided_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
     WHERE context_kind = ? AND context_id = ? AND state = 'pending' RETURNING *`,
    reason,
    context.kind,
    context.id,
  );
}

/** Cancels every pending permission request: after a restart no agent waits for one. */
export function cancelAllPermissionRequests(db: Db, reason: string): ApprovalRow[] {
  return all<ApprovalRow>(
    db,
    `UPDATE approvals SET state = 'cancelled', reason = ?, decided_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
     WHERE state = 'pending' AND kind = 'permission' RETURNING *`,
    reason,
  );
}

/** How many permission requests wait for a person in this turn, and in every running turn of its run. */
export function pendingPermissionCounts(db: Db, turnId: number, runId: number): { turn: number; run: number } {
  return get<{ turn: number; run: number }>(
    db,
    `SELECT
       (SELECT count(*) FROM approvals WHERE turn_id = ? AND state = 'pending' AND kind = 'permission') AS turn,
       (SELECT count(*) FROM approvals WHERE turn_id IN (SELECT id FROM turns WHERE run_id = ? AND status = 'running')
          AND state = 'pending' AND kind = 'permission') AS run`,
    turnId,
    runId,
  )!;
}

/**
 * Inside a transaction, as a connection is revoked: a peer's texts that were let in (or
 * never held) but that no turn has taken never reach an agent now. They count as handled
 * with `reason`, their waiting input rows with them, and an approval that let one in is
 * recorded as cancelled, saying why (`approvalReason`): the person's word is kept, but it
 * did not bring the text to the agent. Returns those approvals, for their change events.
 */
export function dropUntakenIncoming(
  db: Db,
  connectionId: number,
  reason: string,
  approvalReason: string,
): ApprovalRow[] {
  const ids = JSON.stringify(
    all<{ id: number }>(
      db,
      `SELECT texts.id FROM ${WAITING_ON_CONNECTION} AND texts.state = 'received' AND texts.direction = 'in'
         AND NOT EXISTS (SELECT 1 FROM inputs WHERE inputs.text_id = texts.id AND inputs.state != 'pending')`,
      connectionId,
    ).map((row) => row.id),
  );
  if (ids === '[]') return [];
  run(db, "UPDATE inputs SET state = 'handled' WHERE text_id IN (SELECT value FROM json_each(?))", ids);
  run(
    db,
    `UPDATE texts SET state = 'handled', reason = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
     WHERE id IN (SELECT value FROM json_each(?))`,
    reason,
    ids,
  );
  return all<ApprovalRow>(
    db,
    `UPDATE approvals SET state = 'cancelled', reason = ?
     WHERE text_id IN (SELECT value FROM json_each(?)) AND state = 'approved' RETURNING *`,
    approvalReason,
    ids,
  );
}

/** The connection a held text's approval belongs to (its name, status and who revoked it). */
export function approvalConnection(
  db: Db,
  approvalId: number,
): { name: string; status: string; revoked_by: 'us' | 'peer' | null } | undefined {
  return get(
    db,
    `SELECT connections.name, connections.status, connections.revoked_by FROM approvals
     JOIN texts ON texts.id = approvals.text_id JOIN threads ON threads.id = texts.thread_id
     JOIN connections ON connections.id = threads.connection_id WHERE approvals.id = ?`,
    approvalId,
  );
}
