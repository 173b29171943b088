// Keeps the search index close behind the tables while Parley runs: a little while
// after things change (and after start), it indexes the new rows a batch at a time,
// resting between batches several times as long as each took, so a large backlog
// never takes more than a small share of the process (or of a busy machine) from the
// wire and the pages. A search indexes whatever is left before it reads, so results
// never depend on this having run.
import type { EventHub } from '../events';
import { log } from '../log';
import { unflushed, type Db } from '../store/database';
import { indexWaitingRows } from './index-catch-up';

/** How long after a change the indexer runs: writes in a burst are indexed together. */
const SETTLE_MS = 750;
/** Rows per table per transaction: a few milliseconds of the event loop. */
const BATCH = 200;
/** Rest after a batch, as a multiple of the time it took: the indexer uses at most about 1/(1+REST) of the time. */
const REST = 4;
/** The shortest rest between batches. */
const MIN_REST_MS = 10;

export class SearchIndexer {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  private readonly off: () => void;

  constructor(
    private readonly db: Db,
    events: EventHub,
    /** Runs the index's writes so the engine does not take them for changes to the rows it keeps in memory. */
    private readonly untracked: <T>(write: () => T) => T = (write) => write(),
  ) {
    this.off = events.observe((event) => {
      if (event.type === 'changed') this.schedule(SETTLE_MS);
    });
    this.schedule(SETTLE_MS);
  }

  private schedule(delayMs: number): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.step();
    }, delayMs);
    this.timer.unref?.();
  }

  private step(): void {
    if (this.closed || !this.db.open) return;
    try {
      const started = performance.now();
      // The index and its marks commit together and are made again from the rows if a
      // power cut takes them: no flush, which would stall the wire for the disk's sync.
      if (this.untracked(() => unflushed(this.db, () => indexWaitingRows(this.db, BATCH))) > 0)
        this.schedule(Math.max(MIN_REST_MS, (performance.now() - started) * REST));
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
