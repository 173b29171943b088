// Brings the search index up to its tables: rows above a table's mark (search_marks)
// are indexed in one statement per batch, and the mark moves past them, in the same
// transaction. Deletes and edits of indexed rows are the triggers' work (migration 0014).
import { searchedTables } from '../store/migrations/0014-search-and-settings';
import type { Db } from '../store/database';
import { transaction } from '../store/database';
import { get, run } from '../store/sql';

export type SearchSource = (typeof searchedTables)[number]['table'];

/** True when some rows wait to be indexed (one lookup by primary key per table). */
export function hasWaitingRows(db: Db): boolean {
  return searchedTables.some(
    ({ table }) =>
      get(
        db,
        `SELECT 1 FROM ${table} WHERE id > (SELECT indexed_through FROM search_marks WHERE source = '${table}') LIMIT 1`,
      ) !== undefined,
  );
}

/**
 * Indexes up to `batch` waiting rows of each table, in one transaction. Returns how
 * many it indexed (0: the index is up to date).
 */
export function indexWaitingRows(db: Db, batch = 1000): number {
  return transaction(db, () => {
    let indexed = 0;
    for (const { table, columns } of searchedTables) {
      const mark = `(SELECT indexed_through FROM search_marks WHERE source = '${table}')`;
      const upTo = get<{ upTo: number | null; n: number }>(
        db,
        `SELECT max(id) AS upTo, count(*) AS n FROM (SELECT id FROM ${table} WHERE id > ${mark} ORDER BY id LIMIT ?)`,
        batch,
      );
      if (!upTo || upTo.upTo === null) continue;
      const list = columns.join(', ');
      run(
        db,
        `INSERT INTO ${table}_search (rowid, ${list}) SELECT id, ${list} FROM ${table} WHERE id > ${mark} AND id <= ?`,
        upTo.upTo,
      );
      run(db, 'UPDATE search_marks SET indexed_through = ? WHERE source = ?', upTo.upTo, table);
      indexed += upTo.n;
    }
    return indexed;
  });
}

/** Indexes every waiting row, a batch per transaction. */
export function indexAllWaitingRows(db: Db, batch = 2000): number {
  let total = 0;
  for (;;) {
    const indexed = indexWaitingRows(db, batch);
    total += indexed;
    if (indexed === 0) return total;
  }
}
