// Thin helpers over better-sqlite3: prepared statements cached per database, and a
// warning for any query slower than SLOW_QUERY_MS so regressions show up in logs.
import type Database from 'better-sqlite3';
import type { Db } from './database';
import { log } from '../log';

const SLOW_QUERY_MS = 50;
const cache = new WeakMap<Db, Map<string, Database.Statement>>();

function statement(db: Db, sql: string, values = false): Database.Statement {
  let statements = cache.get(db);
  if (!statements) {
    statements = new Map();
    cache.set(db, statements);
  }
  // A statement that returns arrays is a statement of its own: raw mode is the statement's.
  const key = values ? `values\0${sql}` : sql;
  let prepared = statements.get(key);
  if (!prepared) {
    prepared = db.prepare(sql);
    if (values) prepared.raw(true);
    statements.set(key, prepared);
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
/** Parameters by name (`@name` in the SQL), for statements that use one value in several places. */
export type Named = Record<string, Param>;

export function all<T>(db: Db, sql: string, ...params: Param[]): T[] {
  return timed(sql, () => statement(db, sql).all(...params) as T[]);
}

export function allNamed<T>(db: Db, sql: string, params: Named): T[] {
  return timed(sql, () => statement(db, sql).all(params) as T[]);
}

/**
 * Rows as arrays of their columns' values, for wide rows read many at a time: the
 * driver builds an object property by property, which costs a list page as much again
 * as its query; a caller's object literal over the array costs next to nothing.
 */
export function allValues<T extends unknown[]>(db: Db, sql: string, params: Named): T[] {
  return timed(sql, () => statement(db, sql, true).all(params) as T[]);
}

export function get<T>(db: Db, sql: string, ...params: Param[]): T | undefined {
  return timed(sql, () => statement(db, sql).get(...params) as T | undefined);
}

/**
 * One row of a table with more than a dozen columns, as an object of fixed shape. The
 * driver adds a row's values a column at a time, and past a dozen V8 keeps the object
 * as a hash table, so every read of a property is a lookup. The rows the engine keeps
 * and reads for every text (an agent conversation's, a connection's) are copied once.
 */
export function getWide<T extends object>(db: Db, sql: string, ...params: Param[]): T | undefined {
  const row = get<T>(db, sql, ...params);
  return row === undefined ? undefined : { ...row };
}

export function run(db: Db, sql: string, ...params: Param[]): Database.RunResult {
  return timed(sql, () => statement(db, sql).run(...params));
}

/** Inserts and returns the new row id as a number. */
export function insert(db: Db, sql: string, ...params: Param[]): number {
  return Number(run(db, sql, ...params).lastInsertRowid);
}
