import type { Db } from '../database';

export function createInstallation(db: Db): void {
  db.exec(`
    CREATE TABLE installation (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      name TEXT NOT NULL,
      fingerprint TEXT NOT NULL,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    );
    CREATE TABLE settings (
      key TEXT PRIMARY KEY,
      value TEXT NOT NULL
    );
  `);
}
