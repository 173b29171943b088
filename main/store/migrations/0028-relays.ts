import type { Db } from '../database';

/**
 * The relays this installation's people chose (DESIGN §12.1): blind relays on the DHT,
 * each by its DHT public key (hex) and, for people to recognise it, the address it was
 * given with. Only these, and the ones a peer named, are ever used; invitations and
 * `reach` frames carry their keys.
 */
export function recordRelays(db: Db): void {
  db.exec(`
    CREATE TABLE relays (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      key TEXT NOT NULL UNIQUE CHECK (length(key) = 64 AND key NOT GLOB '*[^0-9a-f]*'),
      address TEXT CHECK (address IS NULL OR length(address) BETWEEN 1 AND 300),
      added_by INTEGER REFERENCES people (id) ON DELETE SET NULL,
      added_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    );
  `);
}
