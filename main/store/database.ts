// Opens the installation's SQLite file with the pragmas Parley relies on and brings
// its schema up to date. A file that is not a database, or one that fails SQLite's
// quick_check, is never opened over: the start stops with a message that names it.
import Database from 'better-sqlite3';
import { chmodSync, existsSync, statSync } from 'node:fs';
import { StartupError } from '../startup-error';
import { needsCheck, recordCleanClose } from './clean-close';
import { migrate } from './migrate';

export type Db = Database.Database;

export interface OpenOptions {
  /** Stop at this schema version (tests of one migration use it). */
  targetVersion?: number;
  readonly?: boolean;
  /** A better-sqlite3 addon built for another runtime (Electron), by path. */
  nativeBinding?: string;
}

/** SQLite's answers for a file that is not (or no longer) a sound database. */
const DAMAGED = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT', 'SQLITE_CANTOPEN']);

function damaged(file: string, what: string): StartupError {
  return new StartupError(
    `${file} ${what}. Parley did not start and changed nothing. Restore the file from a backup ` +
      '(with its -wal file, if there is one, beside it), or move it away to start a new, empty installation ' +
      '(every peer would then have to be paired again).',
  );
}

export function openDatabase(file: string, options: OpenOptions = {}): Db {
  const existed = existsSync(file) && statSync(file).size > 0;
  // Decided before SQLite touches the file.
  const check = existed && needsCheck(file);
  let db: Db;
  try {
    db = new Database(file, {
      readonly: options.readonly ?? false,
      ...(options.nativeBinding ? { nativeBinding: options.nativeBinding } : {}),
    });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code && DAMAGED.has(code)) throw damaged(file, `cannot be opened (${(error as Error).message})`);
    throw error;
  }
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    // FULL: a commit survives power loss, which the wire protocol's acks promise.
    db.pragma('synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    if (check) {
      const problems = db.pragma('quick_check(5)', { simple: false }) as Array<{ quick_check: string }>;
      if (problems.length !== 1 || problems[0]!.quick_check !== 'ok')
        throw damaged(
          file,
          `is damaged (SQLite's quick_check: ${problems.map((p) => p.quick_check.replace(/\n/g, '; ')).join('; ')})`,
        );
    }
    if (!options.readonly) migrate(db, options.targetVersion);
    // The database holds people's conversations: readable by the user alone.
    // Only when it is not so already: a chmod moves the file's change time, which its clean-close stamp holds.
    for (const suffix of ['', '-wal', '-shm']) {
      const name = file + suffix;
      if (existsSync(name) && (statSync(name).mode & 0o777) !== 0o600) chmodSync(name, 0o600);
    }
  } catch (error) {
    db.close();
    const code = (error as { code?: string }).code;
    if (code && DAMAGED.has(code)) throw damaged(file, `is damaged (${(error as Error).message})`);
    throw error;
  }
  return db;
}

/** Closes the installation's last connection to the file, so that the next open of it need not check it. */
export function closeDatabase(db: Db): void {
  const file = db.name;
  db.close();
  if (!db.readonly) recordCleanClose(file);
}

/** Runs fn in an immediate transaction: all of it commits or none of it does. */
export function transaction<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}

/**
 * Runs fn with its commits written to the log but not flushed to disk (synchronous =
 * NORMAL): for writes a power cut may undo without harm, such as what is derived from
 * other rows and made again when missing. In WAL mode such a commit is lost whole or
 * kept whole, and the next flushed commit makes it durable too; the flush under FULL
 * would block the event loop for the disk's whole sync.
 */
export function unflushed<T>(db: Db, fn: () => T): T {
  const level = db.pragma('synchronous', { simple: true }) as number;
  const relax = level > 1 && !db.memory && String(db.pragma('journal_mode', { simple: true })).toLowerCase() === 'wal';
  if (!relax) return fn();
  db.exec('PRAGMA synchronous = NORMAL');
  try {
    return fn();
  } finally {
    db.exec(`PRAGMA synchronous = ${level}`);
  }
}
