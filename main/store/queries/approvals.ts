// What waits for a person (DESIGN §11.9): a held text, either way, or an agent's request
// to use a tool. A pending approval and its held text change together, in one
// transaction: the text is `held` exactly while its approval is `pending`.
import type { ApprovalKind, ApprovalState, ApprovalView, ContextKind, ContextRef } from '../../../shared/domain';
import { APPROVAL_AUDIENCE, APPROVAL_PLACE_JOINS, audiencesOf } from '../../access/approval-readers';
import { approvalTarget } from '../../access/lookup';
import { approvalDeciders, inAudience, type Viewer } from '../../access/rules';
import type { Db } from '../database';
import { all, get, insert, run } from '../sql';

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

/**
 * The approvals still waiting that `viewer` may read, oldest first, at most `limit`: who
 * reads each is decided in the statement (../../access/approval-readers), before the
 * limit, so what others may not read never takes a reader's places in the list. It is
 * decided once per place where approvals wait rather than per row: a flood waits in few
 * places, so the cost follows those, and a row then costs one lookup in the readable set.
 */
export function pendingApprovalRows(db: Db, viewer: Viewer, limit = 1000): ApprovalRow[] {
  return all<ApprovalRow>(db, PENDING_FOR_VIEWER, ...audiencesOf(viewer), limit);
}

/** Its statement (its plan is pinned in access/approval-readers.test.ts). */
export const PENDING_FOR_VIEWER = `WITH readable AS (
    SELECT a.context_kind, a.context_id
    FROM (SELECT DISTINCT context_kind, context_id FROM approvals WHERE state = 'pending') a ${APPROVAL_PLACE_JOINS}
    WHERE ${APPROVAL_AUDIENCE} IN (?, ?, ?))
  SELECT a.* FROM approvals a
  WHERE a.state = 'pending' AND (a.context_kind, a.context_id) IN readable
  ORDER BY a.id LIMIT ?`;

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

interface TextFacts {
  seq: number;
  body: string;
  direction: 'out' | 'in';
  thread_id: number;
  connection: string;
  peer_role: string;
  local_role: string;
  root_kind: ContextKind;
  root_id: number;
  root_gone: number;
}

const PREVIEW = 2_000;

/** An approval as the app API shows it to `viewer` (who may read it). */
export function approvalView(db: Db, row: ApprovalRow, viewer: Viewer): ApprovalView {
  const target = approvalTarget(db, row);
  let text: ApprovalView['text'] = null;
  let thread: ApprovalView['thread'] = null;
  let root: ContextRef = { kind: row.context_kind, id: row.context_id };
  let role = '';
  if (row.text_id !== null) {
    const facts = get<TextFacts>(
      db,
      `SELECT texts.seq, texts.body, texts.direction, texts.thread_id, connections.name AS connection,
              threads.peer_role, threads.local_role, threads.root_kind, threads.root_id, threads.root_gone
       FROM texts JOIN threads ON threads.id = texts.thread_id JOIN connections ON connections.id = threads.connection_id
       WHERE texts.id = ?`,
      row.text_id,
    );
    if (facts) {
      text = {
        id: row.text_id,
        seq: facts.seq,
        preview: facts.body.length > PREVIEW ? `${facts.body.slice(0, PREVIEW)}…` : facts.body,
      };
      thread = { id: facts.thread_id, peer: `${facts.connection}/${facts.peer_role}`, localRole: facts.local_role };
      root = { kind: facts.root_kind, id: facts.root_id };
      role = facts.local_role;
    }
  } else {
    role =
      get<{ name: string }>(
        db,
        'SELECT roles.name FROM runs JOIN roles ON roles.id = runs.role_id WHERE runs.id = ?',
        row.run_id ?? 0,
      )?.name ?? '';
    if (row.context_kind === 'thread') {
      const facts = get<{ root_kind: ContextKind; root_id: number; peer: string; local_role: string }>(
        db,
        `SELECT threads.root_kind, threads.root_id, threads.local_role, connections.name || '/' || threads.peer_role AS peer
         FROM threads JOIN connections ON connections.id = threads.connection_id WHERE threads.id = ?`,
        row.context_id,
      );
      if (facts) {
        thread = { id: row.context_id, peer: facts.peer, localRole: facts.local_role };
        root = { kind: facts.root_kind, id: facts.root_id };
      }
    }
  }
  return {
    id: row.id,
    kind: row.kind,
    state: row.state,
    context: { kind: row.context_kind, id: row.context_id },
    root,
    role,
    thread,
    text,
    title: row.title,
    detail: row.detail === null ? null : (JSON.parse(row.detail) as unknown),
    canDecide: row.state === 'pending' && inAudience(viewer, approvalDeciders(target)),
    reason: row.reason,
    decidedBy: row.decided_by_name,
    createdAt: row.created_at,
    decidedAt: row.decided_at,
  };
}

/**
 * What waits for a person's word, for one person: every pending approval they may read
 * (the access rules decide), oldest first, each saying whether it is theirs to decide.
 * The attention list reads this.
 */
export function pendingApprovalsFor(db: Db, viewer: Viewer): ApprovalView[] {
  return pendingApprovalRows(db, viewer).map((row) => approvalView(db, row, viewer));
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
      `SELECT texts.id FROM texts JOIN threads ON threads.id = texts.thread_id
       WHERE texts.state IN ('held', 'queued', 'sent', 'received') AND texts.state = 'received'
         AND texts.direction = 'in' AND threads.connection_id = ?
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
