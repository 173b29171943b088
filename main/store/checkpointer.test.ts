import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BACKSTOP_PAGES, Checkpointer } from './checkpointer';
import { openDatabase, transaction } from './database';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function openFile() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-checkpointer-'));
  dirs.push(dir);
  const file = path.join(dir, 'parley.db');
  return { file, db: openDatabase(file) };
}

describe('Checkpointer', () => {
  it('keeps a process that waits for its close alive until it is closed, with nothing else left to wait on', () => {
    const { file, db } = openFile();
    db.close();
    // A process of its own: in this one, vitest keeps the event loop busy anyway.
    const script = `
      import { Checkpointer } from ${JSON.stringify(path.join(import.meta.dirname, 'checkpointer.ts'))};
      import { openDatabase } from ${JSON.stringify(path.join(import.meta.dirname, 'database.ts'))};
      const db = openDatabase(${JSON.stringify(file)});
      const checkpointer = new Checkpointer(db);
      await checkpointer.close();
      db.close();
      process.stdout.write('closed');
    `;
    const entry = path.join(path.dirname(file), 'close.mts');
    writeFileSync(entry, script);
    const child = spawnSync(process.execPath, ['--import', 'tsx', entry], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.stderr).toBe('');
    expect(child.stdout).toBe('closed');
  });

  it('copies the log into the database file from its worker thread, leaving the main connection free', async () => {
    const { file, db } = openFile();
    const checkpointer = new Checkpointer(db);
    try {
      db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
      // Below the main connection's own checkpoint size: only the worker moves these pages.
      const insert = db.prepare('INSERT INTO notes (body) VALUES (?)');
      transaction(db, () => {
        for (let i = 0; i < 2000; i++) insert.run(`note ${i} `.padEnd(200, '.'));
      });
      const before = statSync(file).size;
      const result = await checkpointer.checkpoint();
      expect(result.log).toBeGreaterThan(50);
      expect(result.log).toBeLessThan(BACKSTOP_PAGES);
      expect(result.checkpointed).toBe(result.log);
      expect(statSync(file).size).toBeGreaterThan(before + 300_000);
      expect(db.prepare('SELECT count(*) AS n FROM notes').get()).toEqual({ n: 2000 });
    } finally {
      await checkpointer.close();
      db.close();
    }
  });

  it('checkpoints in the background after writes, once at a time, and closes its connection on close', async () => {
    const { file, db } = openFile();
    const checkpointer = new Checkpointer(db);
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    db.prepare('INSERT INTO notes (body) VALUES (?)').run('x'.repeat(5000));
    checkpointer.wrote();
    // A second call while the first runs joins it rather than starting another.
    const joined = checkpointer.checkpoint();
    expect((await joined).checkpointed).toBe((await joined).log);
    await checkpointer.close();
    db.close();
    // Nothing holds the file any more: it opens cleanly and nothing was lost.
    const again = openDatabase(file);
    expect(again.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(again.prepare('SELECT length(body) AS n FROM notes').get()).toEqual({ n: 5000 });
    again.close();
  });

  it('falls back to SQLite’s own checkpoints when its worker cannot run, and still closes', async () => {
    const { db } = openFile();
    const checkpointer = new Checkpointer(db, '/nonexistent/better_sqlite3.node');
    await expect(checkpointer.checkpoint()).rejects.toThrow(/worker ended/);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    checkpointer.wrote();
    await checkpointer.close();
    db.close();
  });
});
