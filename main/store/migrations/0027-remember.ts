import type { Db } from '../database';

/**
 * What people chose to remember:
 *
 * - `allow_rules`: "always allow" (DESIGN §12.10 `remember`). A rule lets one kind of
 *   approval through without asking, for one peer role of a connection: its texts to us
 *   (`incoming`), our agents' texts to it (`outgoing`), or one tool a run working for it
 *   asks to use (`permission`, the tool named in `tool`). With a root it holds only in that
 *   conversation, task or peer-started agent conversation; without one, everywhere.
 *   Whoever made it is kept by name too, so the rule still says who after they leave. A
 *   rule goes with its connection, and with its root when that is deleted.
 * - `notification_prefs`: per person, whether a kind of attention item, or anything from
 *   one connection, raises a notification; no row means yes.
 * - on a connection, who paused it here and when, and who revoked it (a person here, or
 *   the peer by its name). A peer's revoke before now is the peer's by name; who paused
 *   or revoked here before now is not known and stays null.
 */
export function rememberChoices(db: Db): void {
  db.exec(`
    CREATE TABLE allow_rules (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      connection_id INTEGER NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
      peer_role TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('outgoing', 'incoming', 'permission')),
      tool TEXT,
      root_kind TEXT CHECK (root_kind IN ('conversation', 'task', 'thread')),
      root_id INTEGER,
      created_by INTEGER REFERENCES people(id) ON DELETE SET NULL,
      created_by_name TEXT NOT NULL,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
      CHECK ((kind = 'permission') = (tool IS NOT NULL)),
      CHECK ((root_kind IS NULL) = (root_id IS NULL))
    );
    -- One rule per choice; NULLs would count as distinct in a plain UNIQUE.
    CREATE UNIQUE INDEX allow_rules_choice ON allow_rules(
      connection_id, peer_role, kind, coalesce(tool, ''), coalesce(root_kind, ''), coalesce(root_id, 0));
    CREATE INDEX allow_rules_root ON allow_rules(root_kind, root_id) WHERE root_kind IS NOT NULL;
    CREATE TRIGGER allow_rules_conversation_gone AFTER DELETE ON conversations BEGIN
      DELETE FROM allow_rules WHERE root_kind = 'conversation' AND root_id = OLD.id;
    END;
    CREATE TRIGGER allow_rules_task_gone AFTER DELETE ON tasks BEGIN
      DELETE FROM allow_rules WHERE root_kind = 'task' AND root_id = OLD.id;
    END;

    CREATE TABLE notification_prefs (
      person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
      kind TEXT,
      connection_id INTEGER REFERENCES connections(id) ON DELETE CASCADE,
      notify INTEGER NOT NULL CHECK (notify IN (0, 1)),
      CHECK ((kind IS NULL) != (connection_id IS NULL))
    );
    CREATE UNIQUE INDEX notification_prefs_kind ON notification_prefs(person_id, kind) WHERE kind IS NOT NULL;
    CREATE UNIQUE INDEX notification_prefs_connection ON notification_prefs(person_id, connection_id)
      WHERE connection_id IS NOT NULL;

    ALTER TABLE connections ADD COLUMN paused_by TEXT;
    ALTER TABLE connections ADD COLUMN paused_at TEXT;
    ALTER TABLE connections ADD COLUMN revoked_by_name TEXT;
    UPDATE connections SET revoked_by_name = name WHERE revoked_by = 'peer';
  `);
}
