// Checkpoints the database's write-ahead log from a worker thread with a connection of
// its own, so copying the log into the database file and syncing that file do not stall
// the event loop. SQLite did it inside whichever commit crossed 1000 log pages: a pause of
// 5–30 ms every few dozen commits under a busy peer link.
//
// The main connection keeps an automatic checkpoint as a backstop at a larger size: a log
// that keeps growing while writes never pause (a checkpoint can only restart the log
// between two writes) is still checkpointed and restarted, and then only the few pages
// written since the worker's last checkpoint remain to copy.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { log } from '../log';
import type { Db } from './database';

/** The worker: CommonJS evaluated as is, so it needs no file of its own in any bundle. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, workerData.nativeBinding ? { nativeBinding: workerData.nativeBinding } : {});
// Never wait for the main connection: a busy checkpoint is simply tried again later.
db.pragma('busy_timeout = 0');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ log: row.log, checkpointed: row.checkpointed });
  } catch (error) {
    parentPort.postMessage({ error: String(error) });
  }
});
`;

/** Log pages after which the main connection checkpoints by itself, while the worker runs. */
export const BACKSTOP_PAGES = 10_000;
const SQLITE_DEFAULT_PAGES = 1000;

/** Background checkpoints start at most this often while writes go on. */
const MIN_INTERVAL_MS = 100;

export interface CheckpointResult {
  /** Pages in the log, and how many of them are now in the database file. */
  log: number;
  checkpointed: number;
}

export class Checkpointer {
  private readonly worker: Worker;
  private running: Promise<CheckpointResult> | null = null;
  private last = -Infinity;
  private readonly replies: Array<(result: CheckpointResult | { error: string }) => void> = [];
  private readonly exited: Promise<void>;
  private ended = false;
  private failing = false;

  constructor(db: Db, nativeBinding?: string) {
    // Packaged, better-sqlite3 lies outside the app archive (electron-builder.yml): load it from there.
    const module = createRequire(import.meta.url)
      .resolve('better-sqlite3')
      .replace(/app\.asar(?=$|[\\/])/, 'app.asar.unpacked');
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module, file: db.name, nativeBinding } });
    // A checkpoint never keeps the process alive.
    this.worker.unref();
    this.worker.on('message', (result: CheckpointResult | { error: string }) => this.replies.shift()?.(result));
    this.worker.on('error', (error) => log.error('the checkpoint worker failed', { error: String(error) }));
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', () => {
        this.ended = true;
        for (const reply of this.replies.splice(0)) reply({ error: 'the checkpoint worker ended' });
        // Without the worker (it could not start, or died), SQLite checkpoints as it would by default.
        if (db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_PAGES}`);
        resolve();
      }),
    );
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    // A burst may grow the log past that; once it restarts, its file is cut back to 64 MB.
    db.pragma('journal_size_limit = 67108864');
  }

  /** After a commit: checkpoints in the background unless one runs or one started less than MIN_INTERVAL_MS ago. */
  wrote(): void {
    if (this.ended || this.running || performance.now() - this.last < MIN_INTERVAL_MS) return;
    this.checkpoint().then(
      () => {
        if (this.failing) log.info('checkpoints work again');
        this.failing = false;
      },
      (error: unknown) => {
        // Once per run of failures (a full disk fails every one of them), not once per commit.
        if (!this.failing) log.warn('checkpoint failed; trying again after later commits', { error: String(error) });
        this.failing = true;
      },
    );
  }

  /** One checkpoint now (or the one running), in the worker. */
  checkpoint(): Promise<CheckpointResult> {
    if (this.running) return this.running;
    if (this.ended) return Promise.reject(new Error('the checkpoint worker ended'));
    this.last = performance.now();
    const running = new Promise<CheckpointResult>((resolve, reject) => {
      this.replies.push((result) => ('error' in result ? reject(new Error(result.error)) : resolve(result)));
      this.worker.postMessage('checkpoint');
    }).finally(() => {
      this.running = null;
    });
    this.running = running;
    return running;
  }

  /** Waits for a running checkpoint, then closes the worker's connection and ends it. */
  async close(): Promise<void> {
    // Whoever waits for the close is kept alive until it is done: with nothing else
    // left, an unref'd worker would let the process end in the middle of the await.
    if (!this.ended) this.worker.ref();
    await this.running?.catch(() => undefined);
    if (!this.ended) this.worker.postMessage('close');
    await this.exited;
  }
}
