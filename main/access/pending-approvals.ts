// The approvals waiting for a person, as the app API and the attention list show them:
// who may read each and who decides it are the access rules', so the list is made here
// over the store's rows rather than in the store.
import { REMEMBER_SCOPES, type ApprovalView, type ContextKind, type ContextRef } from '../../shared/domain';
import { decideRemember } from './allow-rules';
import type { Db } from '../store/database';
import type { ApprovalRow } from '../store/queries/approvals';
import { all, get } from '../store/sql';
import { APPROVAL_AUDIENCE, APPROVAL_PLACE_JOINS, audiencesOf } from './approval-readers';
import { approvalTarget } from './lookup';
import { approvalDeciders, inAudience, type Viewer } from './rules';

/**
 * The approvals still waiting that `viewer` may read, oldest first, at most `limit`: who
 * reads each is decided in the statement (./approval-readers.ts), before the limit,
 * so what others may not read never takes a reader's places in the list. It is
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
  const deciders = approvalDeciders(target);
  const canDecide = row.state === 'pending' && inAudience(viewer, deciders);
  // "Always allow" is about a peer role: only what belongs to an agent conversation offers it.
  const canRemember =
    canDecide && thread !== null
      ? REMEMBER_SCOPES.filter((scope) => decideRemember(viewer, deciders, scope).allowed)
      : [];
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
    canDecide,
    canRemember,
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
