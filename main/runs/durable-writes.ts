// Writes that must not be lost to a full disk (a turn's end, its stop, its start): tried
// again every little while until the disk takes them, or the run manager closes.
import { log } from '../log';
import { isStorageFailure } from '../store/storage-errors';

/** A write the disk refused (it is full) is tried again this often until it goes through. */
const STORAGE_RETRY_MS = 2_000;

export class DurableWrites {
  private readonly retries = new Set<NodeJS.Timeout>();

  constructor(
    private readonly isClosed: () => boolean,
    /** A write went through after the disk had refused it: what waited on it may go on. */
    private readonly onSaved: () => void,
  ) {}

  /** Runs `action` after STORAGE_RETRY_MS, unless the run manager closes first. */
  later(action: () => void): void {
    if (this.isClosed()) return;
    const timer = setTimeout(() => {
      this.retries.delete(timer);
      if (!this.isClosed()) action();
    }, STORAGE_RETRY_MS);
    this.retries.add(timer);
  }

  /**
   * Commits what a turn left (its end, its stop). The process is gone, so this must not
   * be lost to a full disk: it is tried again until the disk takes it. Meanwhile the turn
   * stays running in the database, so its run starts nothing new; should Parley stop
   * first, the next start finds it interrupted and runs it once more.
   */
  async durably(what: string, commit: () => void | Promise<void>, attempt = 0): Promise<void> {
    if (this.isClosed()) return;
    try {
      await commit();
      if (attempt > 0) {
        log.info(`saved ${what} once the disk took it`);
        this.onSaved();
      }
    } catch (error) {
      if (!isStorageFailure(error)) {
        log.error(`could not save ${what}`, { error: String((error as Error).stack ?? error) });
        return;
      }
      if (attempt === 0)
        log.warn(`could not save ${what}: the disk refused the write; trying again`, { error: String(error) });
      this.later(() => void this.durably(what, commit, attempt + 1));
    }
  }

  /** Drops the writes still waiting (the next start recovers what they were for). */
  close(): void {
    for (const timer of this.retries) clearTimeout(timer);
    this.retries.clear();
  }
}
