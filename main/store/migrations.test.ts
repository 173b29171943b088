import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from './database';
import { latestVersion, migrate, NewerDatabaseError, schemaVersion } from './migrate';
import { migrations } from './migrations';
import { getRun, pendingInputs, runnableRuns, runSummary } from './queries/runs';
import { lastSeq } from './queries/threads';

const dirs: string[] = [];
function tempFile(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-migrations-'));
  dirs.push(dir);
  return path.join(dir, 'parley.db');
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Data a database holds at each version, written with that version's schema. */
const seeds: Record<number, (db: Db) => void> = {
  1: (db) => {
    db.prepare("INSERT INTO installation (id, name, fingerprint) VALUES (1, 'alice', 'ab12')").run();
    db.prepare("INSERT INTO settings (key, value) VALUES ('maxConcurrentTurns', '4')").run();
  },
  2: (db) => {
    db.prepare("INSERT INTO people (id, name, kind) VALUES (1, 'alice', 'owner'), (2, 'bob', 'member')").run();
    db.prepare("INSERT INTO sign_in_tokens (person_id, token_hash) VALUES (2, 'hash-bob')").run();
  },
  3: (db) => {
    db.prepare(`INSERT INTO roles (id, name, agent) VALUES (1, 'assistant', '{"adapter":"scripted"}')`).run();
    db.prepare("INSERT INTO role_tokens (role_id, token_hash, created_by) VALUES (1, 'hash-role', 1)").run();
  },
  4: (db) => {
    db.prepare('INSERT INTO conversations (id, person_id, role_id) VALUES (1, 2, 1)').run();
    db.prepare(
      "INSERT INTO messages (conversation_id, author_kind, author_id, author_name, body) VALUES (1, 'person', 2, 'bob', 'hello')",
    ).run();
  },
  5: (db) => {
    db.prepare("INSERT INTO tasks (id, role_id, title, created_by) VALUES (1, 1, 'write the report', 2)").run();
    db.prepare(
      "INSERT INTO tasks (id, role_id, parent_id, title, created_by) VALUES (2, 1, 1, 'gather sources', 2)",
    ).run();
    db.prepare(
      "INSERT INTO task_log (task_id, kind, author_kind, author_name, body) VALUES (1, 'comment', 'person', 'bob', 'soon')",
    ).run();
  },
  6: (db) => {
    db.prepare(
      "INSERT INTO runs (id, role_id, context_kind, context_id, session) VALUES (1, 1, 'conversation', 1, 's-1')",
    ).run();
    db.prepare("INSERT INTO turns (id, run_id, status) VALUES (1, 1, 'done')").run();
    db.prepare(
      "INSERT INTO inputs (run_id, kind, body, author_name, state, turn_id) VALUES (1, 'message', 'hello', 'bob', 'handled', 1)",
    ).run();
  },
  7: (db) => {
    db.prepare(
      "INSERT INTO connections (id, fingerprint, cert, name, address) VALUES (1, 'ff00', 'PEM', 'carol', '127.0.0.1:4100')",
    ).run();
    db.prepare('INSERT INTO exposed_roles (connection_id, role_id) VALUES (1, 1)').run();
    db.prepare("INSERT INTO peer_roles (connection_id, name) VALUES (1, 'analyst')").run();
    db.prepare(
      "INSERT INTO invitations (secret_hash, roles, expires_at) VALUES ('h', '[\"assistant\"]', '2030-01-01')",
    ).run();
  },
  8: (db) => {
    db.prepare(
      "INSERT INTO threads (id, connection_id, thread_id, local_role_id, local_role, peer_role, root_kind, root_id, started_by) VALUES (1, 1, 'T1', 1, 'assistant', 'analyst', 'conversation', 1, 'local')",
    ).run();
    db.prepare(
      "INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (1, 'out', 1, 'numbers?', 'acked')",
    ).run();
    db.prepare(
      "INSERT INTO inputs (run_id, kind, body, author_name, text_id) VALUES (1, 'text', 'x', 'carol/analyst', 1)",
    ).run();
  },
  9: (db) => {
    db.prepare(
      "INSERT INTO threads (id, connection_id, thread_id, local_role_id, local_role, peer_role, root_kind, root_id, started_by) VALUES (2, 1, 'T2', 1, 'assistant', 'analyst', 'thread', 2, 'peer')",
    ).run();
    db.prepare(
      "INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (2, 'in', 1, 'a', 'handled'), (2, 'in', 2, 'b', 'received')",
    ).run();
    // Up to version 9 a received text was copied into a pending input on arrival.
    db.prepare("INSERT INTO runs (id, role_id, context_kind, context_id) VALUES (2, 1, 'thread', 2)").run();
    db.prepare(
      "INSERT INTO inputs (run_id, kind, body, author_name, text_id) SELECT 2, 'text', 'b', 'carol/analyst', id FROM texts WHERE thread_id = 2 AND seq = 2",
    ).run();
  },
  10: (db) => {
    // From version 10 a received text waits as it is.
    db.prepare("INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (2, 'in', 3, 'c', 'received')").run();
  },
};

/** What must still be true after each later migration, for the data of each version. */
const checks: Record<number, (db: Db) => void> = {
  1: (db) =>
    expect(db.prepare('SELECT name, fingerprint FROM installation').get()).toEqual({
      name: 'alice',
      fingerprint: 'ab12',
    }),
  2: (db) => {
    expect(db.prepare('SELECT name, kind FROM people ORDER BY id').all()).toEqual([
      { name: 'alice', kind: 'owner' },
      { name: 'bob', kind: 'member' },
    ]);
    expect(db.prepare('SELECT token_hash FROM sign_in_tokens').all()).toEqual([{ token_hash: 'hash-bob' }]);
  },
  3: (db) =>
    expect(db.prepare('SELECT name, agent FROM roles').all()).toEqual([
      { name: 'assistant', agent: '{"adapter":"scripted"}' },
    ]),
  4: (db) => expect(db.prepare('SELECT body FROM messages').all()).toEqual([{ body: 'hello' }]),
  5: (db) =>
    expect(db.prepare('SELECT id, parent_id, status FROM tasks ORDER BY id').all()).toEqual([
      { id: 1, parent_id: null, status: 'open' },
      { id: 2, parent_id: 1, status: 'open' },
    ]),
  6: (db) =>
    expect(db.prepare("SELECT session FROM runs WHERE context_kind = 'conversation'").all()).toEqual([
      { session: 's-1' },
    ]),
  7: (db) => {
    expect(db.prepare('SELECT name, status, queue_limit FROM connections').all()).toEqual([
      { name: 'carol', status: 'active', queue_limit: 100 },
    ]);
    expect(db.prepare('SELECT count(*) AS n FROM exposed_roles').get()).toEqual({ n: 1 });
  },
  8: (db) => {
    expect(db.prepare('SELECT thread_id, status, started_by FROM threads WHERE id = 1').all()).toEqual([
      { thread_id: 'T1', status: 'open', started_by: 'local' },
    ]);
    expect(db.prepare('SELECT body, state FROM texts WHERE thread_id = 1').all()).toEqual([
      { body: 'numbers?', state: 'acked' },
    ]);
  },
  9: (db) => {
    // The seqs are read from the texts now; the threads keep everything else.
    expect(lastSeq(db, 1, 'out')).toBe(1);
    expect(lastSeq(db, 1, 'in')).toBe(0);
    expect(lastSeq(db, 2, 'in')).toBeGreaterThanOrEqual(2);
    expect(db.prepare('SELECT thread_id, started_by FROM threads ORDER BY id').all()).toEqual([
      { thread_id: 'T1', started_by: 'local' },
      { thread_id: 'T2', started_by: 'peer' },
    ]);
    expect(Object.keys(db.prepare('SELECT * FROM threads').get() as object)).not.toContain('out_seq');
  },
  10: (db) => {
    // The text copied into an input before and the one waiting as a text are each one
    // request of the thread's run, in order, never two.
    const run = getRun(db, 2)!;
    expect(runSummary(db, { kind: 'thread', id: 2 }).pending).toBe(2);
    expect(runnableRuns(db, 10)).toContain(2);
    expect(pendingInputs(db, run).map((input) => [input.body, input.author_name])).toEqual([
      ['b', 'carol/analyst'],
      ['c', 'carol/analyst'],
    ]);
    expect(runSummary(db, { kind: 'thread', id: 2 }).pending).toBe(2);
  },
};

describe('migrations', () => {
  it('has a seed and a check for every registered migration, numbered 1..n', () => {
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
    expect(Object.keys(seeds).map(Number)).toEqual(migrations.map((m) => m.version));
    expect(Object.keys(checks).map(Number)).toEqual(migrations.map((m) => m.version));
  });

  for (const migration of migrations) {
    it(`${String(migration.version).padStart(4, '0')}-${migration.name} keeps the data of a database that holds some`, () => {
      const file = tempFile();
      const db = openDatabase(file, { targetVersion: migration.version - 1 });
      for (let v = 1; v < migration.version; v++) seeds[v]!(db);
      migrate(db, migration.version);
      expect(schemaVersion(db)).toBe(migration.version);
      for (let v = 1; v < migration.version; v++) checks[v]!(db);
      // The new version's own tables take data.
      seeds[migration.version]!(db);
      checks[migration.version]!(db);
      expect(db.pragma('foreign_key_check')).toEqual([]);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      db.close();
    });
  }

  it('brings a filled database from its version to the latest, keeping everything', () => {
    const file = tempFile();
    const db = openDatabase(file, { targetVersion: 0 });
    for (const migration of migrations) {
      migrate(db, migration.version);
      seeds[migration.version]!(db);
    }
    db.close();
    const reopened = openDatabase(file);
    expect(schemaVersion(reopened)).toBe(latestVersion);
    for (const migration of migrations) checks[migration.version]!(reopened);
    reopened.close();
  });

  it('refuses a database written by a newer Parley, with a message that says what to do', () => {
    const file = tempFile();
    const db = openDatabase(file);
    db.pragma(`user_version = ${latestVersion + 1}`);
    db.close();
    expect(() => openDatabase(file)).toThrow(NewerDatabaseError);
    expect(() => openDatabase(file)).toThrow(/newer version of Parley.*Update Parley/);
  });

  it('rolls back every step of a run when one migration fails', () => {
    const file = tempFile();
    const db = openDatabase(file, { targetVersion: 0 });
    const broken = [
      ...migrations.slice(0, 2),
      {
        version: 3,
        name: 'broken',
        up: (d: Db) => d.exec('CREATE TABLE roles (id INTEGER PRIMARY KEY); SELECT * FROM no_such_table'),
      },
    ];
    expect(() => migrate(db, 3, broken)).toThrow(/no_such_table/);
    expect(schemaVersion(db)).toBe(0);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([]);
    db.close();
  });

  it('deletes a conversation’s run with the conversation, and a task’s runs with the task and its subtasks', () => {
    const file = tempFile();
    const db = openDatabase(file);
    for (const migration of migrations) seeds[migration.version]!(db);
    db.prepare("INSERT INTO runs (role_id, context_kind, context_id) VALUES (1, 'task', 1), (1, 'task', 2)").run();
    db.prepare('DELETE FROM tasks WHERE id = 1').run();
    expect(db.prepare("SELECT count(*) AS n FROM runs WHERE context_kind = 'task'").get()).toEqual({ n: 0 });
    db.prepare('DELETE FROM conversations WHERE id = 1').run();
    expect(db.prepare("SELECT count(*) AS n FROM runs WHERE context_kind = 'conversation'").get()).toEqual({ n: 0 });
    expect(db.prepare('SELECT count(*) AS n FROM inputs WHERE run_id = 1').get()).toEqual({ n: 0 });
    db.close();
  });
});
