import type { Db } from '../database';

export function createConnections(db: Db): void {
  db.exec(`
    -- One row per peer installation, keyed by its certificate fingerprint (pinned).
    CREATE TABLE connections (
      id INTEGER PRIMARY KEY,
      fingerprint TEXT NOT NULL UNIQUE,
      cert TEXT NOT NULL,
      -- The peer's installation name, unique here: it is PEER in PEER/ROLE.
      name TEXT NOT NULL UNIQUE,
      -- Where to dial the peer (host:port); null when only the peer dials.
      address TEXT,
      status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'revoked')),
      queue_limit INTEGER NOT NULL DEFAULT 100 CHECK (queue_limit BETWEEN 1 AND 100000),
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
      revoked_at TEXT
    );
    -- Local roles the peer may address.
    CREATE TABLE exposed_roles (
      connection_id INTEGER NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
      role_id INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
      PRIMARY KEY (connection_id, role_id)
    );
    -- Roles the peer exposes to us, as its last roles frame said.
    CREATE TABLE peer_roles (
      connection_id INTEGER NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
      name TEXT NOT NULL,
      description TEXT NOT NULL DEFAULT '',
      PRIMARY KEY (connection_id, name)
    );
    CREATE TABLE invitations (
      id INTEGER PRIMARY KEY,
      secret_hash TEXT NOT NULL UNIQUE,
      roles TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(roles)),
      created_by INTEGER REFERENCES people(id) ON DELETE SET NULL,
      expires_at TEXT NOT NULL,
      used_at TEXT,
      connection_id INTEGER REFERENCES connections(id) ON DELETE SET NULL,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    );
  `);
}
