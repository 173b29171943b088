// Background work that waits for a quiet moment: it runs once no moment (a turn starting
// or ending) has come for `settleMs`, and at the latest `atMostMs` after it was asked for,
// however busy things stay. Keyed, so asking again replaces, and work whose reason went
// (its run's turn came first, its run was deleted) is cancelled.
import { log } from '../log';

export class WhenSettled<K> {
  private readonly waiting = new Map<K, { work: () => void; latest: number }>();
  private lastMoment = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | null = null;
  private idle: { promise: Promise<void>; resolve: () => void } | null = null;
  private closed = false;

  constructor(
    private readonly settleMs: number,
    private readonly atMostMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Something happened that the work should not compete with: it waits `settleMs` more. */
  moment(): void {
    this.lastMoment = this.now();
    this.arm();
  }

  /** Runs `work` once things have settled (a moment, this one). */
  later(key: K, work: () => void): void {
    if (this.closed) return;
    this.waiting.set(key, { work, latest: this.now() + this.atMostMs });
    this.moment();
  }

  /** Whether work for `key` was waiting; it will not run. */
  cancel(key: K): boolean {
    const had = this.waiting.delete(key);
    if (had) this.arm();
    return had;
  }

  cancelWhere(gone: (key: K) => boolean): void {
    for (const key of [...this.waiting.keys()]) if (gone(key)) this.waiting.delete(key);
    this.arm();
  }

  clear(): void {
    this.waiting.clear();
    this.arm();
  }

  /** Nothing runs from now on. */
  close(): void {
    this.closed = true;
    this.clear();
  }

  /** Resolves once no work waits: it ran or was cancelled. */
  async settled(): Promise<void> {
    while (this.waiting.size > 0) {
      if (!this.idle) {
        let resolve!: () => void;
        const promise = new Promise<void>((done) => (resolve = done));
        this.idle = { promise, resolve };
      }
      await this.idle.promise;
    }
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.waiting.size === 0 || this.closed) {
      this.waiting.clear();
      this.idle?.resolve();
      this.idle = null;
      return;
    }
    const latest = Math.min(...[...this.waiting.values()].map((entry) => entry.latest));
    const due = Math.min(this.lastMoment + this.settleMs, latest);
    this.timer = setTimeout(() => this.run(), Math.max(0, due - this.now()));
    this.timer.unref();
  }

  private run(): void {
    this.timer = null;
    const due = [...this.waiting.entries()];
    this.waiting.clear();
    for (const [key, entry] of due) {
      // On a timer: a failing piece of work must end neither the others nor the process.
      try {
        entry.work();
      } catch (error) {
        log.error('background work failed', { key: String(key), error: String(error) });
      }
    }
    this.arm();
  }
}
