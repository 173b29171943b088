import type { ContextKind } from '../../../shared/domain';
import type { Db } from '../database';
import { all, allNamed, get, getWide, insert, run } from '../sql';

export interface ThreadRow {
  id: number;
  connection_id: number;
  /** The opaque thread ID both installations use on the wire (`id` is the row here). */
  wire_id: string;
  local_role_id: number | null;
  local_role: string;
  peer_role: string;
  root_kind: ContextKind;
  root_id: number;
  root_gone: number;
  started_by: 'local' | 'peer';
  status: 'open' | 'closed';
  close_reason: string | null;
  created_at: string;
  closed_at: string | null;
  /** Its newest text (texts.id), kept by a trigger: what thread lists order by. */
  last_text_id: number | null;
  /** How many of its texts are in each state, kept by triggers. */
  texts_held: number;
  texts_queued: number;
  texts_sent: number;
  texts_acked: number;
  texts_failed: number;
  texts_received: number;
  texts_handled: number;
  /** In a thread we started: what the peer last said of the turn that took our texts, up to `peer_turn_seq`. */
  peer_turn: TurnState | null;
  peer_turn_seq: number | null;
  peer_turn_at: string | null;
  /** Set when the peer said its turn ended waiting on asks of its own (`relayed`): the PEER/ROLE it named, JSON. */
  peer_relayed_on: string | null;
  /** Withdrawn up to this seq of the asker's texts, by whom and when (migration 0024); later texts continue it. */
  withdrawn_seq: number | null;
  withdrawn_by: string | null;
  withdrawn_at: string | null;
  /** 1: our withdrawal, which the peer has yet to note (it goes again on every link). */
  withdraw_untold: number;
}

export type TurnState = 'working' | 'stopped' | 'failed' | 'ended';

/** `held`: waiting for a person (either way); held outgoing texts keep their thread's later ones back. */
export type TextState = 'held' | 'queued' | 'sent' | 'acked' | 'failed' | 'received' | 'handled';
export interface TextRow {
  id: number;
  /** The agent conversation's row id (threads.id). */
  thread_id: number;
  direction: 'out' | 'in';
  seq: number;
  body: string;
  state: TextState;
  reason: string | null;
  /** Which side made an outgoing text fail: `us` (a pause, revoke or delete here) or the peer. */
  failed_by: FailedBy | null;
  /** Outgoing: the turn (turns.id) whose agent sent it; null when none did or it is not known. */
  sent_by_turn: number | null;
  created_at: string;
  updated_at: string | null;
}

/** A text as a list shows it: with, for an incoming one, the turn (turns.id) that was given it. */
export interface ListedTextRow extends TextRow {
  taken_by_turn: number | null;
  /** Who denied it, when a person did. */
  denied_by: string | null;
  /** Who let it through, when it was held and approved, or would have been and a rule of theirs allowed it. */
  approved_by: string | null;
  /** Whether that was an always-allow rule rather than a decision on this text. */
  approved_by_rule: 0 | 1;
}

export type FailedBy = 'us' | 'peer';

export function getThread(db: Db, id: number): ThreadRow | undefined {
  return getWide<ThreadRow>(db, 'SELECT * FROM threads WHERE id = ?', id);
}

export function threadByWireId(db: Db, connectionId: number, wireId: string): ThreadRow | undefined {
  return getWide<ThreadRow>(db, 'SELECT * FROM threads WHERE connection_id = ? AND wire_id = ?', connectionId, wireId);
}

export function openLocalThread(
  db: Db,
  connectionId: number,
  rootKind: ContextKind,
  rootId: number,
  localRoleId: number,
  peerRole: string,
): ThreadRow | undefined {
  return getWide<ThreadRow>(
    db,
    `SELECT * FROM threads WHERE connection_id = ? AND root_kind = ? AND root_id = ? AND local_role_id = ? AND peer_role = ?
       AND status = 'open' AND started_by = 'local'`,
    connectionId,
    rootKind,
    rootId,
    localRoleId,
    peerRole,
  );
}

export function insertThread(
  db: Db,
  values: {
    connectionId: number;
    wireId: string;
    localRoleId: number;
    localRole: string;
    peerRole: string;
    rootKind: ContextKind;
    rootId: number | null;
    startedBy: 'local' | 'peer';
  },
): ThreadRow {
  const id = insert(
    db,
    `INSERT INTO threads (connection_id, wire_id, local_role_id, local_role, peer_role, root_kind, root_id, started_by)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    values.connectionId,
    values.wireId,
    values.localRoleId,
    values.localRole,
    values.peerRole,
    values.rootKind,
    values.rootId ?? 0,
    values.startedBy,
  );
  // A thread the peer started is its own root.
  if (values.rootId === null) run(db, 'UPDATE threads SET root_id = id WHERE id = ?', id);
  return getThread(db, id)!;
}

export function closeThread(db: Db, id: number, reason: string): void {
  run(
    db,
    "UPDATE threads SET status = 'closed', close_reason = ?, closed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ? AND status = 'open'",
    reason,
    id,
  );
}

export function threadsByRoot(db: Db, rootKind: ContextKind, rootId: number): ThreadRow[] {
  return all<ThreadRow>(db, 'SELECT * FROM threads WHERE root_kind = ? AND root_id = ? ORDER BY id', rootKind, rootId);
}

/** The root was deleted; returns how many agent conversations it leaves behind. */
export function markRootGone(db: Db, rootKind: ContextKind, rootId: number): number {
  return run(db, 'UPDATE threads SET root_gone = 1 WHERE root_kind = ? AND root_id = ?', rootKind, rootId).changes;
}

/** What a deleted conversation or task was called, kept for the agent conversations it leaves. */
export function keepDeletedRootTitle(db: Db, kind: 'conversation' | 'task', id: number, title: string): void {
  run(db, 'INSERT OR REPLACE INTO deleted_roots (kind, id, title) VALUES (?, ?, ?)', kind, id, title);
}

export function threadsOfConnection(db: Db, connectionId: number): ThreadRow[] {
  return all<ThreadRow>(db, 'SELECT * FROM threads WHERE connection_id = ? ORDER BY id', connectionId);
}

/** The highest seq of a thread's texts one way (0 before the first): the next one out is this + 1. */
export function lastSeq(db: Db, threadRowId: number, direction: 'out' | 'in'): number {
  return (
    get<{ seq: number | null }>(
      db,
      'SELECT max(seq) AS seq FROM texts WHERE thread_id = ? AND direction = ?',
      threadRowId,
      direction,
    )!.seq ?? 0
  );
}

export function insertText(
  db: Db,
  threadRowId: number,
  direction: 'out' | 'in',
  seq: number,
  body: string,
  state: TextState,
  /** The turn whose agent sent an outgoing text, when a turn did. */
  sentByTurn: number | null = null,
): number {
  return insert(
    db,
    'INSERT INTO texts (thread_id, direction, seq, body, state, sent_by_turn) VALUES (?, ?, ?, ?, ?, ?)',
    threadRowId,
    direction,
    seq,
    body,
    state,
    sentByTurn,
  );
}

export function getText(db: Db, id: number): TextRow | undefined {
  return get<TextRow>(db, 'SELECT * FROM texts WHERE id = ?', id);
}

export function outText(db: Db, threadRowId: number, seq: number): TextRow | undefined {
  return get<TextRow>(
    db,
    "SELECT * FROM texts WHERE thread_id = ? AND direction = 'out' AND seq = ?",
    threadRowId,
    seq,
  );
}

export function setTextState(db: Db, id: number, state: TextState, reason: string | null = null): void {
  run(
    db,
    "UPDATE texts SET state = ?, reason = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
    state,
    reason,
    id,
  );
}

/** An outgoing text will not be delivered: why, and which side made it so. */
export function failText(db: Db, id: number, reason: string, by: FailedBy): void {
  run(
    db,
    "UPDATE texts SET state = 'failed', reason = ?, failed_by = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
    reason,
    by,
    id,
  );
}

/**
 * Marks outgoing texts acked, by id, those still waiting to be delivered; returns the ids
 * it changed. One statement for a batch of acks.
 */
export function ackTexts(db: Db, ids: number[]): number[] {
  return all<{ id: number }>(
    db,
    `UPDATE texts SET state = 'acked', reason = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
     WHERE id IN (SELECT value FROM json_each(?)) AND state IN ('sent', 'queued') RETURNING id`,
    JSON.stringify(ids),
  ).map((row) => row.id);
}

/**
 * The oldest outgoing text of a thread still to be delivered (sent and unacked, queued,
 * or held: a held one keeps the later ones back, so texts arrive in seq order).
 */
export function nextUndelivered(db: Db, threadRowId: number): TextRow | undefined {
  return get<TextRow>(
    db,
    "SELECT * FROM texts WHERE thread_id = ? AND direction = 'out' AND state IN ('held', 'queued', 'sent') ORDER BY seq LIMIT 1",
    threadRowId,
  );
}

/**
 * Per thread of a connection, the oldest undelivered outgoing text: what to (re)send
 * after a reconnect (a held one goes nowhere, and keeps its thread's later ones back).
 */
export function undeliveredHeads(db: Db, connectionId: number): TextRow[] {
  return all<TextRow>(
    db,
    `SELECT texts.* FROM ${WAITING_ON_CONNECTION} AND texts.direction = 'out' AND texts.state IN ('held', 'queued', 'sent')
       AND texts.seq = (SELECT min(seq) FROM texts AS t2 WHERE t2.thread_id = texts.thread_id AND t2.direction = 'out' AND t2.state IN ('held', 'queued', 'sent'))
     ORDER BY texts.id`,
    connectionId,
  );
}

/** Outgoing texts of a thread that never went out (queued or held): what fails when the thread closes. */
export function unsentTextsOfThread(db: Db, threadRowId: number): TextRow[] {
  return all<TextRow>(
    db,
    "SELECT * FROM texts WHERE thread_id = ? AND direction = 'out' AND state IN ('held', 'queued') ORDER BY seq",
    threadRowId,
  );
}

/** Incoming texts of a thread held for a person: never given to the agent once the thread closes. */
export function heldIncomingOfThread(db: Db, threadRowId: number): TextRow[] {
  return all<TextRow>(
    db,
    "SELECT * FROM texts WHERE thread_id = ? AND direction = 'in' AND state = 'held' ORDER BY seq",
    threadRowId,
  );
}

/**
 * What waits over a whole connection, as a query's FROM and first condition (its one
 * parameter, the connection): texts off the partial index texts_waiting, whose own
 * condition repeated lets SQLite use it, then each one's agent conversation. CROSS JOIN
 * keeps that order: left to choose, SQLite starts from the connection's agent
 * conversations and reads every text they ever had (half a second at 200,000).
 */
export const WAITING_ON_CONNECTION = `texts CROSS JOIN threads ON threads.id = texts.thread_id
  WHERE texts.state IN ('held', 'queued', 'sent', 'received') AND threads.connection_id = ?`;

/** Outgoing texts of a connection held, waiting to be sent or on the wire, oldest first. */
export function waitingOutgoing(db: Db, connectionId: number): TextRow[] {
  return all<TextRow>(
    db,
    `SELECT texts.* FROM ${WAITING_ON_CONNECTION}
       AND texts.state IN ('held', 'queued', 'sent') AND texts.direction = 'out' ORDER BY texts.id`,
    connectionId,
  );
}

/** Incoming texts of a connection held for a person, oldest first. */
export function heldIncoming(db: Db, connectionId: number): TextRow[] {
  return all<TextRow>(
    db,
    `SELECT texts.* FROM ${WAITING_ON_CONNECTION} AND texts.state = 'held' AND texts.direction = 'in' ORDER BY texts.id`,
    connectionId,
  );
}

/** An ack for a text that failed because the owner paused while it was on the wire: it arrived. */
export function markAckedAfterPause(db: Db, threadRowId: number, seq: number): void {
  run(
    db,
    "UPDATE texts SET state = 'acked', reason = NULL, failed_by = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE thread_id = ? AND direction = 'out' AND seq = ? AND state = 'failed' AND reason = 'paused' AND failed_by IS NOT 'peer'",
    threadRowId,
    seq,
  );
}

/**
 * The peer's agent took our texts up to `seq`, so they arrived: one that a pause here
 * failed while it was on the wire (its ack lost with the link) was delivered after all.
 */
export function markDeliveredUpTo(db: Db, threadRowId: number, seq: number): number {
  return run(
    db,
    "UPDATE texts SET state = 'acked', reason = NULL, failed_by = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE thread_id = ? AND direction = 'out' AND seq <= ? AND state = 'failed' AND reason = 'paused' AND failed_by IS NOT 'peer'",
    threadRowId,
    seq,
  ).changes;
}

/**
 * What the peer said of the turn that took our texts of a thread up to `seq`; `relayedOn`
 * (JSON) when it said `relayed`, which is stored as `working` beside the names.
 */
export function setPeerTurn(
  db: Db,
  threadRowId: number,
  state: TurnState,
  seq: number,
  relayedOn: string | null = null,
): void {
  run(
    db,
    "UPDATE threads SET peer_turn = ?, peer_turn_seq = ?, peer_turn_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), peer_relayed_on = ? WHERE id = ?",
    state,
    seq,
    relayedOn,
    threadRowId,
  );
}

/** The last seq of the peer's texts a turn was given (null: it was given none). */
export function lastSeqTakenBy(db: Db, turnId: number): number | null {
  return get<{ seq: number | null }>(
    db,
    'SELECT max(texts.seq) AS seq FROM inputs JOIN texts ON texts.id = inputs.text_id WHERE inputs.turn_id = ?',
    turnId,
  )!.seq;
}

/** Outgoing texts held, waiting to be sent or acked across a connection: what its queue limit bounds. */
export function outgoingWaiting(db: Db, connectionId: number): number {
  return get<{ n: number }>(
    db,
    `SELECT count(*) AS n FROM ${WAITING_ON_CONNECTION}
       AND texts.state IN ('held', 'queued', 'sent') AND texts.direction = 'out'`,
    connectionId,
  )!.n;
}

/** Incoming texts of a connection held for a person or not yet handled by an agent: what its queue limit counts. */
export function incomingWaiting(db: Db, connectionId: number): number {
  return get<{ n: number }>(
    db,
    `SELECT count(*) AS n FROM ${WAITING_ON_CONNECTION}
       AND texts.state IN ('held', 'received') AND texts.direction = 'in'`,
    connectionId,
  )!.n;
}

export function sentInLastHour(db: Db, threadRowId: number): number {
  return get<{ n: number }>(
    db,
    "SELECT count(*) AS n FROM texts WHERE thread_id = ? AND direction = 'out' AND created_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 hour')",
    threadRowId,
  )!.n;
}

/** How many texts of a thread are in each state (the thread keeps the counts). */
export function textCounts(db: Db, threadRowId: number): Record<TextState, number> {
  const row = getThread(db, threadRowId);
  return {
    held: row?.texts_held ?? 0,
    queued: row?.texts_queued ?? 0,
    sent: row?.texts_sent ?? 0,
    acked: row?.texts_acked ?? 0,
    failed: row?.texts_failed ?? 0,
    received: row?.texts_received ?? 0,
    handled: row?.texts_handled ?? 0,
  };
}

export function lastText(db: Db, threadRowId: number): TextRow | undefined {
  return get<TextRow>(
    db,
    'SELECT texts.* FROM threads JOIN texts ON texts.id = threads.last_text_id WHERE threads.id = ?',
    threadRowId,
  );
}

/**
 * The latest `limit` texts of a thread before the text `before`, oldest first. Within a
 * direction seq grows with id, so each direction's latest come from the (thread,
 * direction, seq) index in reverse and the two are merged: no sort of the whole thread,
 * and no index on (thread, id) for every text to write.
 */
export function listTexts(db: Db, threadRowId: number, limit = 500, before = Number.MAX_SAFE_INTEGER): ListedTextRow[] {
  const params = { thread: threadRowId, before, limit };
  // The turn that took an incoming text is its input's (one input per text; a requeued one waits again).
  return allNamed<ListedTextRow>(
    db,
    `SELECT page.*, CASE WHEN page.direction = 'in' THEN
         (SELECT inputs.turn_id FROM inputs WHERE inputs.text_id = page.id AND inputs.state != 'pending'
          ORDER BY inputs.id DESC LIMIT 1)
       END AS taken_by_turn,
       CASE WHEN page.reason = 'denied' THEN
         (SELECT approvals.decided_by_name FROM approvals WHERE approvals.text_id = page.id AND approvals.state = 'denied')
       END AS denied_by,
       approved.decided_by_name AS approved_by,
       -- An approval carries a reason only when an always-allow rule made it.
       approved.reason IS NOT NULL AS approved_by_rule
     FROM (
       SELECT * FROM (SELECT * FROM texts WHERE thread_id = @thread AND direction = 'out' AND id < @before
                      ORDER BY seq DESC LIMIT @limit)
       UNION ALL
       SELECT * FROM (SELECT * FROM texts WHERE thread_id = @thread AND direction = 'in' AND id < @before
                      ORDER BY seq DESC LIMIT @limit)
     ) AS page
     LEFT JOIN approvals AS approved ON approved.text_id = page.id AND approved.state = 'approved'
     ORDER BY page.id DESC LIMIT @limit`,
    params,
  ).reverse();
}

export type ThreadFilter = { root: { kind: ContextKind; id: number } } | { peerStarted: true } | { orphaned: true };

export interface HistoryRow extends TextRow {
  wire_thread: string;
  local_role: string;
  peer_role: string;
}

/** Everything between a local role and a peer role over one connection, every thread, in time order. */
export function historyBetween(db: Db, connectionId: number, localRoleId: number, peerRole: string): HistoryRow[] {
  return all<HistoryRow>(
    db,
    `SELECT texts.*, threads.wire_id AS wire_thread, threads.local_role, threads.peer_role
     FROM texts JOIN threads ON threads.id = texts.thread_id
     WHERE threads.connection_id = ? AND threads.local_role_id = ? AND threads.peer_role = ?
     ORDER BY texts.created_at, texts.id`,
    connectionId,
    localRoleId,
    peerRole,
  );
}
