import type { Db } from '../database';

export function createAgentConversations(db: Db): void {
  db.exec(`
    -- An agent conversation: one topic between a local role and a peer role over one
    -- connection, known on the wire only by its random thread ID (ADR 0035).
    CREATE TABLE threads (
      id INTEGER PRIMARY KEY,
      connection_id INTEGER NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
      thread_id TEXT NOT NULL,
      local_role_id INTEGER REFERENCES roles(id) ON DELETE SET NULL,
      local_role TEXT NOT NULL,
      peer_role TEXT NOT NULL,
      -- The topic: a conversation, a task, or an agent conversation (one the peer
      -- started is its own root). Derived from the sending run, never from the wire.
      root_kind TEXT NOT NULL CHECK (root_kind IN ('conversation', 'task', 'thread')),
      root_id INTEGER NOT NULL,
      root_gone INTEGER NOT NULL DEFAULT 0,
      started_by TEXT NOT NULL CHECK (started_by IN ('local', 'peer')),
      status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
      close_reason TEXT,
      out_seq INTEGER NOT NULL DEFAULT 0,
      in_seq INTEGER NOT NULL DEFAULT 0,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
      closed_at TEXT,
      UNIQUE (connection_id, thread_id)
    );
    -- The sender key of the ADR: one open, locally started agent conversation per
    -- (connection, root, sending role, recipient role).
    CREATE UNIQUE INDEX threads_sender_key ON threads(connection_id, root_kind, root_id, local_role_id, peer_role)
      WHERE status = 'open' AND started_by = 'local';
    CREATE INDEX threads_root ON threads(root_kind, root_id);
    CREATE TABLE texts (
      id INTEGER PRIMARY KEY,
      thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
      direction TEXT NOT NULL CHECK (direction IN ('out', 'in')),
      seq INTEGER NOT NULL,
      body TEXT NOT NULL,
      -- out: queued, sent, acked, failed; in: received, handled.
      state TEXT NOT NULL CHECK (state IN ('queued', 'sent', 'acked', 'failed', 'received', 'handled')),
      reason TEXT,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
      updated_at TEXT,
      UNIQUE (thread_id, direction, seq)
    );
    CREATE INDEX texts_waiting ON texts(state) WHERE state IN ('queued', 'sent', 'received');
    ALTER TABLE inputs ADD COLUMN text_id INTEGER REFERENCES texts(id) ON DELETE SET NULL;
    CREATE TRIGGER threads_delete_run AFTER DELETE ON threads BEGIN
      DELETE FROM runs WHERE context_kind = 'thread' AND context_id = OLD.id;
    END;
  `);
}
