// Agent conversations in memory, by their three keys: the row id here, the wire
// thread ID (connection, thread ID) the receiver knows them by, and the sender key of
// ADR 0035 — (connection, root, sending role, recipient role) — a send looks up.
import type { ContextKind } from '../../shared/domain';
import type { Db } from '../store/database';
import { getThread, lastSeq, openLocalThread, threadByWireId, type ThreadRow } from '../store/queries/threads';
import type { WireCounters } from './wire-counters';

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
 * Agent conversations kept in memory so a text does not read its thread's row again.
 * Rows are loaded on first use, inside the caller's transaction, and changed by the
 * engine as it writes them. Anything that changes rows behind the cache's back —
 * closing, pausing, revoking, a rolled-back group commit — calls `clear()`, and the
 * next use loads them again.
 */
export class ThreadCache {
  private readonly byId = new Map<number, ThreadState>();
  /** By connection, then wire thread ID: no key string made per text. */
  private readonly byWire = new Map<number, Map<string, ThreadState>>();
  /**
   * Open, locally started threads by the sender key of ADR 0035, filed by their root's id:
   * a root has a handful of them, and a send looks one up without making a key string.
   */
  private readonly bySender = new Map<number, ThreadState[]>();

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
    this.byWire.get(row.connection_id)?.delete(row.wire_id);
    const ofRoot = this.bySender.get(row.root_id);
    const at = ofRoot?.indexOf(state) ?? -1;
    if (ofRoot && at >= 0) {
      ofRoot.splice(at, 1);
      if (ofRoot.length === 0) this.bySender.delete(row.root_id);
    }
  }

  byRowId(id: number): ThreadState | undefined {
    return this.byId.get(id) ?? this.load(getThread(this.db, id));
  }

  byWireId(connectionId: number, wireId: string): ThreadState | undefined {
    return this.byWire.get(connectionId)?.get(wireId) ?? this.load(threadByWireId(this.db, connectionId, wireId));
  }

  /** The open, locally started thread of a sender key. */
  openLocal(
    connectionId: number,
    rootKind: ContextKind,
    rootId: number,
    localRoleId: number,
    peerRole: string,
  ): ThreadState | undefined {
    const ofRoot = this.bySender.get(rootId);
    if (ofRoot)
      for (const state of ofRoot) {
        const row = state.row;
        if (
          row.status === 'open' &&
          row.connection_id === connectionId &&
          row.root_kind === rootKind &&
          row.local_role_id === localRoleId &&
          row.peer_role === peerRole
        )
          return state;
      }
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
    let ofConnection = this.byWire.get(row.connection_id);
    if (ofConnection === undefined) this.byWire.set(row.connection_id, (ofConnection = new Map<string, ThreadState>()));
    ofConnection.set(row.wire_id, state);
    if (row.status === 'open' && row.started_by === 'local' && row.local_role_id !== null) {
      const ofRoot = this.bySender.get(row.root_id);
      if (ofRoot) ofRoot.push(state);
      else this.bySender.set(row.root_id, [state]);
    }
    return state;
  }

  /**
   * The thread's last seq one way. Kept in memory rather than in the thread's row: one
   * write less per text, and with many agent conversations the rows' pages would be a
   * scattered page per text in every commit.
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
