// What withdrawals, declines and a peer's pause keep (migration 0024).
import type { Db } from '../database';
import { all, get, run } from '../sql';
import type { TextRow, ThreadRow } from './threads';

/** A withdrawal as the thread keeps it: up to which of the asker's seqs, by whom, when. */
export interface WithdrawalRow {
  withdrawn_seq: number | null;
  withdrawn_by: string | null;
  withdrawn_at: string | null;
  withdraw_untold: number;
}

/**
 * Agent conversations we started under a root whose latest ask has no answer yet: an
 * outgoing text not failed, later than any withdrawal, with no incoming text after it,
 * and not ended there (the peer's turn on it stopped, failed or ended: no work to take
 * back, and a stop there stays a stop).
 */
export function openAsksUnder(db: Db, rootKind: ThreadRow['root_kind'], rootId: number): ThreadRow[] {
  return all<ThreadRow>(
    db,
    `SELECT t.* FROM threads t
      WHERE t.root_kind = ? AND t.root_id = ? AND t.started_by = 'local'
        AND EXISTS (
          SELECT 1 FROM texts o
           WHERE o.thread_id = t.id AND o.direction = 'out' AND o.state != 'failed'
             AND o.seq > coalesce(t.withdrawn_seq, 0)
             AND NOT (coalesce(t.peer_turn IN ('stopped', 'failed', 'ended') AND t.peer_turn_seq >= o.seq, 0))
             AND NOT EXISTS (SELECT 1 FROM texts i WHERE i.thread_id = t.id AND i.direction = 'in' AND i.id > o.id))
      ORDER BY t.id`,
    rootKind,
    rootId,
  );
}

/** Whether the thread (one we started) has an ask that no answer has come for. */
export function hasOpenAsk(db: Db, thread: ThreadRow & Partial<WithdrawalRow>): boolean {
  return openAsksUnder(db, thread.root_kind, thread.root_id).some((t) => t.id === thread.id);
}

/** The newest seq we sent (or hold, or queue) in a thread. */
export function lastOutSeq(db: Db, threadRowId: number): number {
  return (
    get<{ seq: number | null }>(
      db,
      "SELECT max(seq) AS seq FROM texts WHERE thread_id = ? AND direction = 'out'",
      threadRowId,
    )?.seq ?? 0
  );
}

/** The newest seq the peer sent in a thread. */
export function lastInSeq(db: Db, threadRowId: number): number {
  return (
    get<{ seq: number | null }>(
      db,
      "SELECT max(seq) AS seq FROM texts WHERE thread_id = ? AND direction = 'in'",
      threadRowId,
    )?.seq ?? 0
  );
}

/** Records a withdrawal; `untold`: ours, to be sent to the peer until it says it noted it. */
export function recordWithdrawal(db: Db, threadRowId: number, seq: number, by: string, untold: boolean): void {
  run(
    db,
    "UPDATE threads SET withdrawn_seq = ?, withdrawn_by = ?, withdrawn_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), withdraw_untold = ? WHERE id = ?",
    seq,
    by,
    untold ? 1 : 0,
    threadRowId,
  );
}

/** The peer noted our withdrawal up to `seq`: it need not go again (a newer one still does). */
export function withdrawalNoted(db: Db, threadRowId: number, seq: number): boolean {
  return (
    run(
      db,
      'UPDATE threads SET withdraw_untold = 0 WHERE id = ? AND withdraw_untold = 1 AND withdrawn_seq <= ?',
      threadRowId,
      seq,
    ).changes > 0
  );
}

/** Withdrawals of ours the peer of a connection has not noted yet. */
export function untoldWithdrawals(db: Db, connectionId: number): Array<{ wire_id: string; withdrawn_seq: number }> {
  return all(
    db,
    'SELECT wire_id, withdrawn_seq FROM threads WHERE connection_id = ? AND withdraw_untold = 1 ORDER BY id',
    connectionId,
  );
}

/** A peer's texts of a thread that wait for a turn or a person, up to `seq`. */
export function waitingIncomingUpTo(db: Db, threadRowId: number, seq: number): TextRow[] {
  return all<TextRow>(
    db,
    "SELECT * FROM texts WHERE thread_id = ? AND direction = 'in' AND state IN ('received', 'held') AND seq <= ? ORDER BY seq",
    threadRowId,
    seq,
  );
}

/** A person here declined the peer's text: its sender is told, until it notes it. */
export function markDeclineUntold(db: Db, textId: number, untold: boolean): void {
  run(db, 'UPDATE texts SET decline_untold = ? WHERE id = ?', untold ? 1 : 0, textId);
}

/** Declines the peer of a connection has not noted yet. */
export function untoldDeclines(db: Db, connectionId: number): Array<{ id: number; wire_id: string; seq: number }> {
  return all(
    db,
    `SELECT texts.id, threads.wire_id, texts.seq FROM texts JOIN threads ON threads.id = texts.thread_id
      WHERE threads.connection_id = ? AND texts.decline_untold = 1 ORDER BY texts.id`,
    connectionId,
  );
}

export function declineNoted(db: Db, threadRowId: number, seq: number): void {
  run(
    db,
    "UPDATE texts SET decline_untold = 0 WHERE thread_id = ? AND direction = 'in' AND seq = ? AND decline_untold = 1",
    threadRowId,
    seq,
  );
}

/** The peer paused (a time) or unpaused (null) the connection. */
export function setPeerPaused(db: Db, connectionId: number, paused: boolean): void {
  // A peer's pause is news for the owners here, as when a text of ours was refused as paused.
  if (paused)
    run(
      db,
      "INSERT INTO attention_events (kind, object_kind, object_id) SELECT 'peer_paused', 'connection', id FROM connections WHERE id = ? AND peer_paused_at IS NULL AND status = 'active'",
      connectionId,
    );
  run(
    db,
    paused
      ? "UPDATE connections SET peer_paused_at = coalesce(peer_paused_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) WHERE id = ?"
      : 'UPDATE connections SET peer_paused_at = NULL WHERE id = ?',
    connectionId,
  );
}
