// Thin helpers over better-sqlite3: prepared statements cached per database, and a
// warning for any query slower than SLOW_QUERY_MS so regressions show up in logs.
import type Database from 'better-sqlite3';
import type { Db } from './database';
import { log } from '../log';

const SLOW_QUERY_MS = 50;
const cache = new WeakMap<Db, Map<string, Database.Statement>>();

function statement(db: Db, sql: string): Database.Statement {
  let statements = cache.get(db);
  if (!statements) {
    statements = new Map();
    cache.set(db, statements);
  }
  let prepared = statements.get(sql);
  if (!prepared) {
    prepared = db.prepare(sql);
    statements.set(sql, prepared);
  }
  return prepared;
}

function timed<T>(sql: string, fn: () => T): T {
  const start = performance.now();
  const result = fn();
  const elapsed = performance.now() - start;
  if (elapsed > SLOW_QUERY_MS)
    log.warn('slow query', { ms: Math.round(elapsed), sql: sql.replace(/\s+/g, ' ').slice(0, 200) });
  return result;
}

export type Param = string | number | bigint | null | Buffer;

export function all<T>(db: Db, sql: string, ...params: Param[]): T[] {
  return timed(sql, () => statement(db, sql).all(...params) as T[]);
}

export function get<T>(db: Db, sql: string, ...params: Param[]): T | undefined {
  return timed(sql, () => statement(db, sql).get(...params) as T | undefined);
}

export function run(db: Db, sql: string, ...params: Param[]): Database.RunResult {
  return timed(sql, () => statement(db, sql).run(...params));
}

/** Inserts and returns the new row id as a number. */
export function insert(db: Db, sql: string, ...params: Param[]): number {
  return Number(run(db, sql, ...params).lastInsertRowid);
}
