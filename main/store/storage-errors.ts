// Failures of the disk under the database, told apart from Parley's own errors so that
// each edge can answer with its stable code (`disk_full`) and a message people can act
// on, and so that work that failed only for lack of space is tried again later.

/** Said to people (and agents) when a write was refused for lack of space. */
export const DISK_FULL_MESSAGE =
  'the disk is full: Parley could not save this, and nothing of it was kept. Free some space on the disk that holds its data folder, then try again.';

/** Error codes of SQLite (better-sqlite3's `code`) and of Node's file system that mean "no space". */
const DISK_FULL_CODES = new Set(['SQLITE_FULL', 'ENOSPC', 'EDQUOT']);

export function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && DISK_FULL_CODES.has(code);
}

/**
 * Whether the write failed because of the disk (full, or failing) rather than because of
 * what was written: the same work may well succeed later.
 */
export function isStorageFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return isDiskFull(error) || (typeof code === 'string' && (code.startsWith('SQLITE_IOERR') || code === 'EIO'));
}
