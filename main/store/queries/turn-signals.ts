import type { Db } from '../database';
import { all, run } from '../sql';

/** A turn state a peer has not acknowledged yet, with its agent conversation's wire ID. */
export interface TurnSignalRow {
  thread_id: number;
  wire_id: string;
  seq: number;
  state: 'working' | 'stopped' | 'failed' | 'ended' | 'relayed';
  /** JSON array of PEER/ROLE, for `relayed`. */
  waiting_on: string | null;
}

/** The latest state of a thread's turn replaces any the peer has not acknowledged. */
export function keepTurnSignal(
  db: Db,
  threadRowId: number,
  seq: number,
  state: TurnSignalRow['state'],
  waitingOn: string[] | null,
): void {
  run(
    db,
    `INSERT INTO turn_signals (thread_id, seq, state, waiting_on) VALUES (?, ?, ?, ?)
     ON CONFLICT (thread_id) DO UPDATE SET seq = excluded.seq, state = excluded.state,
       waiting_on = excluded.waiting_on, created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
    threadRowId,
    seq,
    state,
    waitingOn ? JSON.stringify(waitingOn) : null,
  );
}

/** What waits for a connection's peer, oldest first. */
export function turnSignalsOf(db: Db, connectionId: number): TurnSignalRow[] {
  return all<TurnSignalRow>(
    db,
    `SELECT turn_signals.thread_id, threads.wire_id, turn_signals.seq, turn_signals.state, turn_signals.waiting_on
     FROM turn_signals JOIN threads ON threads.id = turn_signals.thread_id
     WHERE threads.connection_id = ? ORDER BY turn_signals.created_at, turn_signals.thread_id`,
    connectionId,
  );
}

/** The peer has it (or it is no longer to be sent): only when it is still that state, so a newer one stays. */
export function dropTurnSignal(db: Db, threadRowId: number, seq: number, state: string): void {
  run(db, 'DELETE FROM turn_signals WHERE thread_id = ? AND seq = ? AND state = ?', threadRowId, seq, state);
}

/** The peer acknowledged the state of a thread, named by its wire ID on that connection. */
export function ackTurnSignal(db: Db, connectionId: number, wireId: string, seq: number, state: string): number {
  return run(
    db,
    `DELETE FROM turn_signals WHERE seq = ? AND state = ?
       AND thread_id = (SELECT id FROM threads WHERE connection_id = ? AND wire_id = ?)`,
    seq,
    state,
    connectionId,
    wireId,
  ).changes;
}

/** Nothing more goes to that peer (revoked). */
export function dropTurnSignalsOf(db: Db, connectionId: number): void {
  run(db, 'DELETE FROM turn_signals WHERE thread_id IN (SELECT id FROM threads WHERE connection_id = ?)', connectionId);
}
