// Keeps the search index close behind the tables while Parley runs. It waits for a
// quiet moment: while changes keep coming (texts on the wire, a busy agent) it stays out
// of the way, for up to MAX_WAIT_MS, and then indexes the new rows a batch at a time,
// resting between batches several times as long as each took, so a large backlog never
// takes more than a small share of the process (or of a busy machine) from the wire and
// the pages. A search indexes whatever is left before it reads, so results never depend
// on this having run.
import type { EventHub } from '../events';
import { log } from '../log';
import { unflushed, type Db } from '../store/database';
import { indexWaitingRows } from './index-catch-up';

/** Quiet for this long (no change at all) and the indexer runs. */
const SETTLE_MS = 750;
/** Rows waiting longer than this are indexed even while changes keep coming. */
const MAX_WAIT_MS = 10_000;
/** Rows per table per transaction: a few milliseconds of the event loop. */
const BATCH = 1000;
/** Rest after a batch, as a multiple of the time it took: the indexer uses at most about 1/(1+REST) of the time. */
const REST = 4;
/** The shortest rest between batches. */
const MIN_REST_MS = 10;

export interface IndexerTiming {
  settleMs: number;
  maxWaitMs: number;
  now: () => number;
}

export class SearchIndexer {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  private readonly off: () => void;
  /** Changes seen so far, and as the timer was set: a difference means it was not quiet. */
  private changes = 0;
  private changesAtSchedule = 0;
  /** When the oldest change not yet indexed came (null: nothing known to wait). */
  private waitingSince: number | null;
  private readonly timing: IndexerTiming;

  constructor(
    private readonly db: Db,
    events: EventHub,
    /** Runs the index's writes so the engine does not take them for changes to the rows it keeps in memory. */
    private readonly untracked: <T>(write: () => T) => T = (write) => write(),
    timing: Partial<IndexerTiming> = {},
  ) {
    this.timing = { settleMs: SETTLE_MS, maxWaitMs: MAX_WAIT_MS, now: () => performance.now(), ...timing };
    this.off = events.observe((event) => {
      if (event.type !== 'changed') return;
      this.changes++;
      this.waitingSince ??= this.timing.now();
      this.schedule(this.timing.settleMs);
    });
    // Rows an earlier run left unindexed wait from the start.
    this.waitingSince = this.timing.now();
    this.schedule(this.timing.settleMs);
  }

  private schedule(delayMs: number): void {
    if (this.closed || this.timer) return;
    this.changesAtSchedule = this.changes;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.step();
    }, delayMs);
    this.timer.unref?.();
  }

  private step(): void {
    if (this.closed || !this.db.open) return;
    const { settleMs, maxWaitMs, now } = this.timing;
    const busy = this.changes !== this.changesAtSchedule;
    if (busy && this.waitingSince !== null && now() - this.waitingSince < maxWaitMs) {
      this.schedule(settleMs);
      return;
    }
    try {
      const started = now();
      // The index and its marks commit together and are made again from the rows if a
      // power cut takes them: no flush, which would stall the wire for the disk's sync.
      if (this.untracked(() => unflushed(this.db, () => indexWaitingRows(this.db, BATCH))) > 0)
        this.schedule(Math.max(MIN_REST_MS, (now() - started) * REST));
      else this.waitingSince = null;
    } catch (error) {
      // A full disk or a busy database: the rows wait for the next change or search.
      log.warn('search indexing failed; it is tried again later', { error: String(error) });
    }
  }

  close(): void {
    this.closed = true;
    this.off();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
