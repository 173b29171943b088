// Group commit: work queued in the same tick shares one transaction (one fsync with
// synchronous=FULL). Each piece runs in its own savepoint, so one refusal does not
// undo the others; its promise settles only after the commit, and its after-commit
// actions (frames to send, agents to wake) run only if the commit happened.
import { log } from '../log';
import type { Db } from '../store/database';

type After = (action: () => void) => void;

interface Op {
  fn: (after: After) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit {
  private ops: Op[] = [];
  private scheduled = false;
  private closed = false;

  /**
   * One op in its own savepoint. Made once: better-sqlite3 builds a new wrapper on every
   * db.transaction() call, which cost ~30 µs per text (wire benchmark, issue 3).
   */
  private readonly savepoint: (op: Op, after: After) => unknown;

  constructor(private readonly db: Db) {
    this.savepoint = db.transaction((op: Op, after: After) => op.fn(after));
  }

  run<T>(fn: (after: After) => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('shutting down'));
    return new Promise<T>((resolve, reject) => {
      this.ops.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits what is queued now; later work is refused. Call before closing the database. */
  close(): void {
    if (this.ops.length > 0) this.flush();
    this.closed = true;
  }

  private flush(): void {
    this.scheduled = false;
    if (this.ops.length === 0) return;
    const ops = this.ops;
    this.ops = [];
    const outcomes: Array<{ ok: true; value: unknown; after: Array<() => void> } | { ok: false; error: unknown }> = [];
    try {
      this.db
        .transaction(() => {
          for (const op of ops) {
            const after: Array<() => void> = [];
            try {
              const value = this.savepoint(op, (action) => after.push(action));
              outcomes.push({ ok: true, value, after });
            } catch (error) {
              outcomes.push({ ok: false, error });
            }
          }
        })
        .immediate();
    } catch (error) {
      log.error('group commit failed', { error: String(error) });
      for (const op of ops) op.reject(error);
      return;
    }
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
  }
}
