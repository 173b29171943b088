// The scans behind attention.list run on every change a person may hear of: each starts
// at the person's floor by id and looks marks up by their key, so its cost follows what
// is unread, never the history. Pinned with EXPLAIN QUERY PLAN on the statements the
// real functions prepare.
import type Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { scratchDatabase } from '../../../test-support/scratch-database';
import type { Db } from '../database';
import {
  attentionThread,
  attentionThreads,
  markObjectRead,
  readFloor,
  unreadEvents,
  unreadMessages,
  unreadTaskLog,
  incomingNews,
  scanIncomingTexts,
  type ReadFloor,
} from './attention';

/** The SQL of every statement `work` prepares, with the parameters it binds first. */
function capture(db: Db, work: () => void): Array<{ sql: string; params: unknown[] }> {
  const seen = new Map<string, unknown[]>();
  const prepare = db.prepare.bind(db);
  (db as { prepare: (sql: string) => Database.Statement }).prepare = (sql: string) => {
    const statement = prepare(sql);
    return new Proxy(statement, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (typeof value !== 'function') return value;
        if (key === 'all' || key === 'get' || key === 'run')
          return (...params: unknown[]) => {
            if (!seen.has(sql)) seen.set(sql, params);
            return (value as (...args: unknown[]) => unknown).apply(target, params);
          };
        return (value as (...args: unknown[]) => unknown).bind(target);
      },
    });
  };
  try {
    work();
  } finally {
    (db as { prepare: (sql: string) => Database.Statement }).prepare = prepare;
  }
  return [...seen].map(([sql, params]) => ({ sql, params }));
}

/**
 * Rows that are not a table's: a subquery's or incomingNews' CTEs' (`scan s`, `news`), what a
 * bounded SEARCH read, and the ids a statement was given (json_each).
 */
const transient = /^SCAN ((\(subquery-\d+\)|s|news)|json_each VIRTUAL TABLE INDEX \d+:)$/;

const plan = (db: Db, sql: string, params: unknown[]) =>
  (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((row) => row.detail);

describe('the query plans of what is unread', () => {
  let db: Db;
  scratchDatabase('attention-plans', (opened) => {
    db = opened;
    db.prepare("INSERT INTO people (name, kind) VALUES ('alice', 'owner')").run();
  });

  it('start at the floor by id and find marks by their key: no scan of a history table', () => {
    const floor: ReadFloor = readFloor(db, 1);
    const statements = capture(db, () => {
      unreadMessages(db, 1, floor);
      unreadTaskLog(db, 1, floor);
      scanIncomingTexts(db, floor);
      incomingNews(db, 1, floor);
      attentionThread(db, 1);
      attentionThreads(db, [1, 2]);
      unreadEvents(db, 1, floor);
      markObjectRead(db, 1, 'conversation', 1);
      markObjectRead(db, 1, 'task', 1);
      markObjectRead(db, 1, 'thread', 1);
    });
    expect(statements.length).toBeGreaterThanOrEqual(7);
    for (const { sql, params } of statements) {
      const details = plan(db, sql, params);
      const why = `${sql}\n${details.join('\n')}`;
      expect(
        details.filter((d) => d.startsWith('SCAN ') && !transient.test(d)),
        why,
      ).toEqual([]);
      if (/FROM (messages|task_log|texts|attention_events) [a-z] NOT INDEXED/.test(sql))
        expect(
          details.find((d) => d.startsWith('SEARCH ')),
          why,
        ).toMatch(/^SEARCH [a-z] USING INTEGER PRIMARY KEY \(rowid>\?\)$/);
      if (sql.includes('FROM read_marks WHERE person_id = ?'))
        expect(details.join('\n'), why).toMatch(
          /SEARCH read_marks USING PRIMARY KEY \(person_id=\? AND object_kind=\? AND object_id=\?\)/,
        );
    }
  });
});
