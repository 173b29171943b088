// When an open may skip SQLite's quick_check: only for the file exactly as a clean close
// left it. Real files, real SQLite.
import {
  copyFileSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { needsCheck } from './clean-close';
import { closeDatabase, openDatabase } from './database';

describe('skipping the check at open', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'parley-clean-close-'));
    file = path.join(dir, 'parley.db');
    const db = openDatabase(file);
    db.prepare("INSERT INTO people (name, kind) VALUES ('alice', 'owner')").run();
    closeDatabase(db);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('skips it for the file as Parley closed it, again and again, and not once it was written and not closed', () => {
    expect(needsCheck(file)).toBe(false);
    closeDatabase(openDatabase(file));
    expect(needsCheck(file)).toBe(false);
    // Written, and never closed (a crash, kill -9): the next start checks.
    const db = openDatabase(file);
    db.prepare("INSERT INTO people (name, kind) VALUES ('bob', 'member')").run();
    expect(needsCheck(file)).toBe(true);
    db.close();
  });

  it.each([
    [
      'a byte written into it',
      () => {
        const bytes = readFileSync(file);
        const last = bytes.length - 1;
        bytes.writeUInt8(bytes.readUInt8(last) ^ 0xff, last);
        writeFileSync(file, bytes);
      },
    ],
    [
      'written, its modification time put back',
      () => {
        const { atime, mtime } = statSync(file);
        writeFileSync(file, readFileSync(file));
        utimesSync(file, atime, mtime);
      },
    ],
    [
      'replaced by a copy with the same bytes and times (a backup put back)',
      () => {
        copyFileSync(file, `${file}.copy`);
        const { atime, mtime } = statSync(file);
        utimesSync(`${file}.copy`, atime, mtime);
        renameSync(`${file}.copy`, file);
      },
    ],
    ['a write-ahead log beside it', () => writeFileSync(`${file}-wal`, '')],
    ['its stamp gone', () => rmSync(`${file}-closed`)],
  ])('checks it when the file was changed since: %s', (_what, change) => {
    change();
    expect(needsCheck(file)).toBe(true);
  });

  it('a file that fails the check after a change is still refused', () => {
    const db = openDatabase(file);
    const { rootpage } = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'people'").get() as {
      rootpage: number;
    };
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    closeDatabase(db);
    const bytes = readFileSync(file);
    bytes.fill(0x41, (rootpage - 1) * pageSize + 8, (rootpage - 1) * pageSize + 12);
    writeFileSync(file, bytes);
    expect(() => openDatabase(file)).toThrow(/is damaged \(SQLite's quick_check: /);
  });
});
