// The engine's per-text checks without per-text scans (added for the wire benchmark,
// issue 3). Each send and each received text checks a limit — the connection's queue
// limit both ways, the agent conversation's hourly budget — and each ack looks for the
// agent conversation's next text to put on the wire. Done with plain queries these
// walk a thread's or a connection's whole history (the texts index is (thread_id,
// direction, seq); the partial index on waiting states is not usable for `state IN
// (...)` lists), so a long agent conversation got slower with every text.
//
// Counts are kept here as upper bounds: raised when the engine inserts a text, never
// lowered (texts stop waiting in many places — acks, rejections, pauses, turns that end
// in the run manager — and none needs to tell us). A bound below the limit proves the
// true count is below it; at the limit the true count is taken again. A rolled-back
// insert leaves the bound too high, which is safe. The result of every check is what
// the plain query would have said.
import type { ContextKind } from '../../shared/domain';
import type { Db } from '../store/database';
import {
  getThread,
  lastSeq,
  openLocalThread,
  threadByWireId,
  type TextRow,
  type ThreadRow,
} from '../store/queries/threads';
import { get } from '../store/sql';

export class WireCounters {
  /** Per connection: an upper bound of outgoing texts queued or sent. */
  private readonly outgoing = new Map<number, number>();
  /** Per connection: an upper bound of incoming texts received and not yet handled. */
  private readonly incoming = new Map<number, number>();
  /** Per agent conversation: an upper bound of texts it sent in the last hour. */
  private readonly lastHour = new Map<number, number>();
  /**
   * Per agent conversation: every outgoing text with a lower seq is acked or failed.
   * Texts never go back to queued or sent, and thread rows are never deleted (so an id
   * is never reused), so this only grows.
   */
  private readonly deliveredBelow = new Map<number, number>();

  constructor(private readonly db: Db) {}

  /** The connection has `limit` or more outgoing texts waiting to be sent or acked. */
  outgoingFull(connectionId: number, limit: number): boolean {
    return atLimit(this.outgoing, connectionId, limit, () => countWaiting(this.db, connectionId, 'out'));
  }

  /** The connection has `limit` or more incoming texts not yet handled by an agent. */
  incomingFull(connectionId: number, limit: number): boolean {
    return atLimit(this.incoming, connectionId, limit, () => countWaiting(this.db, connectionId, 'in'));
  }

  /** The agent conversation has sent `budget` or more texts in the last hour. */
  overBudget(threadRowId: number, budget: number): boolean {
    return atLimit(this.lastHour, threadRowId, budget, () => sentInLastHour(this.db, threadRowId, budget));
  }

  /** Call after inserting an outgoing text. */
  addedOutgoing(connectionId: number, threadRowId: number): void {
    bump(this.outgoing, connectionId);
    bump(this.lastHour, threadRowId);
  }

  /** Call after inserting an incoming text. */
  addedIncoming(connectionId: number): void {
    bump(this.incoming, connectionId);
  }

  /** A text the engine put on the wire knowing every earlier one was delivered. */
  claimed(threadRowId: number, seq: number): void {
    if ((this.deliveredBelow.get(threadRowId) ?? 0) < seq) this.deliveredBelow.set(threadRowId, seq);
  }

  /** After a rolled-back group commit: what was learnt inside it may be wrong. */
  forgetDelivered(): void {
    this.deliveredBelow.clear();
  }

  /** Outgoing texts of an agent conversation still to be delivered: from its first one on, not its history. */
  countUndelivered(threadRowId: number): number {
    return get<{ n: number }>(
      this.db,
      "SELECT count(*) AS n FROM texts WHERE thread_id = ? AND direction = 'out' AND seq >= ? AND state IN ('queued', 'sent')",
      threadRowId,
      this.deliveredBelow.get(threadRowId) ?? 0,
    )!.n;
  }

  /** The oldest outgoing text of an agent conversation still to be delivered (sent and unacked, or queued). */
  nextUndelivered(threadRowId: number): TextRow | undefined {
    const from = this.deliveredBelow.get(threadRowId) ?? 0;
    const text = get<TextRow>(
      this.db,
      "SELECT * FROM texts WHERE thread_id = ? AND direction = 'out' AND seq >= ? AND state IN ('queued', 'sent') ORDER BY seq LIMIT 1",
      threadRowId,
      from,
    );
    if (text && text.seq > from) this.deliveredBelow.set(threadRowId, text.seq);
    return text;
  }
}

function atLimit(bounds: Map<number, number>, key: number, limit: number, count: () => number): boolean {
  const bound = bounds.get(key);
  if (bound !== undefined && bound < limit) return false;
  const exact = count();
  bounds.set(key, exact);
  return exact >= limit;
}

function bump(bounds: Map<number, number>, key: number): void {
  const bound = bounds.get(key);
  // Unknown stays unknown: the next check counts.
  if (bound !== undefined) bounds.set(key, bound + 1);
}

/**
 * Waiting texts of one direction over a connection. The repeated `state IN (...)`
 * term is the partial index's own condition, which lets SQLite use texts_waiting: the
 * cost is the number of waiting texts, not the history.
 */
function countWaiting(db: Db, connectionId: number, direction: 'out' | 'in'): number {
  return direction === 'out'
    ? get<{ n: number }>(
        db,
        `SELECT count(*) AS n FROM texts JOIN threads ON threads.id = texts.thread_id
         WHERE texts.state IN ('queued', 'sent', 'received') AND texts.state IN ('queued', 'sent')
           AND texts.direction = 'out' AND threads.connection_id = ?`,
        connectionId,
      )!.n
    : get<{ n: number }>(
        db,
        `SELECT count(*) AS n FROM texts JOIN threads ON threads.id = texts.thread_id
         WHERE texts.state IN ('queued', 'sent', 'received') AND texts.state = 'received'
           AND texts.direction = 'in' AND threads.connection_id = ?`,
        connectionId,
      )!.n;
}

/**
 * Texts the agent conversation sent in the last hour, counting at most `budget` of its
 * latest: seqs rise with time, so if the latest `budget` are not all within the hour,
 * fewer than `budget` are.
 */
function sentInLastHour(db: Db, threadRowId: number, budget: number): number {
  return get<{ n: number }>(
    db,
    `SELECT count(*) AS n FROM (
       SELECT created_at FROM texts WHERE thread_id = ? AND direction = 'out' ORDER BY seq DESC LIMIT ?
     ) WHERE created_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 hour')`,
    threadRowId,
    Math.min(budget, Number.MAX_SAFE_INTEGER),
  )!.n;
}

/**
 * An agent conversation as the engine's hot paths see it: its row, its seqs and what it
 * knows about its outgoing texts, kept current by the engine as it writes.
 */
export interface ThreadState {
  row: ThreadRow;
  /** The last seq sent or received, read from the texts on first use. */
  outSeq?: number;
  inSeq?: number;
  /** Outgoing texts queued or sent; undefined when not known (counted when needed). */
  undelivered?: number;
  /** The run that takes its incoming texts, once known. */
  runId?: number;
}

/**
 * Agent conversations kept in memory so a text does not read its thread's row again
 * (added for the wire benchmark, issue 3). Rows are loaded on first use, inside the
 * caller's transaction, and changed by the engine as it writes them. Anything that
 * changes rows behind the cache's back — closing, pausing, revoking, a rolled-back
 * group commit — calls `clear()`, and the next use loads them again.
 */
export class ThreadCache {
  private readonly byId = new Map<number, ThreadState>();
  private readonly byWire = new Map<string, ThreadState>();
  /** Open, locally started threads by the sender key of ADR 0035. */
  private readonly bySender = new Map<string, ThreadState>();

  constructor(private readonly db: Db) {}

  clear(): void {
    this.byId.clear();
    this.byWire.clear();
    this.bySender.clear();
  }

  /** Drops one thread (its row changed behind the cache's back). */
  forget(state: ThreadState): void {
    const row = state.row;
    this.byId.delete(row.id);
    this.byWire.delete(wireKey(row.connection_id, row.wire_id));
    if (row.local_role_id !== null)
      this.bySender.delete(senderKey(row.connection_id, row.root_kind, row.root_id, row.local_role_id, row.peer_role));
  }

  byRowId(id: number): ThreadState | undefined {
    return this.byId.get(id) ?? this.load(getThread(this.db, id));
  }

  byWireId(connectionId: number, threadId: string): ThreadState | undefined {
    return (
      this.byWire.get(wireKey(connectionId, threadId)) ?? this.load(threadByWireId(this.db, connectionId, threadId))
    );
  }

  /** The open, locally started thread of a sender key. */
  openLocal(
    connectionId: number,
    rootKind: ContextKind,
    rootId: number,
    localRoleId: number,
    peerRole: string,
  ): ThreadState | undefined {
    const state = this.bySender.get(senderKey(connectionId, rootKind, rootId, localRoleId, peerRole));
    if (state) return state;
    return this.load(openLocalThread(this.db, connectionId, rootKind, rootId, localRoleId, peerRole));
  }

  /** A row just read afresh: replaces what the cache knew of that thread. */
  reload(row: ThreadRow): ThreadState {
    const known = this.byId.get(row.id);
    if (known) this.forget(known);
    return this.load(row)!;
  }

  /** A row just read or inserted (inside the current transaction). */
  load(row: ThreadRow | undefined): ThreadState | undefined {
    if (!row) return undefined;
    const known = this.byId.get(row.id);
    if (known) return known;
    // A bound on memory: past it, start over (rows load again on use).
    if (this.byId.size >= MAX_CACHED_THREADS) this.clear();
    const state: ThreadState = { row };
    this.byId.set(row.id, state);
    this.byWire.set(wireKey(row.connection_id, row.wire_id), state);
    if (row.status === 'open' && row.started_by === 'local' && row.local_role_id !== null)
      this.bySender.set(
        senderKey(row.connection_id, row.root_kind, row.root_id, row.local_role_id, row.peer_role),
        state,
      );
    return state;
  }

  /**
   * The thread's last seq one way. Kept in memory rather than in the thread's row: one
   * write less per text, and at 1000 agent conversations the rows' pages were a scattered
   * page per text in every commit (wire benchmark, issue 3).
   */
  lastSeq(state: ThreadState, direction: 'out' | 'in'): number {
    if (direction === 'out') return (state.outSeq ??= lastSeq(this.db, state.row.id, 'out'));
    return (state.inSeq ??= lastSeq(this.db, state.row.id, 'in'));
  }

  /** Outgoing texts of the thread queued or sent, counted once and then kept by the engine. */
  undelivered(state: ThreadState, counters: WireCounters): number {
    state.undelivered ??= counters.countUndelivered(state.row.id);
    return state.undelivered;
  }
}

const MAX_CACHED_THREADS = 100_000;

const wireKey = (connectionId: number, threadId: string) => `${connectionId} ${threadId}`;
const senderKey = (connectionId: number, rootKind: string, rootId: number, roleId: number, peerRole: string) =>
  `${connectionId} ${rootKind} ${rootId} ${roleId} ${peerRole}`;
