// The full-text index against a real SQLite file: new rows are found once it catches
// up (every search makes it), deletes and edits of indexed rows reach it in their own
// transaction — cascades and rollbacks included — and the search query's plan is pinned.
import { describe, expect, it, vi } from 'vitest';
import { scratchDatabase } from '../../test-support/scratch-database';
import { EventHub } from '../events';
import { SearchIndexer } from './indexer';
import { transaction, type Db } from '../store/database';
import { searchHandlers } from '../api/search-handlers';
import type { Person } from '../../shared/domain';
import { candidatesSql, searchCandidates } from '../store/queries/search';
import { hasWaitingRows, indexAllWaitingRows, indexWaitingRows } from './index-catch-up';
import { matchExpression } from './match-expression';
import { insertText } from '../store/queries/threads';

let db: Db;

scratchDatabase('search-index', (opened) => {
  db = opened;
  db.exec(`
    INSERT INTO people (id, name, kind) VALUES (1, 'ann', 'owner'), (2, 'bo', 'member');
    INSERT INTO roles (id, name, agent) VALUES (1, 'assistant', '{"adapter":"scripted"}');
    INSERT INTO conversations (id, person_id, role_id) VALUES (1, 1, 1), (2, 2, 1);
  `);
});

const say = (conversation: number, body: string) =>
  Number(
    db
      .prepare("INSERT INTO messages (conversation_id, author_kind, author_name, body) VALUES (?, 'person', 'ann', ?)")
      .run(conversation, body).lastInsertRowid,
  );
const matches = (table: string, typed: string) =>
  (
    db
      .prepare(`SELECT rowid FROM ${table}_search WHERE ${table}_search MATCH ? ORDER BY rowid`)
      .all(matchExpression(typed)) as Array<{ rowid: number }>
  ).map((row) => row.rowid);
const consistent = () => {
  for (const table of ['messages', 'tasks', 'task_log', 'texts'])
    db.prepare(`INSERT INTO ${table}_search (${table}_search, rank) VALUES ('integrity-check', 1)`).run();
};

describe('the search index', () => {
  it('finds a new row once it has caught up, and moves its mark past it', () => {
    const id = say(1, 'the invoice for March');
    expect(hasWaitingRows(db)).toBe(true);
    expect(matches('messages', 'invoice')).toEqual([]);
    expect(indexWaitingRows(db)).toBe(1);
    expect(matches('messages', 'invoice')).toEqual([id]);
    expect(hasWaitingRows(db)).toBe(false);
    expect(indexWaitingRows(db)).toBe(0);
    consistent();
  });

  it('finds a text the moment the transaction that wrote it commits: the next search catches the index up', () => {
    db.exec(`
      INSERT INTO connections (id, fingerprint, cert, name) VALUES (1, 'aa', 'PEM', 'bob');
      INSERT INTO threads (id, connection_id, wire_id, local_role_id, local_role, peer_role, root_kind, root_id, started_by)
        VALUES (1, 1, 'T1', 1, 'assistant', 'researcher', 'thread', 1, 'peer');
    `);
    const owner = { id: 1, kind: 'owner' } as Person;
    const search = (query: string) =>
      (
        searchHandlers.search({ services: { db }, person: owner } as never, { query }) as {
          hits: Array<{ kind: string; id: number; snippet: string }>;
        }
      ).hits;
    expect(search('walrus')).toEqual([]);
    // As the receiver writes a text from the wire: in a transaction, with nothing indexing in the background.
    transaction(db, () => insertText(db, 1, 'in', 1, 'the walrus count is in', 'received'));
    expect(hasWaitingRows(db)).toBe(true);
    expect(search('walrus')).toEqual([
      expect.objectContaining({ kind: 'thread', id: 1, snippet: 'the walrus count is in' }),
    ]);
    expect(hasWaitingRows(db)).toBe(false);
    consistent();
  });

  it('catches up in the background a little after a change, without a search', async () => {
    const events = new EventHub();
    const indexer = new SearchIndexer(db, events);
    try {
      const id = say(1, 'background words');
      events.emit({ type: 'changed', kind: 'conversation', id: 1 }, { personId: 1 });
      await vi.waitFor(() => expect(hasWaitingRows(db)).toBe(false), { timeout: 15_000, interval: 50 });
      expect(matches('messages', 'background')).toEqual([id]);
      // It commits without a flush (the index is made again after a power cut); every other commit still flushes.
      expect(db.pragma('synchronous', { simple: true })).toBe(2);
    } finally {
      indexer.close();
    }
  });

  it('stays out of the way while changes keep coming, for at most its longest wait, and catches up once they stop', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const events = new EventHub();
    const indexer = new SearchIndexer(db, events, undefined, { settleMs: 100, maxWaitMs: 1_000, now: Date.now });
    try {
      // Indexes what an earlier run left once it is quiet after the start.
      say(1, 'left from before');
      vi.advanceTimersByTime(100);
      expect(hasWaitingRows(db)).toBe(false);
      // A busy stretch: a change every 40 ms, each a message written.
      const busy = (ms: number, word: string) => {
        for (let t = 0; t < ms; t += 40) {
          say(1, `${word} ${t}`);
          events.emit({ type: 'changed', kind: 'conversation', id: 1 }, { personId: 1 });
          vi.advanceTimersByTime(40);
        }
      };
      busy(800, 'burst');
      expect(hasWaitingRows(db)).toBe(true);
      expect(matches('messages', 'burst')).toEqual([]);
      // Quiet: indexed within two settling times (the first may still count the last change).
      vi.advanceTimersByTime(200);
      expect(hasWaitingRows(db)).toBe(false);
      expect(matches('messages', 'burst')).toHaveLength(20);
      // Busy for longer than the longest wait: indexed while the changes still come.
      busy(1_400, 'steady');
      expect(matches('messages', 'steady').length).toBeGreaterThan(0);
      vi.advanceTimersByTime(200);
      expect(matches('messages', 'steady')).toHaveLength(35);
      consistent();
    } finally {
      indexer.close();
      vi.useRealTimers();
    }
  });

  it('catches up a batch at a time', () => {
    for (let i = 0; i < 25; i++) say(1, `note number ${i}`);
    expect(indexWaitingRows(db, 10)).toBe(10);
    expect(matches('messages', 'note')).toHaveLength(10);
    expect(indexAllWaitingRows(db, 10)).toBe(15);
    expect(matches('messages', 'note')).toHaveLength(25);
    consistent();
  });

  it('drops what a cascade deletes: a conversation’s messages, a task’s subtasks and log', () => {
    say(1, 'budget draft');
    db.exec(`
      INSERT INTO tasks (id, role_id, title, body) VALUES (1, 1, 'budget review', 'check the budget');
      INSERT INTO tasks (id, role_id, parent_id, title) VALUES (2, 1, 1, 'budget sources');
      INSERT INTO task_log (task_id, kind, author_kind, author_name, body) VALUES (2, 'comment', 'person', 'ann', 'budget is fine');
    `);
    indexAllWaitingRows(db);
    expect(matches('tasks', 'budget')).toEqual([1, 2]);
    db.prepare('DELETE FROM conversations WHERE id = 1').run();
    db.prepare('DELETE FROM tasks WHERE id = 1').run();
    expect(matches('messages', 'budget')).toEqual([]);
    expect(matches('tasks', 'budget')).toEqual([]);
    expect(matches('task_log', 'budget')).toEqual([]);
    consistent();
  });

  it('follows an edit of an indexed row, and ignores a row deleted before it was indexed', () => {
    db.exec("INSERT INTO tasks (id, role_id, title) VALUES (1, 1, 'old title')");
    indexAllWaitingRows(db);
    db.prepare("UPDATE tasks SET title = 'new heading' WHERE id = 1").run();
    expect(matches('tasks', 'old')).toEqual([]);
    expect(matches('tasks', 'heading')).toEqual([1]);
    const gone = say(1, 'ephemeral words');
    db.prepare('DELETE FROM messages WHERE id = ?').run(gone);
    indexAllWaitingRows(db);
    expect(matches('messages', 'ephemeral')).toEqual([]);
    consistent();
  });

  it('indexes at once a row that takes an indexed id again', () => {
    const id = say(1, 'first words');
    indexAllWaitingRows(db);
    db.prepare('DELETE FROM messages WHERE id = ?').run(id);
    db.prepare(
      "INSERT INTO messages (id, conversation_id, author_kind, author_name, body) VALUES (?, 1, 'person', 'ann', 'second words')",
    ).run(id);
    expect(hasWaitingRows(db)).toBe(false);
    expect(matches('messages', 'second')).toEqual([id]);
    expect(matches('messages', 'first')).toEqual([]);
    consistent();
  });

  it('keeps the index as it was when the transaction that deleted a row rolls back', () => {
    const id = say(1, 'keep me');
    indexAllWaitingRows(db);
    expect(() =>
      transaction(db, () => {
        db.prepare('DELETE FROM messages WHERE id = ?').run(id);
        throw new Error('disk full');
      }),
    ).toThrow('disk full');
    expect(matches('messages', 'keep')).toEqual([id]);
    consistent();
  });

  it('narrows to the person’s own conversations in the query itself', () => {
    say(1, 'shared word ann');
    say(2, 'shared word bo');
    indexAllWaitingRows(db);
    const query = matchExpression('shared')!;
    const page = { limit: 10, offset: 0, perIndex: 10 };
    expect(searchCandidates(db, query, { personId: 1, owner: true }, page).map((r) => r.id)).toEqual([1]);
    expect(searchCandidates(db, query, { personId: 2, owner: false }, page).map((r) => r.id)).toEqual([2]);
  });

  it('ranks exactly even when one agent conversation fills an index’s first matches', () => {
    db.exec(`
      INSERT INTO connections (id, fingerprint, cert, name) VALUES (1, 'aa', 'PEM', 'bob');
      INSERT INTO threads (id, connection_id, wire_id, local_role_id, local_role, peer_role, root_kind, root_id, started_by)
        VALUES (1, 1, 'T1', 1, 'assistant', 'chatty', 'thread', 1, 'peer'),
               (2, 1, 'T2', 1, 'assistant', 'quiet', 'thread', 2, 'peer');
    `);
    const text = db.prepare(
      "INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (?, 'in', ?, ?, 'handled')",
    );
    // More strong matches in one agent conversation than a bounded search takes from an index.
    for (let seq = 1; seq <= 450; seq++) text.run(1, seq, 'tern tern tern');
    text.run(2, 1, 'a tern once');
    say(1, 'the tern and a good many other words that make this match a weak one, weaker than the quiet one');
    const owner = { id: 1, kind: 'owner' } as Person;
    const search = (limit: number) =>
      (
        searchHandlers.search({ services: { db }, person: owner } as never, { query: 'tern', limit }) as {
          hits: Array<{ kind: string; id: number }>;
        }
      ).hits.map((hit) => `${hit.kind} ${hit.id}`);
    indexAllWaitingRows(db);
    // What ranking every match would give, one hit per object.
    const everything = searchCandidates(
      db,
      matchExpression('tern')!,
      { personId: 1, owner: true },
      {
        limit: 10,
        offset: 0,
        perIndex: null,
      },
    ).map((row) => `${row.kind} ${row.id}`);
    expect([...everything].sort()).toEqual(['conversation 1', 'thread 1', 'thread 2']);
    for (const limit of [1, 2, 3]) expect(search(limit)).toEqual(everything.slice(0, limit));
  });

  it('reads each index by MATCH and every row by its primary key (the plan is pinned)', () => {
    const plan = (bounded: boolean) =>
      (
        db
          .prepare(`EXPLAIN QUERY PLAN ${candidatesSql(bounded)}`)
          .all({ query: '"x"*', person: 1, owner: 1, limit: 20, offset: 0, ...(bounded ? { k: 200 } : {}) }) as Array<{
          detail: string;
        }>
      )
        .map((row) => row.detail)
        .filter((line) => /^(SCAN|SEARCH) /.test(line));
    const expected = (ranked: string) => [
      `SCAN messages_search VIRTUAL TABLE INDEX ${ranked}:M1`,
      'SEARCH m USING INTEGER PRIMARY KEY (rowid=?)',
      'SEARCH c USING INTEGER PRIMARY KEY (rowid=?)',
      `SCAN tasks_search VIRTUAL TABLE INDEX ${ranked}:M2`,
      'SEARCH t USING INTEGER PRIMARY KEY (rowid=?)',
      `SCAN task_log_search VIRTUAL TABLE INDEX ${ranked}:M1`,
      'SEARCH l USING INTEGER PRIMARY KEY (rowid=?)',
      `SCAN texts_search VIRTUAL TABLE INDEX ${ranked}:M1`,
      'SEARCH x USING INTEGER PRIMARY KEY (rowid=?)',
      'SEARCH th USING INTEGER PRIMARY KEY (rowid=?)',
      'SEARCH rc USING INTEGER PRIMARY KEY (rowid=?)',
    ];
    const steps = (bounded: boolean) => plan(bounded).filter((line) => !/^SCAN (s|\(subquery-\d+\))$/.test(line));
    expect(steps(true)).toEqual(expected('32'));
    expect(steps(false)).toEqual(expected('32'));
  });
});
