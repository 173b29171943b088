// Writes that a power cut may undo without harm (the search index) commit without the
// disk flush that FULL makes at every commit, and the connection is FULL again after
// them, so every other commit stays as durable as before.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { scratchDatabase } from '../../test-support/scratch-database';
import { transaction, unflushed, type Db } from './database';

const FULL = 2;
const NORMAL = 1;

let db: Db;
scratchDatabase('unflushed', (opened) => (db = opened));

const level = (of: Db) => of.pragma('synchronous', { simple: true });

describe('unflushed writes', () => {
  it('commit without a flush, and the connection flushes every commit again after them, even after a throw', () => {
    expect(level(db)).toBe(FULL);
    const seen = unflushed(db, () => {
      transaction(db, () => db.exec("INSERT INTO settings (key, value) VALUES ('probe', '1')"));
      return level(db);
    });
    expect(seen).toBe(NORMAL);
    expect(level(db)).toBe(FULL);
    expect(() =>
      unflushed(db, () => {
        throw new Error('disk full');
      }),
    ).toThrow('disk full');
    expect(level(db)).toBe(FULL);
    // Committed: another connection reads it.
    const other = new Database(db.name, { readonly: true });
    expect(other.prepare("SELECT value FROM settings WHERE key = 'probe'").pluck().get()).toBe('1');
    other.close();
  });

  it('leave a database that is not in WAL mode as it is: there NORMAL could lose more than the last commit', () => {
    const memory = new Database(':memory:');
    memory.pragma('synchronous = FULL');
    expect(unflushed(memory, () => level(memory))).toBe(FULL);
    memory.close();
  });
});
