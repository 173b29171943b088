// The engine's per-text checks without per-text scans. Each send and each received
// text checks a limit — the connection's queue limit both ways, the agent
// conversation's hourly budget — and each ack looks for the agent conversation's next
// text to put on the wire. Done with plain queries these walk a thread's or a
// connection's whole history (the texts index is (thread_id,
// direction, seq); the partial index on waiting states is not usable for `state IN
// (...)` lists), so a long agent conversation got slower with every text.
//
// Counts are kept here as upper bounds: raised when the engine inserts a text, never
// lowered (texts stop waiting in many places — acks, rejections, pauses, turns that end
// in the run manager — and none needs to tell us). A bound below the limit proves the
// true count is below it; at the limit the true count is taken again. A rolled-back
// insert leaves the bound too high, which is safe. The result of every check is what
// the plain query would have said.
import type { Db } from '../store/database';
import { incomingWaiting, outgoingWaiting, type TextRow } from '../store/queries/threads';
import { get } from '../store/sql';

export class WireCounters {
  /** Per connection: an upper bound of outgoing texts held, queued or sent. */
  private readonly outgoing = new Map<number, number>();
  /** Per connection: an upper bound of incoming texts held or received and not yet handled. */
  private readonly incoming = new Map<number, number>();
  /** Per agent conversation: an upper bound of texts it sent in the last hour. */
  private readonly lastHour = new Map<number, number>();
  /**
   * Per agent conversation: every outgoing text with a lower seq is acked or failed.
   * Texts never go back to held, queued or sent, and thread rows are never deleted (so
   * an id is never reused), so this only grows.
   */
  private readonly deliveredBelow = new Map<number, number>();

  constructor(private readonly db: Db) {}

  /** The connection has `limit` or more outgoing texts waiting to be approved, sent or acked. */
  outgoingFull(connectionId: number, limit: number): boolean {
    return below(this.outgoing, connectionId, limit)
      ? false
      : counted(this.outgoing, connectionId, limit, outgoingWaiting(this.db, connectionId));
  }

  /** The connection has `limit` or more incoming texts not yet approved or handled by an agent. */
  incomingFull(connectionId: number, limit: number): boolean {
    return below(this.incoming, connectionId, limit)
      ? false
      : counted(this.incoming, connectionId, limit, incomingWaiting(this.db, connectionId));
  }

  /** The agent conversation has sent `budget` or more texts in the last hour. */
  overBudget(threadRowId: number, budget: number): boolean {
    return below(this.lastHour, threadRowId, budget)
      ? false
      : counted(this.lastHour, threadRowId, budget, sentInLastHour(this.db, threadRowId, budget));
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

  /** Outgoing texts of an agent conversation still to be delivered (held ones too): from its first one on, not its history. */
  countUndelivered(threadRowId: number): number {
    return get<{ n: number }>(
      this.db,
      "SELECT count(*) AS n FROM texts WHERE thread_id = ? AND direction = 'out' AND seq >= ? AND state IN ('held', 'queued', 'sent')",
      threadRowId,
      this.deliveredBelow.get(threadRowId) ?? 0,
    )!.n;
  }

  /**
   * The oldest outgoing text of an agent conversation still to be delivered: sent and
   * unacked, queued, or held (which keeps the later ones back until a person decides).
   */
  nextUndelivered(threadRowId: number): TextRow | undefined {
    const from = this.deliveredBelow.get(threadRowId) ?? 0;
    const text = get<TextRow>(
      this.db,
      "SELECT * FROM texts WHERE thread_id = ? AND direction = 'out' AND seq >= ? AND state IN ('held', 'queued', 'sent') ORDER BY seq LIMIT 1",
      threadRowId,
      from,
    );
    if (text && text.seq > from) this.deliveredBelow.set(threadRowId, text.seq);
    return text;
  }
}

/** A known bound below the limit: the true count is below it too, with nothing to count. */
function below(bounds: Map<number, number>, key: number, limit: number): boolean {
  const bound = bounds.get(key);
  return bound !== undefined && bound < limit;
}

/** Keeps a count just taken as the bound, and says whether it is at the limit. */
function counted(bounds: Map<number, number>, key: number, limit: number, exact: number): boolean {
  bounds.set(key, exact);
  return exact >= limit;
}

function bump(bounds: Map<number, number>, key: number): void {
  const bound = bounds.get(key);
  // Unknown stays unknown: the next check counts.
  if (bound !== undefined) bounds.set(key, bound + 1);
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
