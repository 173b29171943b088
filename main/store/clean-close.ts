// SQLite's quick_check reads every page of the database: opening a file of 348 MB took
// 1.7 s with it in the page cache and 5.6 s without, at every start. It is there
// to refuse a file that was damaged while Parley was not running it. A file Parley closed
// cleanly, and that nothing has written since, has nothing new to find: at a clean close
// Parley writes the file's stamp beside it (device, inode, size, and modification and
// change times to the nanosecond, which any write, copy or restore moves), and the next
// open skips the check when the stamp still matches and no write-ahead log is left. Any
// other start (after a crash or a kill, or a file put back from a backup) checks. The stamp
// is left in place while the file is in use: the first write moves the file's times (or
// leaves a log beside it), and a file whose stamp still matches is the file that was checked.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';

const stampFile = (file: string) => `${file}-closed`;

function stampOf(file: string): string | null {
  try {
    const s = statSync(file, { bigint: true });
    return [s.dev, s.ino, s.size, s.mtimeNs, s.ctimeNs].join(':');
  } catch {
    return null;
  }
}

/** Whether the file must be checked before it is opened: Parley did not close it cleanly, or it changed since. */
export function needsCheck(file: string): boolean {
  const stamp = stampOf(file);
  let kept: string | null = null;
  try {
    kept = readFileSync(stampFile(file), 'utf8');
  } catch {
    // No stamp: never closed cleanly, or closed by an older Parley.
  }
  return stamp === null || kept !== stamp || existsSync(`${file}-wal`);
}

/** After the last connection closed: SQLite has folded the write-ahead log in and removed it. */
export function recordCleanClose(file: string): void {
  const stamp = stampOf(file);
  if (stamp === null || existsSync(`${file}-wal`)) return;
  try {
    writeFileSync(stampFile(file), stamp, { mode: 0o600 });
  } catch {
    // A full disk: the next start checks, which is only slower.
  }
}
