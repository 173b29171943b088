// Opens the installation's SQLite file with the pragmas Parley relies on and brings
// its schema up to date.
import Database from 'better-sqlite3';
import { chmodSync, existsSync } from 'node:fs';
import { migrate } from './migrate';

export type Db = Database.Database;

export interface OpenOptions {
  /** Stop at this schema version (tests of one migration use it). */
  targetVersion?: number;
  readonly?: boolean;
  /** A better-sqlite3 addon built for another runtime (Electron), by path. */
  nativeBinding?: string;
}

export function openDatabase(file: string, options: OpenOptions = {}): Db {
  const db = new Database(file, {
    readonly: options.readonly ?? false,
    ...(options.nativeBinding ? { nativeBinding: options.nativeBinding } : {}),
  });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    // FULL: a commit survives power loss, which the wire protocol's acks promise.
    db.pragma('synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    if (!options.readonly) migrate(db, options.targetVersion);
    // The database holds people's conversations: readable by the user alone.
    for (const suffix of ['', '-wal', '-shm']) if (existsSync(file + suffix)) chmodSync(file + suffix, 0o600);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** Runs fn in an immediate transaction: all of it commits or none of it does. */
export function transaction<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}
