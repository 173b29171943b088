// Group commit: work queued in the same tick shares one transaction (one fsync).
// Each piece runs in its own savepoint, so one refusal does not undo the others; its
// promise settles only after the commit is on disk, and its after-commit actions
// (frames to send, agents to wake) run only if the commit happened.
//
// A piece that checks everything before it writes (`savepoint: false`) runs without a
// savepoint: it calls `tx.writing()` before its first write, and a refusal thrown
// before that has nothing to undo. Should it fail after writing, the whole batch is
// rolled back and run again with a savepoint per piece (SAVEPOINT and RELEASE would
// be two of a text's ~13 statements per side).
import { closeSync, existsSync, fdatasync, fdatasyncSync, openSync } from 'node:fs';
import { log } from '../log';
import type { Db } from '../store/database';
import { takeCarrierWrote } from './carrier-turn';

type After = (action: () => void) => void;

/** What a piece of a group commit can tell it. */
export interface Tx {
  /** Call before the piece's first write (pieces run with `savepoint: false` must). */
  writing(): void;
  /** Undoes a change the piece made in memory, should its writes be rolled back. */
  undo(action: () => void): void;
  /**
   * After the commit, like `after`, but once per commit for `kind` and `id`: a change
   * event that every text of a batch would send alike (a connection's counts) goes out
   * once. Returns whether this call is the one that will run.
   */
  afterOnce(kind: string, id: number, action: () => void): boolean;
  /**
   * `afterOnce` with its action made only by the call that claims the key: `make(source)`,
   * or nothing to run when it returns null. A commit of many texts claims the same key
   * for each; all but the first stop at the claim. Returns whether this call claimed it.
   */
  afterOnceFrom<S>(kind: string, id: number, source: S, make: (source: S) => (() => void) | null): boolean;
}

/** `afterOnce`'s action is its own making. */
const itself = (action: () => void): (() => void) => action;

/** The options of a piece that checks everything before it writes: no savepoint of its own. */
export const CHECKED_FIRST = { savepoint: false } as const;

/** Per kind, the ids whose `afterOnce` action waits for this commit, and the piece that claimed each. */
type OnceClaims = Map<string, Map<number, Piece>>;

interface Op {
  fn: (after: After, tx: Tx) => unknown;
  durable: boolean;
  savepoint: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * At most this many pieces share a commit; more wait for the next one, started at once.
 * A bounded batch sends its frames sooner, so the peer works on them while this side
 * commits the rest (at 1000 agent conversations ~6.5k → ~8.5k texts/s).
 */
const MAX_BATCH = 128;

/** A burst of fewer than twice this is committed whole: a split would gain less than a commit costs. */
const MIN_SPLIT = 32;

/** At most this many WAL flushes run at once (libuv's pool has four threads). */
const MAX_SYNCS = 3;

type Outcome = { ok: true; value: unknown; after: Array<() => void> } | { ok: false; error: unknown };

/**
 * One piece's view of its commit. An object with methods rather than closures: a batch
 * makes one per text, and the closures were a good part of what it allocated.
 */
class Piece implements Tx {
  wrote = false;
  readonly after: Array<() => void> = [];
  /** Undo actions, made when the piece has one. */
  own: Array<() => void> | null = null;
  /** Whether this piece claimed an `afterOnce` key. */
  claims = false;
  /** `after` for the piece's function. */
  readonly add = (action: () => void): void => {
    this.after.push(action);
  };

  constructor(
    /** The `afterOnce` actions already due after this commit. */
    private readonly once: OnceClaims,
  ) {}

  writing(): void {
    this.wrote = true;
  }

  undo(action: () => void): void {
    (this.own ??= []).push(action);
  }

  afterOnce(kind: string, id: number, action: () => void): boolean {
    return this.afterOnceFrom(kind, id, action, itself);
  }

  afterOnceFrom<S>(kind: string, id: number, source: S, make: (source: S) => (() => void) | null): boolean {
    let claimed = this.once.get(kind);
    if (claimed === undefined) this.once.set(kind, (claimed = new Map<number, Piece>()));
    else if (claimed.has(id)) return false;
    const action = make(source);
    if (action === null) return false;
    claimed.set(id, this);
    this.claims = true;
    this.after.push(action);
    return true;
  }

  /** The piece failed: its actions do not run, and a later piece may claim its keys. */
  release(): void {
    if (!this.claims) return;
    for (const claimed of this.once.values()) for (const [id, piece] of claimed) if (piece === this) claimed.delete(id);
  }
}

/** Thrown out of a batch's transaction to roll it back and run it again with savepoints. */
class Redo extends Error {}

export class GroupCommit {
  private ops: Op[] = [];
  private scheduled = false;
  private closed = false;

  /**
   * One op in its own savepoint. Made once: better-sqlite3 builds a new wrapper on every
   * db.transaction() call, which costs ~30 µs per text.
   */
  private readonly savepoint: (op: Op, after: After, tx: Tx) => unknown;
  /** A batch's transaction, made once for the same reason. */
  private readonly whole: { immediate(body: () => void): void };

  /**
   * Called when what callers keep in memory about rows may be stale: written work was
   * rolled back (a piece's savepoint, or a whole batch), or something other than a group
   * commit wrote to the database since the last one.
   */
  private readonly staleListeners: Array<(why: 'rollback' | 'outside') => void> = [];
  private readonly totalChanges: { get(): unknown };
  private readonly dataVersion: { get(): unknown };
  /** total_changes() and data_version at the end of the last group commit. */
  private lastSeen: { changes: unknown; version: unknown } | null = null;

  /** The connection's synchronous level (FULL), restored after each group commit. */
  private readonly synchronous: number;

  // The fsync off the event loop. With synchronous=FULL SQLite
  // fsyncs the WAL inside COMMIT, blocking this process for the whole disk flush. A group
  // commit instead commits with synchronous=NORMAL (the WAL written, not flushed) and
  // flushes the WAL from libuv's thread pool; its after-actions (frames, acks, agents)
  // and promises wait for that flush, so nothing leaves this process before its commit
  // is on disk — the same promise FULL gives — while the event loop goes on with the
  // next batch. Completions run in commit order. A checkpoint in NORMAL syncs the WAL
  // before it copies it, so a commit is always durable in the WAL or in the database.
  private readonly walPath: string | null;
  private walFd: number | null = null;
  /** Committed batches whose after-actions wait, oldest first. */
  private readonly waiting: Array<{ commit: number; durable: boolean; complete: () => void }> = [];
  private commits = 0;
  private syncedThrough = 0;
  /** Flushes running in the pool, and the last commit the newest of them covers. */
  private syncing = 0;
  private syncRequested = 0;

  constructor(
    private readonly db: Db,
    /** Called after every commit (the installation's background checkpointer). */
    private readonly afterCommit: () => void = () => {},
  ) {
    this.savepoint = db.transaction((op: Op, after: After, tx: Tx) => op.fn(after, tx));
    this.whole = db.transaction((body: () => void) => body());
    this.totalChanges = db.prepare('SELECT total_changes()').pluck();
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.synchronous = db.pragma('synchronous', { simple: true }) as number;
    const wal = !db.memory && String(db.pragma('journal_mode', { simple: true })).toLowerCase() === 'wal';
    this.walPath = wal && this.synchronous > 1 ? `${db.name}-wal` : null;
  }

  /**
   * Queues `fn` for the next group commit. `durable: false` says the work may be lost in
   * a power failure without harm (an ack's bookkeeping: a text whose `acked` state is lost
   * is sent again and the peer acks the repeat without processing it twice). A commit
   * where every piece says so skips the fsync (synchronous=NORMAL for that commit; WAL
   * order still makes it durable with the next FULL commit, and a killed process loses
   * nothing either way). It takes one fsync out of every text's round trip.
   */
  run<T>(fn: (after: After, tx: Tx) => T, options: { durable?: boolean; savepoint?: boolean } = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('shutting down'));
    return new Promise<T>((resolve, reject) => {
      this.ops.push({
        fn,
        durable: options.durable ?? true,
        savepoint: options.savepoint ?? true,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flushSoon);
      }
    });
  }

  /** The queued flush: after one more turn of the loop when the DHT carrier has a write leaving (carrier-turn.ts). */
  private readonly flushSoon = (): void => {
    if (takeCarrierWrote()) setImmediate(() => this.flush());
    else this.flush();
  };

  private memos: Map<string, Map<string | number, unknown>> | null = null;

  /**
   * `listener` runs, inside a group commit, whenever state kept in memory about rows may
   * be wrong: written work was rolled back, or the database was written outside group
   * commits (by this connection: any other code; by another: data_version) since the
   * last one. The engine drops its caches then.
   */
  onStale(listener: (why: 'rollback' | 'outside') => void): void {
    this.staleListeners.push(listener);
  }

  /**
   * Runs writes that touch no row a caller keeps in memory (the search index's tables),
   * outside any group commit: they are not taken for writes from elsewhere, which would
   * drop the engine's caches at the next commit. Writes from elsewhere before it still are.
   */
  untracked<T>(write: () => T): T {
    const seen = this.lastSeen;
    const clean = seen !== null && seen.changes === this.totalChanges.get() && seen.version === this.dataVersion.get();
    const result = write();
    if (clean) this.lastSeen = { changes: this.totalChanges.get(), version: this.dataVersion.get() };
    return result;
  }

  private stale(why: 'rollback' | 'outside'): void {
    for (const listener of this.staleListeners) listener(why);
  }

  private rolledBack(undos: Array<() => void>): void {
    for (let i = undos.length - 1; i >= 0; i--) {
      try {
        undos[i]!();
      } catch (error) {
        log.error('undoing a rolled-back change failed', { error: String(error) });
      }
    }
    this.stale('rollback');
  }

  /**
   * Inside a group commit: `compute()` once per commit for `kind` and `key`, shared by its
   * pieces; outside one, computed every time. Only for rows no batched work changes
   * (connections, roles, exposed and peer roles: those change in transactions of their
   * own, never during a flush). Callers must not mutate what they get. A commit of 1000
   * texts would otherwise look the same connection up 1000 times.
   */
  memo<T>(kind: string, key: string | number, compute: () => T): T {
    const memos = this.memos;
    if (!memos) return compute();
    let ofKind = memos.get(kind);
    if (ofKind === undefined) memos.set(kind, (ofKind = new Map<string | number, unknown>()));
    else if (ofKind.has(key)) return ofKind.get(key) as T;
    const value = compute();
    ofKind.set(key, value);
    return value;
  }

  /** Commits what is queued now and waits for it to be on disk; later work is refused. Call before closing the database. */
  close(): void {
    while (this.ops.length > 0) this.flush();
    this.closed = true;
    if (this.waiting.length > 0) {
      this.syncNow();
      this.drain();
    }
    // A flush still running in the pool closes the file when it ends.
    if (this.walFd !== null && this.syncing === 0) {
      closeSync(this.walFd);
      this.walFd = null;
    }
  }

  /** The WAL's file descriptor, opened on first use; null when flushing it ourselves is not possible. */
  private wal(): number | null {
    if (this.walFd === null && this.walPath && existsSync(this.walPath)) this.walFd = openSync(this.walPath, 'r+');
    return this.walFd;
  }

  private syncNow(): void {
    const fd = this.wal();
    try {
      if (fd !== null) fdatasyncSync(fd);
      else this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch (error) {
      log.error('could not flush the database log to disk', { error: String(error) });
    }
    this.syncedThrough = this.commits;
    this.syncRequested = Math.max(this.syncRequested, this.commits);
  }

  /**
   * Flushes the WAL in the thread pool, then completes the batches it covers. A commit
   * made while a flush runs starts its own at once (up to MAX_SYNCS): waiting for the
   * running one first costs a batch up to two flushes. A flush
   * covers every commit made before it started, whichever order the flushes end in.
   */
  private startSync(): void {
    if (this.syncing >= MAX_SYNCS || this.syncRequested >= this.commits) return;
    const fd = this.wal();
    const target = this.commits;
    if (fd === null) {
      this.syncNow();
      this.drain();
      return;
    }
    this.syncing++;
    this.syncRequested = target;
    fdatasync(fd, (error) => {
      this.syncing--;
      if (error) {
        log.error('could not flush the database log to disk; trying again', { error: error.message });
        this.syncNow();
      } else this.syncedThrough = Math.max(this.syncedThrough, target);
      this.drain();
      if (this.closed) {
        if (this.syncing === 0 && this.walFd !== null) {
          closeSync(this.walFd);
          this.walFd = null;
        }
        return;
      }
      if (this.waiting.some((entry) => entry.durable && entry.commit > this.syncRequested)) this.startSync();
    });
  }

  /** Completes waiting batches in commit order: the durable ones once flushed. */
  private drain(): void {
    while (this.waiting.length > 0) {
      const head = this.waiting[0]!;
      if (head.durable && head.commit > this.syncedThrough) return;
      this.waiting.shift();
      head.complete();
    }
  }

  /** One try at committing `ops` in one transaction; with `savepoints`, every piece gets one. */
  private attempt(ops: Op[], savepoints: boolean): Outcome[] {
    const outcomes: Outcome[] = [];
    /** Undo actions of the pieces that succeeded, for a rollback of the whole batch. */
    const undos: Array<() => void> = [];
    this.memos = new Map();
    /** The `afterOnce` actions already due after this commit. */
    const once: OnceClaims = new Map();
    try {
      this.whole.immediate(() => {
        const seen = this.lastSeen;
        if (!seen || seen.changes !== this.totalChanges.get() || seen.version !== this.dataVersion.get())
          this.stale('outside');
        for (const op of ops) {
          const piece = new Piece(once);
          const guarded = savepoints || op.savepoint;
          try {
            const value = guarded ? this.savepoint(op, piece.add, piece) : op.fn(piece.add, piece);
            outcomes.push({ ok: true, value, after: piece.after });
            if (piece.own) undos.push(...piece.own);
          } catch (error) {
            // A failed piece's actions do not run: a later piece must be able to claim its keys.
            piece.release();
            const own = piece.own ?? [];
            // SQLite may roll back the whole transaction by itself (a full disk, an I/O error):
            // the pieces before this one are undone too, and no later piece may run outside it.
            if (!this.db.inTransaction) {
              undos.push(...own);
              throw error;
            }
            if (!guarded && piece.wrote) {
              undos.push(...own);
              throw new Redo();
            }
            if (own.length > 0 || guarded) this.rolledBack(own);
            outcomes.push({ ok: false, error });
          }
        }
        this.lastSeen = { changes: this.totalChanges.get(), version: this.dataVersion.get() };
      });
    } catch (error) {
      this.rolledBack(undos);
      // Its own rolled-back writes count in total_changes(): not a write from elsewhere.
      this.lastSeen = { changes: this.totalChanges.get(), version: this.dataVersion.get() };
      throw error;
    } finally {
      this.memos = null;
    }
    return outcomes;
  }

  /**
   * How many of the queued pieces the next commit takes. While no commit waits for its
   * flush, a burst (a peer's frames read at once) is cut in two: the first half's frames
   * leave one commit and one flush sooner, and the peer works on them while the second
   * half commits. While commits wait, batches form on their own and stay whole (wire
   * at 100 agent conversations ~+20%, at 1000 the same).
   */
  private batchLimit(): number {
    const idle = this.waiting.length === 0 && this.syncing === 0;
    if (!idle || this.ops.length < 2 * MIN_SPLIT) return MAX_BATCH;
    return Math.min(MAX_BATCH, Math.ceil(this.ops.length / 2));
  }

  private flush(): void {
    this.scheduled = false;
    if (this.ops.length === 0) return;
    const max = this.batchLimit();
    const ops = this.ops.length > max ? this.ops.splice(0, max) : this.ops;
    if (ops === this.ops) this.ops = [];
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushSoon);
    }
    const durable = ops.some((op) => op.durable);
    // NORMAL: COMMIT writes the WAL without flushing it; startSync flushes it off the event
    // loop (or, with no WAL to flush, a durable commit keeps FULL).
    const relaxed = this.synchronous > 1 && (!durable || this.walPath !== null);
    // exec, not pragma(): a fifth of the cost. Not a prepared statement either: SQLite sets
    // this pragma when it compiles the statement, so running one again changes nothing.
    if (relaxed) this.db.exec('PRAGMA synchronous = NORMAL');
    let outcomes: Outcome[];
    try {
      try {
        outcomes = this.attempt(ops, false);
      } catch (error) {
        if (!(error instanceof Redo)) throw error;
        // A piece without a savepoint failed after writing: the batch was rolled back; run
        // it again with a savepoint for every piece.
        outcomes = this.attempt(ops, true);
      }
    } catch (error) {
      log.error('group commit failed', { error: String(error) });
      for (const op of ops) op.reject(error);
      return;
    } finally {
      if (relaxed) this.db.exec(`PRAGMA synchronous = ${this.synchronous}`);
    }
    const complete = () =>
      ops.forEach((op, i) => {
        const outcome = outcomes[i]!;
        if (!outcome.ok) {
          op.reject(outcome.error);
          return;
        }
        for (const action of outcome.after) {
          try {
            action();
          } catch (error) {
            log.error('after-commit action failed', { error: String(error) });
          }
        }
        op.resolve(outcome.value);
      });
    const commit = ++this.commits;
    this.afterCommit();
    const needsSync = durable && relaxed;
    if (!needsSync && this.waiting.length === 0) {
      complete();
      return;
    }
    this.waiting.push({ commit, durable: needsSync, complete });
    if (this.closed) {
      // Shutting down: no thread pool round trip, the database closes next.
      this.syncNow();
      this.drain();
    } else if (needsSync) this.startSync();
    else this.drain();
  }
}
