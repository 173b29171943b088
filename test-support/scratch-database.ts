// An installation's database for each test: a real SQLite file made by the real migrations,
// in a temporary folder of its own, closed and removed after the test.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { openDatabase, type Db } from '../main/store/database';

/**
 * Registers, in the calling file or describe block, a database opened before each test and
 * handed to `opened` (with anything `opened` writes first), closed and removed after it.
 */
export function scratchDatabase(name: string, opened: (db: Db, dir: string) => void): void {
  let dir: string | null = null;
  let db: Db | null = null;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), `parley-${name}-`));
    db = openDatabase(path.join(dir, 'parley.db'));
    opened(db, dir);
  });
  afterEach(() => {
    if (db?.open) db.close();
    db = null;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = null;
  });
}
