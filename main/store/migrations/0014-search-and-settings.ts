import type { Db } from '../database';

/** Tables whose texts people search, the columns indexed, and how a match ranks (a task's title counts most). */
export const searchedTables = [
  { table: 'messages', columns: ['body'], rank: 'bm25()' },
  { table: 'tasks', columns: ['title', 'body'], rank: 'bm25(4.0, 1.0)' },
  { table: 'task_log', columns: ['body'], rank: 'bm25()' },
  { table: 'texts', columns: ['body'], rank: 'bm25()' },
] as const;

/**
 * Full-text search (SQLite FTS5) over what people read: the messages of conversations,
 * tasks (title and brief) and their logs, and the texts of agent conversations.
 *
 * Each index is an external-content table (`<table>_search`): it holds only the index,
 * never a second copy of the bodies, and reads bodies from the table itself for
 * snippets. `search_marks` says, per table, up to which row id the index is complete.
 * New rows (ids above the mark) are indexed in batches before every search and in the
 * background (main/search/indexer.ts), not by an insert trigger: FTS5 writes its
 * pending terms out at every savepoint, and the group commit gives every text one, so
 * an insert trigger made each text its own index segment, which more than doubled the
 * cost of writing a text (scripts/search-index-cost.ts). Deletes and edits of rows already
 * indexed are applied by triggers in the transaction that makes them (a cascade, such
 * as a deleted conversation taking its messages, fires them too), and a new row that
 * takes an id at or below the mark (an id freed by a delete) is indexed at once, so
 * the index never holds a row that is gone or misses one below its mark.
 *
 * The rows already there are indexed here (`rebuild`).
 *
 * Two small additions for Settings and the home page ride along:
 * `connections.removed_at` (an owner removed a revoked connection from the list; the
 * row stays, so its agent conversations keep their history and the peer stays
 * refused), and `first_run_dismissals` (who hid the first-run checklist).
 */
export function createSearchAndSettings(db: Db): void {
  db.exec(`
    CREATE TABLE search_marks (
      source TEXT PRIMARY KEY,
      indexed_through INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID;
  `);
  for (const { table, columns, rank } of searchedTables) {
    const index = `${table}_search`;
    const list = columns.join(', ');
    const values = (row: 'new' | 'old') => columns.map((column) => `${row}.${column}`).join(', ');
    const mark = `(SELECT indexed_through FROM search_marks WHERE source = '${table}')`;
    db.exec(`
      CREATE VIRTUAL TABLE ${index} USING fts5(
        ${list},
        content = '${table}',
        content_rowid = 'id',
        tokenize = 'unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER ${index}_insert AFTER INSERT ON ${table} WHEN new.id <= ${mark} BEGIN
        INSERT INTO ${index} (rowid, ${list}) VALUES (new.id, ${values('new')});
      END;
      CREATE TRIGGER ${index}_delete AFTER DELETE ON ${table} WHEN old.id <= ${mark} BEGIN
        INSERT INTO ${index} (${index}, rowid, ${list}) VALUES ('delete', old.id, ${values('old')});
      END;
      CREATE TRIGGER ${index}_update AFTER UPDATE OF ${list} ON ${table} WHEN old.id <= ${mark} BEGIN
        INSERT INTO ${index} (${index}, rowid, ${list}) VALUES ('delete', old.id, ${values('old')});
        INSERT INTO ${index} (rowid, ${list}) VALUES (new.id, ${values('new')});
      END;
      INSERT INTO ${index} (${index}, rank) VALUES ('rank', '${rank}');
      INSERT INTO ${index} (${index}) VALUES ('rebuild');
      INSERT INTO search_marks (source, indexed_through) SELECT '${table}', coalesce(max(id), 0) FROM ${table};
    `);
  }
  db.exec(`
    ALTER TABLE connections ADD COLUMN removed_at TEXT CHECK (removed_at IS NULL OR status = 'revoked');
    CREATE TABLE first_run_dismissals (
      person_id INTEGER PRIMARY KEY REFERENCES people(id) ON DELETE CASCADE,
      dismissed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    );
  `);
}
