import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from './database';
import { latestVersion, migrate, NewerDatabaseError, schemaVersion } from './migrate';
import { migrations } from './migrations';
import { getRun, pendingInputs, runnableRuns, runSummary } from './queries/runs';
import { pageThreads } from './queries/thread-lists';
import { lastSeq, threadByWireId } from './queries/threads';
import { indexAllWaitingRows } from '../search/index-catch-up';
import { incomingNews, readFloor, unreadEvents, unreadMessages, unreadTaskLog } from './queries/attention';

const dirs: string[] = [];
function tempFile(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-migrations-'));
  dirs.push(dir);
  return path.join(dir, 'parley.db');
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The wire thread ID's column: `thread_id` until version 12, `wire_id` from then on. */
const wireIdColumn = (db: Db) =>
  (db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('threads') as string[]).includes('wire_id')
    ? 'wire_id'
    : 'thread_id';

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
      `INSERT INTO threads (id, connection_id, ${wireIdColumn(db)}, local_role_id, local_role, peer_role, root_kind, root_id, started_by) VALUES (1, 1, 'T1', 1, 'assistant', 'analyst', 'conversation', 1, 'local')`,
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
      `INSERT INTO threads (id, connection_id, ${wireIdColumn(db)}, local_role_id, local_role, peer_role, root_kind, root_id, started_by) VALUES (2, 1, 'T2', 1, 'assistant', 'analyst', 'thread', 2, 'peer')`,
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
  11: (db) => {
    // From version 11 the newest row's id, once deleted, is never handed out again.
    const insert = (sql: string, ...params: unknown[]) => Number(db.prepare(sql).run(...params).lastInsertRowid);
    const carol = insert("INSERT INTO people (name, kind) VALUES ('carol', 'member')");
    const chat = insert('INSERT INTO conversations (person_id, role_id) VALUES (?, 1)', carol);
    const thread = insert(
      `INSERT INTO threads (connection_id, ${wireIdColumn(db)}, local_role_id, local_role, peer_role, root_kind, root_id, started_by) VALUES (1, 'T11', 1, 'assistant', 'analyst', 'conversation', ?, 'local')`,
      chat,
    );
    insert(
      "INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (?, 'out', 1, 'for carol', 'acked')",
      thread,
    );
    db.prepare('UPDATE threads SET root_gone = 1 WHERE id = ?').run(thread);
    db.prepare('DELETE FROM people WHERE id = ?').run(carol);
    const dave = insert("INSERT INTO people (name, kind) VALUES ('dave', 'member')");
    insert('INSERT INTO conversations (person_id, role_id) VALUES (?, 1)', dave);
  },
  12: (db) => {
    // From version 12 the wire thread ID is `wire_id`; `thread_id` always means a row of threads.
    const thread = Number(
      db
        .prepare(
          "INSERT INTO threads (connection_id, wire_id, local_role_id, local_role, peer_role, root_kind, root_id, started_by) VALUES (1, 'T12', 1, 'assistant', 'analyst', 'task', 1, 'local')",
        )
        .run().lastInsertRowid,
    );
    db.prepare(
      "INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (?, 'out', 1, 'later', 'queued')",
    ).run(thread);
  },
  13: (db) => {
    db.prepare(
      "INSERT INTO connections (id, fingerprint, cert, name, address, status, revoked_by, address_from) VALUES (2, 'ee00', 'PEM', 'dave', '127.0.0.1:4200', 'revoked', 'peer', 'peer')",
    ).run();
    db.prepare(
      "INSERT INTO invitations (secret_hash, roles, expires_at, used_at, connection_id) VALUES ('h2', '[]', '2030-01-01', '2029-01-01', 2)",
    ).run();
    // Texts that failed, each reason once: who made them fail was not written down yet.
    const fail = db.prepare(
      "INSERT INTO texts (thread_id, direction, seq, body, state, reason) VALUES (?, 'out', ?, ?, 'failed', ?)",
    );
    const t11 = (db.prepare("SELECT id FROM threads WHERE wire_id = 'T11'").get() as { id: number }).id;
    for (const [i, reason] of ['thread', 'roles', 'role', 'queue', 'paused', 'closed', 'revoke'].entries())
      fail.run(t11, i + 2, `failed #${i + 2}`, reason);
    const atDave = Number(
      db
        .prepare(
          "INSERT INTO threads (connection_id, wire_id, local_role_id, local_role, peer_role, root_kind, root_id, started_by, status, close_reason) VALUES (2, 'T13', 1, 'assistant', 'analyst', 'task', 1, 'local', 'closed', 'revoked by dave')",
        )
        .run().lastInsertRowid,
    );
    fail.run(atDave, 1, 'failed at dave', 'revoke');
  },
  14: (db) => {
    // Rows written after the migration wait above the mark until the index catches up;
    // deleting an indexed row takes it out of the index in the same statement.
    const message = db.prepare(
      "INSERT INTO messages (conversation_id, author_kind, author_id, author_name, body) VALUES (1, 'role', 1, 'assistant', 'the café opens at nine')",
    );
    const text = db.prepare(
      "INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (1, 'in', 1, 'revenue rose sharply', 'received')",
    );
    const ids = [message.run().lastInsertRowid, text.run().lastInsertRowid];
    expect(found(db, 'messages', 'cafe')).toEqual([]);
    indexAllWaitingRows(db);
    expect(found(db, 'messages', 'cafe')).toEqual([Number(ids[0])]);
    expect(found(db, 'texts', '"rev"*')).toEqual([Number(ids[1])]);
    db.prepare('DELETE FROM messages WHERE id = ?').run(ids[0]!);
    db.prepare('DELETE FROM texts WHERE id = ?').run(ids[1]!);
    db.prepare('INSERT INTO first_run_dismissals (person_id) VALUES (1)').run();
  },
  15: (db) => {
    // A peer starts an agent conversation (its own root, as insertThread writes it) and texts arrive.
    const insert = (sql: string, ...params: unknown[]) => Number(db.prepare(sql).run(...params).lastInsertRowid);
    const t15 = insert(
      "INSERT INTO threads (connection_id, wire_id, local_role_id, local_role, peer_role, root_kind, root_id, started_by) VALUES (1, 'T15', 1, 'assistant', 'analyst', 'thread', 0, 'peer')",
    );
    db.prepare('UPDATE threads SET root_id = id WHERE id = ?').run(t15);
    db.prepare(
      "INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (?, 'in', 1, 'hi', 'received'), (?, 'in', 2, 'again', 'received')",
    ).run(t15, t15);
    db.prepare("UPDATE texts SET state = 'handled' WHERE thread_id = ? AND seq = 1").run(t15);
    // The queued text of T12 goes out and is acked; T1's conversation is deleted.
    db.prepare("UPDATE texts SET state = 'sent' WHERE body = 'later'").run();
    db.prepare("UPDATE texts SET state = 'acked' WHERE body = 'later'").run();
    db.prepare('UPDATE threads SET root_gone = 1 WHERE id = 1').run();
    // A connection is removed with an agent conversation of its own.
    const erin = insert("INSERT INTO connections (fingerprint, cert, name) VALUES ('dd00', 'PEM', 'erin')");
    const gone = insert(
      "INSERT INTO threads (connection_id, wire_id, local_role_id, local_role, peer_role, root_kind, root_id, started_by) VALUES (?, 'T15b', 1, 'assistant', 'writer', 'task', 1, 'local')",
      erin,
    );
    db.prepare("INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (?, 'out', 1, 'bye', 'failed')").run(
      gone,
    );
    db.prepare('DELETE FROM connections WHERE id = ?').run(erin);
  },
  16: (db) => {
    // carol's connection asks before anything goes out or in; a text each way waits for a person.
    db.prepare("UPDATE connections SET outgoing_policy = 'ask', incoming_policy = 'ask' WHERE id = 1").run();
    const insert = (sql: string, ...params: unknown[]) => Number(db.prepare(sql).run(...params).lastInsertRowid);
    // The orphaned T11's role asked once more, and carol wrote again in T2.
    const thread = db.prepare("SELECT id FROM threads WHERE wire_id = 'T11'").pluck().get() as number;
    const out = insert(
      "INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (?, 'out', 9, 'may I?', 'held')",
      thread,
    );
    const into = insert("INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (2, 'in', 4, 'd', 'held')");
    db.prepare(
      "INSERT INTO approvals (kind, context_kind, context_id, text_id, run_id) VALUES ('outgoing', 'thread', ?, ?, 1), ('incoming', 'thread', 2, ?, 2)",
    ).run(thread, out, into);
    db.prepare(
      `INSERT INTO approvals (kind, context_kind, context_id, run_id, turn_id, title, detail) VALUES ('permission', 'conversation', 1, 1, 1, 'Run ls', '{"options":[]}')`,
    ).run();
  },
  17: (db) => {
    // From version 17 a failed text, a failed turn and a peer's revoke are recorded as
    // they happen, and what people have read is kept.
    const t11 = db.prepare("SELECT id FROM threads WHERE wire_id = 'T11'").pluck().get() as number;
    db.prepare("INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (2, 'in', 5, 'e', 'handled')").run();
    db.prepare(
      "UPDATE texts SET state = 'failed', reason = 'role' WHERE thread_id = ? AND direction = 'out' AND seq = 1",
    ).run(t11);
    db.prepare("UPDATE turns SET status = 'failed', reason = 'the agent crashed' WHERE id = 1").run();
    db.prepare(
      "INSERT INTO task_log (task_id, kind, author_kind, author_id, author_name, body) VALUES (1, 'output', 'role', 1, 'assistant', 'a draft')",
    ).run();
    // dave revokes again, this time recorded as it happens.
    db.prepare("UPDATE connections SET status = 'active' WHERE id = 2").run();
    db.prepare("UPDATE connections SET status = 'revoked', revoked_by = 'peer' WHERE id = 2").run();
    db.prepare("INSERT INTO people (name, kind) VALUES ('frank', 'member')").run();
    const gina = Number(db.prepare("INSERT INTO people (name, kind) VALUES ('gina', 'member')").run().lastInsertRowid);
    db.prepare(
      "INSERT INTO read_marks (person_id, object_kind, object_id, content_id) VALUES (?, 'conversation', 1, 1)",
    ).run(gina);
    db.prepare('DELETE FROM people WHERE id = ?').run(gina);
  },
  18: (db) => {
    // The peer's word on its turn, who failed a text, a deleted root's title.
    db.prepare(
      "UPDATE threads SET peer_turn = 'working', peer_turn_seq = 1, peer_turn_at = '2029-01-01' WHERE wire_id = 'T1'",
    ).run();
    db.prepare(
      "INSERT INTO texts (thread_id, direction, seq, body, state, reason, failed_by) SELECT id, 'out', 2, 'paused here', 'failed', 'paused', 'us' FROM threads WHERE wire_id = 'T13'",
    ).run();
    db.prepare(
      "INSERT INTO deleted_roots (kind, id, title) VALUES ('conversation', 2, 'carol’s conversation with assistant')",
    ).run();
  }, // 21 stands for another branch's migration until it is here.
  19: (db) => {
    // dave's connection may run without a sandbox.
    db.prepare('UPDATE connections SET sandbox_required = 0 WHERE id = 2').run();
  },
  20: (db) => {
    // An owner raising dave's trust.
    db.prepare("UPDATE connections SET trust = 'work' WHERE id = 2").run();
  },
  21: () => undefined,
  // Indexes only: what 0016's seed holds (held texts, pending approvals) is what they index.
  22: () => undefined,
  23: (db) => {
    // A turn state the peer has not acknowledged, and a peer's relay.
    db.prepare(
      "INSERT INTO turn_signals (thread_id, seq, state, waiting_on) SELECT id, 1, 'relayed', '[\"carol/researcher\"]' FROM threads WHERE wire_id = 'T13'",
    ).run();
    db.prepare("UPDATE threads SET peer_relayed_on = '[\"carol/researcher\"]' WHERE wire_id = 'T1'").run();
    db.prepare(
      "INSERT INTO inputs (run_id, kind, body, author_name, answers) SELECT id, 'notice', 'carol stopped', 'parley', 1 FROM runs ORDER BY id LIMIT 1",
    ).run();
  },
  24: (db) => {
    // alice withdrew T1 and bob has not confirmed it; bob paused; a peer's text declined here, untold.
    db.prepare(
      "UPDATE threads SET withdrawn_seq = 1, withdrawn_by = 'alice', withdrawn_at = '2029-01-02', withdraw_untold = 1 WHERE wire_id = 'T1'",
    ).run();
    db.prepare("UPDATE connections SET peer_paused_at = '2029-01-03' WHERE id = 1").run();
    db.prepare("UPDATE texts SET decline_untold = 1 WHERE thread_id = 2 AND direction = 'in' AND seq = 5").run();
  },
  25: (db) => {
    // carol is reached by the DHT as well; a second connection may not claim her key.
    db.prepare(`UPDATE connections SET dht_key = '${'ab'.repeat(32)}', last_path = 'dht' WHERE id = 1`).run();
  },
  26: (db) => {
    // Turn 1 of the conversation's run sent T1's ask and posted the lines (the columns take what the seeds hold).
    db.prepare("UPDATE texts SET sent_by_turn = 1 WHERE body = 'numbers?'").run();
    db.prepare("UPDATE messages SET posted_by_turn = 1 WHERE body = 'hello'").run();
    db.prepare("UPDATE task_log SET posted_by_turn = 1 WHERE body = 'soon'").run();
  },
  27: (db) => {
    // alice always allows carol/analyst's texts in conversation 1, and its use of "edit" everywhere;
    // bob hears nothing of answers, nor of carol; alice paused carol.
    db.prepare(
      "INSERT INTO allow_rules (connection_id, peer_role, kind, root_kind, root_id, created_by, created_by_name) VALUES (1, 'analyst', 'incoming', 'conversation', 1, 1, 'alice')",
    ).run();
    db.prepare(
      "INSERT INTO allow_rules (connection_id, peer_role, kind, tool, created_by, created_by_name) VALUES (1, 'analyst', 'permission', 'edit', 1, 'alice')",
    ).run();
    db.prepare("INSERT INTO notification_prefs (person_id, kind, notify) VALUES (2, 'answer', 0)").run();
    db.prepare('INSERT INTO notification_prefs (person_id, connection_id, notify) VALUES (2, 1, 0)').run();
    db.prepare("UPDATE connections SET paused_by = 'alice', paused_at = '2029-02-01' WHERE id = 1").run();
  },
  28: (db) => {
    // A relay the owner chose, and one added by a person who has since gone.
    db.prepare(
      `INSERT INTO relays (id, key, address, added_by) VALUES (1, '${'cd'.repeat(32)}', 'relay.example:49737', 1)`,
    ).run();
    db.prepare(`INSERT INTO relays (id, key, added_by) VALUES (2, '${'ef'.repeat(32)}', 2)`).run();
  },
  // Indexes only: the asks earlier seeds hold (26 named their turns) are what they index.
  29: () => undefined,
};

/** Row ids the search index finds for an FTS5 query in one of its tables. */
const found = (db: Db, table: string, query: string) =>
  (
    db.prepare(`SELECT rowid FROM ${table}_search WHERE ${table}_search MATCH ? ORDER BY rowid`).all(query) as Array<{
      rowid: number;
    }>
  ).map((row) => row.rowid);

/**
 * FTS5's own check that an index agrees with its table, row for row. It reads every row of
 * the table, so rows a later version's seed wrote above the mark are indexed first, as the
 * next search would.
 */
function indexMatchesTables(db: Db): void {
  indexAllWaitingRows(db);
  for (const table of ['messages', 'tasks', 'task_log', 'texts'])
    db.prepare(`INSERT INTO ${table}_search (${table}_search, rank) VALUES ('integrity-check', 1)`).run();
}

/** What must still be true after each later migration, for the data of each version. */
const checks: Record<number, (db: Db) => void> = {
  1: (db) =>
    expect(db.prepare('SELECT name, fingerprint FROM installation').get()).toEqual({
      name: 'alice',
      fingerprint: 'ab12',
    }),
  2: (db) => {
    expect(db.prepare('SELECT name, kind FROM people WHERE id <= 2 ORDER BY id').all()).toEqual([
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
    expect(db.prepare('SELECT name, status, queue_limit FROM connections WHERE id = 1').all()).toEqual([
      { name: 'carol', status: 'active', queue_limit: 100 },
    ]);
    expect(db.prepare('SELECT count(*) AS n FROM exposed_roles WHERE connection_id = 1').get()).toEqual({ n: 1 });
  },
  8: (db) => {
    expect(
      db.prepare(`SELECT ${wireIdColumn(db)} AS wire, status, started_by FROM threads WHERE id = 1`).all(),
    ).toEqual([{ wire: 'T1', status: 'open', started_by: 'local' }]);
    expect(db.prepare('SELECT body, state FROM texts WHERE thread_id = 1').all()).toEqual([
      { body: 'numbers?', state: 'acked' },
    ]);
  },
  9: (db) => {
    // The seqs are read from the texts now; the threads keep everything else.
    expect(lastSeq(db, 1, 'out')).toBe(1);
    expect(lastSeq(db, 1, 'in')).toBe(0);
    expect(lastSeq(db, 2, 'in')).toBeGreaterThanOrEqual(2);
    expect(
      db.prepare(`SELECT ${wireIdColumn(db)} AS wire, started_by FROM threads WHERE id <= 2 ORDER BY id`).all(),
    ).toEqual([
      { wire: 'T1', started_by: 'local' },
      { wire: 'T2', started_by: 'peer' },
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
  11: (db) => {
    // Carol (3) and her conversation (2) went with her; dave and his conversation got new ids.
    expect(db.prepare("SELECT id, name FROM people WHERE name IN ('carol', 'dave')").all()).toEqual([
      { id: 4, name: 'dave' },
    ]);
    expect(db.prepare('SELECT id, person_id FROM conversations WHERE person_id = 4').all()).toEqual([
      { id: 3, person_id: 4 },
    ]);
    // The agent conversation of carol's deleted conversation still names it, and only it.
    expect(db.prepare(`SELECT root_id, root_gone FROM threads WHERE ${wireIdColumn(db)} = 'T11'`).get()).toEqual({
      root_id: 2,
      root_gone: 1,
    });
    expect(db.prepare('SELECT count(*) AS n FROM conversations WHERE id = 2').get()).toEqual({ n: 0 });
  },
  12: (db) => {
    // Every thread keeps its wire ID under the new name, and the queries find it there.
    expect(
      db
        .prepare("SELECT wire_id FROM threads WHERE id <= (SELECT id FROM threads WHERE wire_id = 'T12') ORDER BY id")
        .pluck()
        .all(),
    ).toEqual(['T1', 'T2', 'T11', 'T12']);
    expect(threadByWireId(db, 1, 'T2')?.id).toBe(2);
    const t12 = threadByWireId(db, 1, 'T12')!;
    expect(t12).toMatchObject({ wire_id: 'T12', root_kind: 'task' });
    expect(db.prepare('SELECT body FROM texts WHERE thread_id = ?').pluck().all(t12.id)).toEqual(['later']);
    // The pair (connection, wire ID) is still unique.
    expect(() =>
      db
        .prepare(
          "INSERT INTO threads (connection_id, wire_id, local_role, peer_role, root_kind, root_id, started_by) VALUES (1, 'T1', 'x', 'y', 'thread', 9, 'peer')",
        )
        .run(),
    ).toThrow(/UNIQUE/);
  },
  13: (db) => {
    // carol's address came from the invitation alice accepted; dave revoked us.
    expect(db.prepare('SELECT name, address_from, revoked_by FROM connections ORDER BY id').all()).toEqual([
      { name: 'carol', address_from: 'invitation', revoked_by: null },
      { name: 'dave', address_from: 'peer', revoked_by: 'peer' },
    ]);
  },
  14: (db) => {
    // What was there before the migration is indexed by it, diacritics folded.
    expect(found(db, 'messages', 'hello')).toEqual([1]);
    expect(found(db, 'tasks', 'report')).toEqual([1]);
    expect(found(db, 'tasks', 'sources')).toEqual([2]);
    expect(found(db, 'task_log', 'soon')).toEqual([1]);
    expect(found(db, 'texts', 'numbers')).toEqual([1]);
    // What was deleted is gone from it; every index agrees with its table.
    expect(found(db, 'messages', 'cafe')).toEqual([]);
    expect(found(db, 'texts', 'revenue')).toEqual([]);
    indexMatchesTables(db);
    expect(db.prepare('SELECT count(*) AS n FROM first_run_dismissals').get()).toEqual({ n: 1 });
    // Only a revoked connection can be marked removed.
    expect(() => db.prepare("UPDATE connections SET removed_at = 'now' WHERE status <> 'revoked'").run()).toThrow(
      /CHECK constraint/,
    );
  },
  15: (db) => {
    // What each thread keeps of its texts, and each list of its threads, is what they hold.
    const states = ['queued', 'sent', 'acked', 'failed', 'received', 'handled'];
    const kept = `SELECT id, last_text_id, ${states.map((state) => `texts_${state}`).join(', ')} FROM threads ORDER BY id`;
    const derived = `SELECT id, (SELECT max(id) FROM texts WHERE thread_id = threads.id) AS last_text_id,
      ${states.map((state) => `(SELECT count(*) FROM texts WHERE thread_id = threads.id AND state = '${state}') AS texts_${state}`).join(', ')}
      FROM threads ORDER BY id`;
    expect(db.prepare(kept).all()).toEqual(db.prepare(derived).all());
    const sizes = db
      .prepare('SELECT list, root_kind, root_id, size FROM thread_list_sizes WHERE size != 0 ORDER BY 1, 2, 3')
      .all();
    const lists = db
      .prepare(
        `SELECT * FROM (
           SELECT 'root' AS list, root_kind, root_id, count(*) AS size FROM threads GROUP BY root_kind, root_id
           UNION ALL SELECT 'peerStarted', '', 0, count(*) FROM threads WHERE started_by = 'peer' HAVING count(*) > 0
           UNION ALL SELECT 'orphaned', '', 0, count(*) FROM threads WHERE root_gone = 1 HAVING count(*) > 0)
         ORDER BY 1, 2, 3`,
      )
      .all();
    expect(sizes).toEqual(lists);
    expect(lists.length).toBeGreaterThan(0);
    // The lists read through them: the peer-started ones, newest text first. The list
    // query is the latest version's (it reads what later migrations add), so only there.
    if (schemaVersion(db) < latestVersion) return;
    const peerStarted = pageThreads(db, { peerStarted: true }, 0, 10);
    expect(peerStarted.total).toBe(peerStarted.rows.length);
    expect(peerStarted.rows.map((row) => row.wire_id)).toEqual(
      db
        .prepare(
          "SELECT wire_id FROM threads WHERE started_by = 'peer' ORDER BY status DESC, last_text_id DESC, id DESC",
        )
        .pluck()
        .all(),
    );
  },
  16: (db) => {
    expect(db.prepare('SELECT name, outgoing_policy, incoming_policy FROM connections ORDER BY id').all()).toEqual([
      { name: 'carol', outgoing_policy: 'ask', incoming_policy: 'ask' },
      { name: 'dave', outgoing_policy: 'send', incoming_policy: 'run' },
    ]);
    expect(
      db
        .prepare(
          'SELECT approvals.kind, approvals.state, texts.body, texts.state AS text FROM approvals LEFT JOIN texts ON texts.id = approvals.text_id ORDER BY approvals.id',
        )
        .all(),
    ).toEqual([
      { kind: 'outgoing', state: 'pending', body: 'may I?', text: 'held' },
      { kind: 'incoming', state: 'pending', body: 'd', text: 'held' },
      { kind: 'permission', state: 'pending', body: null, text: null },
    ]);
    // A held text waits: it is not the run's work until a person lets it in.
    expect(pendingInputs(db, getRun(db, 2)!).map((input) => input.body)).not.toContain('d');
    // A text approval names its text, a permission request none.
    expect(() =>
      db.prepare("INSERT INTO approvals (kind, context_kind, context_id) VALUES ('outgoing', 'thread', 1)").run(),
    ).toThrow(/CHECK/);
    expect(() =>
      db.prepare("INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (1, 'out', 99, 'x', 'lost')").run(),
    ).toThrow(/CHECK/);
    // Each thread counts its held texts with the rest (0015's facts, one state more).
    const states = ['held', 'queued', 'sent', 'acked', 'failed', 'received', 'handled'];
    const kept = `SELECT id, ${states.map((state) => `texts_${state}`).join(', ')} FROM threads ORDER BY id`;
    const derived = `SELECT id, ${states
      .map(
        (state) => `(SELECT count(*) FROM texts WHERE thread_id = threads.id AND state = '${state}') AS texts_${state}`,
      )
      .join(', ')} FROM threads ORDER BY id`;
    expect(db.prepare(kept).all()).toEqual(db.prepare(derived).all());
  },
  17: (db) => {
    // Everyone who was here before has read what was there: only what came after is new to bob.
    const bob = readFloor(db, 2);
    const hello = db.prepare("SELECT id FROM messages WHERE body = 'hello'").pluck().get() as number;
    expect(bob.message_id).toBeGreaterThanOrEqual(hello);
    expect(unreadMessages(db, 2, bob)).toEqual([]);
    const t11 = db.prepare("SELECT id FROM threads WHERE wire_id = 'T11'").pluck().get() as number;
    expect(unreadTaskLog(db, 2, bob).map((r) => [r.object_id, r.n])).toEqual([[1, 1]]);
    // The text that came in is news of its agent conversation's root (here, one the peer started).
    expect(incomingNews(db, 2, bob).map((t) => [t.root_kind, t.root_id, t.n])).toEqual([['thread', 2, 1]]);
    expect(unreadEvents(db, 2, bob).map((e) => [e.kind, e.object_kind, e.object_id, e.reason])).toEqual([
      ['text_failed', 'thread', t11, 'role'],
      ['turn_failed', 'conversation', 1, 'the agent crashed'],
      ['peer_revoked', 'connection', 2, null],
    ]);
    // Someone added later starts with all of it read.
    const frank = db.prepare("SELECT id FROM people WHERE name = 'frank'").pluck().get() as number;
    const floor = readFloor(db, frank);
    expect(unreadTaskLog(db, frank, floor)).toEqual([]);
    expect(unreadEvents(db, frank, floor)).toEqual([]);
    // A person's marks and floor go with them.
    expect(
      db.prepare('SELECT count(*) FROM read_marks WHERE person_id NOT IN (SELECT id FROM people)').pluck().get(),
    ).toBe(0);
    expect(
      db.prepare('SELECT count(*) FROM read_floors WHERE person_id NOT IN (SELECT id FROM people)').pluck().get(),
    ).toBe(0);
    // Event ids are never handed out again (DESIGN §11.1): marks compare against them.
    expect(
      db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'attention_events'").pluck().get(),
    ).toMatch(/\bid INTEGER PRIMARY KEY AUTOINCREMENT\b/);
  },
  18: (db) => {
    // Who made a text fail, where only one side could have: the peer's rejections and
    // its revoke are its doing, a closed thread here ours; a pause is not known.
    expect(
      db.prepare("SELECT reason, failed_by FROM texts WHERE body LIKE 'failed %' ORDER BY thread_id, seq").all(),
    ).toEqual([
      { reason: 'thread', failed_by: 'peer' },
      { reason: 'roles', failed_by: 'peer' },
      { reason: 'role', failed_by: 'peer' },
      { reason: 'queue', failed_by: 'peer' },
      { reason: 'paused', failed_by: null },
      { reason: 'closed', failed_by: 'us' },
      // carol's connection was never revoked, so who did is not known.
      { reason: 'revoke', failed_by: null },
      // dave revoked it.
      { reason: 'revoke', failed_by: 'peer' },
    ]);
    expect(db.prepare("SELECT failed_by FROM texts WHERE state != 'failed' AND failed_by IS NOT NULL").all()).toEqual(
      [],
    );
    expect(db.prepare("SELECT peer_turn, peer_turn_seq FROM threads WHERE wire_id = 'T1'").get()).toEqual({
      peer_turn: 'working',
      peer_turn_seq: 1,
    });
    expect(db.prepare('SELECT count(*) AS n FROM threads WHERE peer_turn IS NOT NULL').get()).toEqual({ n: 1 });
    expect(db.prepare("SELECT failed_by FROM texts WHERE body = 'paused here'").get()).toEqual({
      failed_by: 'us',
    });
    expect(db.prepare('SELECT kind, id, title FROM deleted_roots').all()).toEqual([
      { kind: 'conversation', id: 2, title: 'carol’s conversation with assistant' },
    ]);
    expect(() => db.prepare("UPDATE threads SET peer_turn = 'asleep' WHERE wire_id = 'T1'").run()).toThrow(/CHECK/);
  },
  19: (db) => {
    expect(db.prepare('SELECT id, sandbox_required FROM connections WHERE id <= 2 ORDER BY id').all()).toEqual([
      { id: 1, sandbox_required: 1 },
      { id: 2, sandbox_required: 0 },
    ]);
    expect(() => db.prepare('UPDATE connections SET sandbox_required = 2 WHERE id = 1').run()).toThrow(/CHECK/);
  },
  20: (db) => {
    // Every connection, old or new, starts at the safest level; only an owner's choice changes it.
    expect(db.prepare('SELECT name, trust FROM connections ORDER BY id').all()).toEqual(
      (db.prepare('SELECT name, id FROM connections ORDER BY id').all() as Array<{ name: string; id: number }>).map(
        (row) => ({ name: row.name, trust: row.id === 2 ? 'work' : 'answer' }),
      ),
    );
    expect(
      (db.pragma('table_info(connections)') as Array<{ name: string; dflt_value: string | null }>).find(
        (column) => column.name === 'trust',
      )?.dflt_value,
    ).toBe("'answer'");
    expect(() => db.prepare("UPDATE connections SET trust = 'everything' WHERE id = 1").run()).toThrow(/CHECK/);
  },
  21: () => undefined,
  22: (db) => {
    // The held texts and the pending approvals are found through their own indexes.
    const plan = (sql: string) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>)
        .map((line) => line.detail)
        .join('\n');
    expect(
      plan("SELECT id FROM texts WHERE thread_id = 1 AND seq < 91 AND state = 'held' AND direction = 'in'"),
    ).toContain('USING COVERING INDEX texts_held_in');
    expect(plan("SELECT DISTINCT context_kind, context_id FROM approvals WHERE state = 'pending'")).toContain(
      'approvals_pending_place',
    );
    const heldIn = (using: string) =>
      db
        .prepare(`SELECT body FROM texts ${using} WHERE state = 'held' AND direction = 'in' ORDER BY body`)
        .pluck()
        .all();
    expect(heldIn('INDEXED BY texts_held_in')).toEqual(heldIn('NOT INDEXED'));
    expect(heldIn('INDEXED BY texts_held_in')).toContain('d');
    expect(
      db
        .prepare("SELECT count(*) FROM approvals INDEXED BY approvals_pending_place WHERE state = 'pending'")
        .pluck()
        .get(),
    ).toBe(db.prepare("SELECT count(*) FROM approvals WHERE state = 'pending'").pluck().get());
  },
  23: (db) => {
    expect(db.prepare('SELECT seq, state, waiting_on FROM turn_signals').all()).toEqual([
      { seq: 1, state: 'relayed', waiting_on: '["carol/researcher"]' },
    ]);
    expect(db.prepare("SELECT peer_relayed_on FROM threads WHERE wire_id = 'T1'").pluck().get()).toBe(
      '["carol/researcher"]',
    );
    expect(() => db.prepare("UPDATE turn_signals SET state = 'asleep'").run()).toThrow(/CHECK/);
    // Every input from before answers for nothing; the relay's notice does.
    expect(db.prepare('SELECT body, answers FROM inputs WHERE answers != 0').all()).toEqual([
      { body: 'carol stopped', answers: 1 },
    ]);
  },
  24: (db) => {
    // Nothing before it was withdrawn, declined untold, or paused by a peer.
    expect(
      db
        .prepare(
          'SELECT wire_id, withdrawn_seq, withdrawn_by, withdraw_untold FROM threads WHERE withdrawn_seq IS NOT NULL',
        )
        .all(),
    ).toEqual([{ wire_id: 'T1', withdrawn_seq: 1, withdrawn_by: 'alice', withdraw_untold: 1 }]);
    expect(db.prepare('SELECT body FROM texts WHERE decline_untold = 1').pluck().all()).toEqual(['e']);
    expect(db.prepare('SELECT id, peer_paused_at FROM connections WHERE peer_paused_at IS NOT NULL').all()).toEqual([
      { id: 1, peer_paused_at: '2029-01-03' },
    ]);
    // The resends look only at what waits to be told.
    expect(
      db
        .prepare('EXPLAIN QUERY PLAN SELECT id FROM threads WHERE connection_id = 1 AND withdraw_untold = 1')
        .all()
        .map((row) => (row as { detail: string }).detail),
    ).toEqual([expect.stringContaining('threads_withdraw_untold')]);
    expect(() => db.prepare("UPDATE threads SET withdraw_untold = 2 WHERE wire_id = 'T1'").run()).toThrow(/CHECK/);
  },
  25: (db) => {
    // Every connection had only its address before; the DHT key and the relays start empty.
    expect(db.prepare('SELECT relays FROM connections WHERE id = 2').get()).toEqual({ relays: '[]' });
    expect(db.prepare('SELECT dht_key, last_path FROM connections WHERE id = 1').get()).toEqual({
      dht_key: 'ab'.repeat(32),
      last_path: 'dht',
    });
    expect(() => db.prepare(`UPDATE connections SET dht_key = '${'ab'.repeat(32)}' WHERE id = 2`).run()).toThrow(
      /UNIQUE/,
    );
    expect(() => db.prepare("UPDATE connections SET dht_key = 'short' WHERE id = 2").run()).toThrow(/CHECK/);
  },
  26: (db) => {
    // The held ask names its run, and that run had one turn by then: that turn sent it. Nothing else is known.
    expect(db.prepare('SELECT body, sent_by_turn FROM texts WHERE sent_by_turn IS NOT NULL ORDER BY id').all()).toEqual(
      [
        { body: 'numbers?', sent_by_turn: 1 },
        { body: 'may I?', sent_by_turn: 1 },
      ],
    );
    expect(db.prepare('SELECT body FROM messages WHERE posted_by_turn = 1').pluck().all()).toEqual(['hello']);
    expect(db.prepare('SELECT body FROM task_log WHERE posted_by_turn = 1').pluck().all()).toEqual(['soon']);
    expect(db.prepare('SELECT count(*) FROM task_log WHERE posted_by_turn IS NULL').pluck().get()).toBeGreaterThan(0);
    expect(() => db.prepare('UPDATE texts SET sent_by_turn = 999 WHERE id = 1').run()).toThrow(/FOREIGN KEY/);
    // A turn that goes clears what names it through an index, not a scan of every text and line.
    const plan = (sql: string) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join('\n');
    expect(plan('SELECT id FROM texts WHERE sent_by_turn = 1')).toContain('texts_sent_by_turn');
    expect(plan('SELECT id FROM messages WHERE posted_by_turn = 1')).toContain('messages_posted_by_turn');
    expect(plan('SELECT id FROM task_log WHERE posted_by_turn = 1')).toContain('task_log_posted_by_turn');
  },
  27: (db) => {
    // dave revoked before this version: the peer did, by its name. Who acted here before is not known.
    expect(db.prepare('SELECT id, revoked_by_name FROM connections WHERE revoked_by_name IS NOT NULL').all()).toEqual([
      { id: 2, revoked_by_name: 'dave' },
    ]);
    expect(db.prepare('SELECT paused_by, paused_at FROM connections WHERE id = 1').get()).toEqual({
      paused_by: 'alice',
      paused_at: '2029-02-01',
    });
    expect(db.prepare('SELECT kind, tool, root_kind, root_id FROM allow_rules ORDER BY id').all()).toEqual([
      { kind: 'incoming', tool: null, root_kind: 'conversation', root_id: 1 },
      { kind: 'permission', tool: 'edit', root_kind: null, root_id: null },
    ]);
    // The same choice twice is one rule, a root of no kind none, a tool only for a tool request.
    expect(() =>
      db
        .prepare(
          "INSERT INTO allow_rules (connection_id, peer_role, kind, tool, created_by_name) VALUES (1, 'analyst', 'permission', 'edit', 'alice')",
        )
        .run(),
    ).toThrow(/UNIQUE/);
    expect(() =>
      db
        .prepare(
          "INSERT INTO allow_rules (connection_id, peer_role, kind, root_id, created_by_name) VALUES (1, 'analyst', 'outgoing', 5, 'alice')",
        )
        .run(),
    ).toThrow(/CHECK/);
    expect(() =>
      db
        .prepare(
          "INSERT INTO allow_rules (connection_id, peer_role, kind, tool, created_by_name) VALUES (1, 'analyst', 'incoming', 'edit', 'alice')",
        )
        .run(),
    ).toThrow(/CHECK/);
    expect(
      db.prepare('SELECT kind, connection_id, notify FROM notification_prefs WHERE person_id = 2 ORDER BY kind').all(),
    ).toEqual([
      { kind: null, connection_id: 1, notify: 0 },
      { kind: 'answer', connection_id: null, notify: 0 },
    ]);
    expect(() =>
      db.prepare("INSERT INTO notification_prefs (person_id, kind, notify) VALUES (2, 'answer', 1)").run(),
    ).toThrow(/UNIQUE/);
    expect(() =>
      db
        .prepare("INSERT INTO notification_prefs (person_id, kind, connection_id, notify) VALUES (2, 'answer', 1, 1)")
        .run(),
    ).toThrow(/CHECK/);
    // A rule goes with the conversation it was made in.
    const conversation = Number(
      db.prepare('INSERT INTO conversations (person_id, role_id) VALUES (1, 1)').run().lastInsertRowid,
    );
    db.prepare(
      "INSERT INTO allow_rules (connection_id, peer_role, kind, root_kind, root_id, created_by_name) VALUES (1, 'analyst', 'outgoing', 'conversation', ?, 'alice')",
    ).run(conversation);
    db.prepare('DELETE FROM conversations WHERE id = ?').run(conversation);
    expect(db.prepare("SELECT count(*) FROM allow_rules WHERE kind = 'outgoing'").pluck().get()).toBe(0);
  },
  28: (db) => {
    // The relays people chose are kept as they were added: each key once, lowercase hex of 32 bytes.
    expect(db.prepare('SELECT id, key, address, added_by FROM relays ORDER BY id').all()).toEqual([
      { id: 1, key: 'cd'.repeat(32), address: 'relay.example:49737', added_by: 1 },
      { id: 2, key: 'ef'.repeat(32), address: null, added_by: 2 },
    ]);
    expect(() => db.prepare(`INSERT INTO relays (key) VALUES ('${'cd'.repeat(32)}')`).run()).toThrow(/UNIQUE/);
    expect(() => db.prepare("INSERT INTO relays (key) VALUES ('short')").run()).toThrow(/CHECK/);
    expect(() => db.prepare(`INSERT INTO relays (key) VALUES ('${'CD'.repeat(32)}')`).run()).toThrow(/CHECK/);
  },
  29: (db) => {
    // The asks of a root are read off the new indexes, and the indexes hold exactly the asks.
    const sql = (threads: string, texts: string) =>
      `SELECT texts.id FROM threads ${threads} JOIN texts ${texts} ON texts.thread_id = threads.id AND texts.direction = 'out'
       WHERE threads.root_kind = ? AND threads.root_id = ? AND threads.started_by = 'local'
         AND texts.sent_by_turn IS NOT NULL AND texts.created_at >= ? ORDER BY texts.id`;
    const plan = (
      db.prepare(`EXPLAIN QUERY PLAN ${sql('', '')}`).all('conversation', 1, '') as Array<{ detail: string }>
    )
      .map((line) => line.detail)
      .join('\n');
    expect(plan).toContain('COVERING INDEX threads_local_root');
    expect(plan).toContain('USING INDEX texts_asks (thread_id=? AND created_at>?)');
    const roots = db
      .prepare("SELECT DISTINCT root_kind, root_id FROM threads WHERE started_by = 'local'")
      .all() as Array<{ root_kind: string; root_id: number }>;
    expect(roots.length).toBeGreaterThan(1);
    const asks = (root: { root_kind: string; root_id: number }, since: string, threads: string, texts: string) =>
      db.prepare(sql(threads, texts)).pluck().all(root.root_kind, root.root_id, since);
    for (const root of roots)
      for (const since of ['', '2000-01-01', '2999-01-01'])
        expect(asks(root, since, 'INDEXED BY threads_local_root', 'INDEXED BY texts_asks')).toEqual(
          asks(root, since, 'NOT INDEXED', 'NOT INDEXED'),
        );
    const bodies = asks({ root_kind: 'conversation', root_id: 1 }, '', '', '').map((id) =>
      db.prepare('SELECT body FROM texts WHERE id = ?').pluck().get(id),
    );
    expect(bodies).toEqual(['numbers?']);
  },
};

/** Every table that hands out ids (DESIGN §11.1: never twice). */
const idTables = [
  'people',
  'sign_in_tokens',
  'roles',
  'role_tokens',
  'conversations',
  'messages',
  'tasks',
  'task_log',
  'runs',
  'turns',
  'inputs',
  'connections',
  'invitations',
  'threads',
  'texts',
];

/** A table's shape as SQLite reports it: columns, foreign keys, indexes (with their columns and conditions), triggers. */
function shapeOf(db: Db, table: string) {
  const indexes = (
    db.pragma(`index_list(${table})`) as Array<{ name: string; unique: number; origin: string; partial: number }>
  )
    .map((index) => ({
      unique: index.unique,
      origin: index.origin,
      partial: index.partial,
      columns: (db.pragma(`index_info(${index.name})`) as Array<{ name: string }>).map((c) => c.name),
      // Named indexes keep their names and their WHERE; automatic ones are named by SQLite.
      sql: index.origin === 'c' ? normalise(indexSql(db, index.name)) : null,
      name: index.origin === 'c' ? index.name : null,
    }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  const triggers = (
    db
      .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? ORDER BY name")
      .all(table) as Array<{
      name: string;
      sql: string;
    }>
  ).map((t) => ({ name: t.name, sql: normalise(t.sql) }));
  return {
    columns: db.pragma(`table_xinfo(${table})`),
    foreignKeys: db.pragma(`foreign_key_list(${table})`),
    indexes,
    triggers,
  };
}
const indexSql = (db: Db, name: string) =>
  (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?").get(name) as { sql: string }).sql;
const normalise = (sql: string) =>
  sql
    .replace(/--[^\n]*/g, '')
    .replace(/\s+/g, ' ')
    .trim();

describe('migrations', () => {
  it('has a seed and a check for every registered migration, numbered 1..n', () => {
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
    expect(Object.keys(seeds).map(Number)).toEqual(migrations.map((m) => m.version));
    expect(Object.keys(checks).map(Number)).toEqual(migrations.map((m) => m.version));
  });

  for (const migration of migrations) {
    it(`${String(migration.version).padStart(4, '0')}-${migration.name} keeps the data of a database that holds some`, () => {
      const file = tempFile();
      // Each earlier version's data is written with that version's schema, then carried up.
      const db = openDatabase(file, { targetVersion: 0 });
      for (let v = 1; v < migration.version; v++) {
        migrate(db, v);
        seeds[v]!(db);
      }
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

  it('0011 rebuilds every table that hands out ids with AUTOINCREMENT and changes nothing else', () => {
    const before = openDatabase(tempFile(), { targetVersion: 10 });
    const after = openDatabase(tempFile(), { targetVersion: 11 });
    const tableSql = (db: Db, table: string) =>
      (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) as { sql: string }).sql;
    for (const table of idTables) {
      expect(tableSql(before, table), table).not.toMatch(/AUTOINCREMENT/);
      expect(tableSql(after, table), table).toMatch(/\bid INTEGER PRIMARY KEY AUTOINCREMENT\b/);
      expect(shapeOf(after, table), table).toEqual(shapeOf(before, table));
    }
    // No table was lost or added on the way, and none is left half-built.
    const tables = (db: Db) =>
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'sqlite_sequence' ORDER BY name")
        .pluck()
        .all();
    expect(tables(after)).toEqual(tables(before));
    expect(after.pragma('foreign_keys', { simple: true })).toBe(1);
    before.close();
    after.close();
  });

  it('0011 never hands out an id deleted before it that an agent conversation, a run or a comment still names', () => {
    const file = tempFile();
    const db = openDatabase(file, { targetVersion: 10 });
    for (let v = 1; v <= 10; v++) seeds[v]!(db);
    // The newest conversation and task are deleted at version 10, leaving their agent
    // conversations (root gone) behind; so is a person a task comment still names.
    db.prepare("INSERT INTO people (id, name, kind) VALUES (7, 'erin', 'member')").run();
    db.prepare(
      "INSERT INTO task_log (task_id, kind, author_kind, author_id, author_name, body) VALUES (1, 'comment', 'person', 7, 'erin', 'hi')",
    ).run();
    db.prepare('DELETE FROM people WHERE id = 7').run();
    db.prepare('INSERT INTO conversations (id, person_id, role_id) VALUES (5, 1, 1)').run();
    db.prepare("INSERT INTO tasks (id, role_id, title) VALUES (6, 1, 'gone')").run();
    db.prepare(
      "INSERT INTO threads (id, connection_id, thread_id, local_role_id, local_role, peer_role, root_kind, root_id, started_by, root_gone) VALUES (8, 1, 'T8', 1, 'assistant', 'analyst', 'conversation', 5, 'local', 1), (9, 1, 'T9', 1, 'assistant', 'analyst', 'task', 6, 'local', 1)",
    ).run();
    db.prepare('DELETE FROM conversations WHERE id = 5').run();
    db.prepare('DELETE FROM tasks WHERE id = 6').run();
    migrate(db, 11);
    for (let v = 1; v <= 10; v++) checks[v]!(db);
    const insert = (sql: string) => Number(db.prepare(sql).run().lastInsertRowid);
    expect(insert("INSERT INTO people (name, kind) VALUES ('frank', 'member')")).toBe(8);
    expect(insert('INSERT INTO conversations (person_id, role_id) VALUES (1, 1)')).toBe(6);
    expect(insert("INSERT INTO tasks (role_id, title) VALUES (1, 'new')")).toBe(7);
    expect(db.prepare('SELECT id, root_kind, root_id FROM threads WHERE id IN (8, 9) ORDER BY id').all()).toEqual([
      { id: 8, root_kind: 'conversation', root_id: 5 },
      { id: 9, root_kind: 'task', root_id: 6 },
    ]);
    expect(db.pragma('foreign_key_check')).toEqual([]);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });

  it('0026 names the turn that sent a held ask only where the stored runs and turns leave one possible', () => {
    const db = openDatabase(tempFile(), { targetVersion: 25 });
    for (let v = 1; v <= 25; v++) seeds[v]!(db);
    // Run 2 (T2's) gets turns at 10:00 and 11:00, and two at 12:00 exactly.
    db.prepare(
      `INSERT INTO turns (id, run_id, status, started_at, ended_at) VALUES
         (21, 2, 'done', '2030-01-01T10:00:00.000Z', '2030-01-01T10:05:00.000Z'),
         (22, 2, 'done', '2030-01-01T11:00:00.000Z', '2030-01-01T11:05:00.000Z'),
         (23, 2, 'done', '2030-01-01T12:00:00.000Z', '2030-01-01T12:01:00.000Z'),
         (24, 2, 'done', '2030-01-01T12:00:00.000Z', '2030-01-01T12:02:00.000Z')`,
    ).run();
    const held = (seq: number, at: string, runId: number | null) => {
      const textId = Number(
        db
          .prepare(
            "INSERT INTO texts (thread_id, direction, seq, body, state, created_at) VALUES (2, 'out', ?, ?, 'held', ?)",
          )
          .run(seq, `at ${at}`, at).lastInsertRowid,
      );
      db.prepare(
        "INSERT INTO approvals (kind, context_kind, context_id, text_id, run_id) VALUES ('outgoing', 'thread', 2, ?, ?)",
      ).run(textId, runId);
      return textId;
    };
    const during = held(31, '2030-01-01T10:02:00.000Z', 2);
    const atLaterStart = held(32, '2030-01-01T11:00:00.000Z', 2);
    const afterTie = held(33, '2030-01-01T12:00:30.000Z', 2);
    const beforeAny = held(34, '2029-12-31T00:00:00.000Z', 2);
    const noRun = held(35, '2030-01-01T10:03:00.000Z', null);
    migrate(db, 26);
    const sentBy = (id: number) => db.prepare('SELECT sent_by_turn FROM texts WHERE id = ?').pluck().get(id);
    expect(sentBy(during)).toBe(21);
    // 10:00's turn could have sent it as it ended, just as 11:00's began.
    expect(sentBy(atLaterStart)).toBeNull();
    expect(sentBy(afterTie)).toBeNull();
    expect(sentBy(beforeAny)).toBeNull();
    expect(sentBy(noRun)).toBeNull();
    // A turn that goes leaves NULL behind.
    db.prepare('DELETE FROM turns WHERE id = 21').run();
    expect(sentBy(during)).toBeNull();
    expect(db.pragma('foreign_key_check')).toEqual([]);
    db.close();
  });

  it('0016 rebuilds texts with the held state and changes nothing else: rows, ids, indexes, triggers, the id sequence', () => {
    const file = tempFile();
    const db = openDatabase(file, { targetVersion: 0 });
    for (let v = 1; v <= 15; v++) {
      migrate(db, v);
      seeds[v]!(db);
    }
    // A trigger of some later migration's on texts, and a deleted newest text.
    db.exec(
      'CREATE TABLE text_audit (text_id INTEGER); CREATE TRIGGER texts_audit AFTER INSERT ON texts BEGIN INSERT INTO text_audit VALUES (new.id); END;',
    );
    const top = Number(
      db
        .prepare("INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (1, 'out', 50, 'gone', 'acked')")
        .run().lastInsertRowid,
    );
    db.prepare('DELETE FROM texts WHERE id = ?').run(top);
    const rows = db.prepare('SELECT * FROM texts ORDER BY id').all();
    const before = shapeOf(db, 'texts');
    const inputsBefore = db.prepare('SELECT id, text_id FROM inputs ORDER BY id').all();
    migrate(db, 16);
    expect(db.prepare('SELECT * FROM texts ORDER BY id').all()).toEqual(rows);
    // Inputs still point at their texts (dropping the old table with keys on would have nulled them).
    expect(db.prepare('SELECT id, text_id FROM inputs ORDER BY id').all()).toEqual(inputsBefore);
    const after = shapeOf(db, 'texts');
    const waiting = (shape: typeof before) => shape.indexes.find((index) => index.name === 'texts_waiting')?.sql;
    expect(waiting(after)).toBe(
      "CREATE INDEX texts_waiting ON texts(state) WHERE state IN ('held', 'queued', 'sent', 'received')",
    );
    // What 0016 changes: what waits, and each thread's counts by state (0015), take held texts in.
    const changed = [
      'texts_waiting',
      'texts_insert_thread_facts',
      'texts_state_thread_facts',
      'texts_delete_thread_facts',
    ];
    for (const name of changed.slice(1))
      expect(after.triggers.find((trigger) => trigger.name === name)?.sql, name).toContain("'held'");
    const unchanged = (shape: typeof before) => ({
      ...shape,
      indexes: shape.indexes.filter((index) => !changed.includes(index.name ?? '')),
      triggers: shape.triggers.filter((trigger) => !changed.includes(trigger.name)),
    });
    expect(unchanged(after)).toEqual(unchanged(before));
    // search's triggers (0014) are among those kept as they were.
    expect(after.triggers.map((trigger) => trigger.name)).toEqual(expect.arrayContaining(['texts_search_insert']));
    const counts = () =>
      db.prepare('SELECT texts_held AS held, texts_queued AS queued FROM threads WHERE id = 1').get() as {
        held: number;
        queued: number;
      };
    const start = counts();
    const id = Number(
      db
        .prepare("INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (1, 'out', 51, 'new', 'held')")
        .run().lastInsertRowid,
    );
    expect(id).toBeGreaterThan(top);
    expect(db.prepare('SELECT text_id FROM text_audit').pluck().all()).toEqual([top, id]);
    expect(counts()).toEqual({ held: start.held + 1, queued: start.queued });
    db.prepare("UPDATE texts SET state = 'queued' WHERE id = ?").run(id);
    expect(counts()).toEqual({ held: start.held, queued: start.queued + 1 });
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });

  it('runs a migration that declares foreign keys off with them off, checks them before it commits, and turns them on again', () => {
    const file = tempFile();
    const db = openDatabase(file, { targetVersion: 2 });
    seeds[1]!(db);
    seeds[2]!(db);
    const during: unknown[] = [];
    const dangling = [
      ...migrations.slice(0, 2),
      {
        version: 3,
        name: 'dangling',
        foreignKeys: 'off' as const,
        up: (d: Db) => {
          during.push(d.pragma('foreign_keys', { simple: true }));
          // With foreign keys on this would cascade to bob's sign-in token; off, it leaves it dangling.
          d.exec("DELETE FROM people WHERE name = 'bob'");
        },
      },
    ];
    expect(() => migrate(db, 3, dangling)).toThrow(/pointing at missing rows.*sign_in_tokens/);
    expect(during).toEqual([0]);
    expect(schemaVersion(db)).toBe(2);
    expect(db.prepare('SELECT count(*) AS n FROM people').get()).toEqual({ n: 2 });
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    db.close();
  });

  it('0019 moves roles out of the data folder and keeps where each worked, to tell the owner', () => {
    const file = tempFile();
    const dataDir = path.dirname(file);
    const db = openDatabase(file, { targetVersion: 0 });
    migrate(db, 18);
    const insertRole = db.prepare('INSERT INTO roles (id, name, agent) VALUES (?, ?, ?)');
    insertRole.run(1, 'default-folder', JSON.stringify({ adapter: 'scripted' }));
    insertRole.run(
      2,
      'inside',
      JSON.stringify({ adapter: 'command', command: ['cat'], cwd: path.join(dataDir, 'work', 'x') }),
    );
    insertRole.run(3, 'outside', JSON.stringify({ adapter: 'command', command: ['cat'], cwd: '/srv/project' }));
    migrate(db);
    expect(db.prepare('SELECT id, agent, moved_from FROM roles ORDER BY id').all()).toEqual([
      { id: 1, agent: JSON.stringify({ adapter: 'scripted' }), moved_from: path.join(dataDir, 'work') },
      {
        id: 2,
        agent: JSON.stringify({ adapter: 'command', command: ['cat'] }),
        moved_from: path.join(dataDir, 'work', 'x'),
      },
      { id: 3, agent: JSON.stringify({ adapter: 'command', command: ['cat'], cwd: '/srv/project' }), moved_from: null },
    ]);
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
