import type { Db } from '../database';

/**
 * What each person has read, and the things that happen to what they read without a row
 * of their own (DESIGN §11.10).
 *
 * A person has read everything up to their floor (one id per kind of row: messages, task
 * log entries, texts, attention events) and, above it, what their mark on each object
 * says. A person added later starts with a floor at the newest rows, as does everyone
 * here now: what was there before is not news.
 *
 * A failed text, a failed turn, a peer's pause or revoke changes a row rather than adding
 * one, so a trigger records each as an attention event, in the same transaction as the
 * change: its id orders it against what a person has read. The triggers fire only on
 * those changes (their WHEN), never on the wire's usual sends and acks.
 */
export function createAttention(db: Db): void {
  db.exec(`
    CREATE TABLE attention_events (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      kind TEXT NOT NULL CHECK (kind IN ('text_failed', 'turn_failed', 'peer_paused', 'peer_revoked')),
      object_kind TEXT NOT NULL CHECK (object_kind IN ('conversation', 'task', 'thread', 'connection')),
      object_id INTEGER NOT NULL,
      reason TEXT,
      at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    );
    CREATE INDEX attention_events_object ON attention_events(object_kind, object_id, id);

    CREATE TABLE read_floors (
      person_id INTEGER PRIMARY KEY REFERENCES people(id) ON DELETE CASCADE,
      message_id INTEGER NOT NULL,
      task_log_id INTEGER NOT NULL,
      text_id INTEGER NOT NULL,
      event_id INTEGER NOT NULL
    );
    -- content_id: the newest message or task log entry read there; text_id: the newest text
    -- then, for the answers that came back to it (an agent conversation's news counts on its root).
    CREATE TABLE read_marks (
      person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
      object_kind TEXT NOT NULL CHECK (object_kind IN ('conversation', 'task', 'thread', 'connection')),
      object_id INTEGER NOT NULL,
      content_id INTEGER NOT NULL DEFAULT 0,
      text_id INTEGER NOT NULL DEFAULT 0,
      event_id INTEGER NOT NULL DEFAULT 0,
      read_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
      PRIMARY KEY (person_id, object_kind, object_id)
    ) WITHOUT ROWID;
    CREATE INDEX read_marks_object ON read_marks(object_kind, object_id);

    INSERT INTO read_floors (person_id, message_id, task_log_id, text_id, event_id)
      SELECT id, (SELECT coalesce(max(id), 0) FROM messages), (SELECT coalesce(max(id), 0) FROM task_log),
             (SELECT coalesce(max(id), 0) FROM texts), 0
      FROM people;
    CREATE TRIGGER people_read_floor AFTER INSERT ON people BEGIN
      INSERT INTO read_floors (person_id, message_id, task_log_id, text_id, event_id) VALUES (
        NEW.id, (SELECT coalesce(max(id), 0) FROM messages), (SELECT coalesce(max(id), 0) FROM task_log),
        (SELECT coalesce(max(id), 0) FROM texts), (SELECT coalesce(max(id), 0) FROM attention_events));
    END;

    -- Outgoing texts that failed: rejected by the peer, or failed here (paused, revoked, closed).
    CREATE TRIGGER texts_failed_attention AFTER UPDATE OF state ON texts
      WHEN NEW.state = 'failed' AND OLD.state != 'failed' AND NEW.direction = 'out'
    BEGIN
      INSERT INTO attention_events (kind, object_kind, object_id, reason) VALUES ('text_failed', 'thread', NEW.thread_id, NEW.reason);
      -- Refused as paused while the connection is not paused here: the peer paused it.
      INSERT INTO attention_events (kind, object_kind, object_id)
        SELECT 'peer_paused', 'connection', c.id FROM threads t JOIN connections c ON c.id = t.connection_id
        WHERE t.id = NEW.thread_id AND NEW.reason = 'paused' AND c.status = 'active';
    END;
    CREATE TRIGGER turns_failed_attention AFTER UPDATE OF status ON turns
      WHEN NEW.status = 'failed' AND OLD.status != 'failed'
    BEGIN
      INSERT INTO attention_events (kind, object_kind, object_id, reason)
        SELECT 'turn_failed', r.context_kind, r.context_id, NEW.reason FROM runs r WHERE r.id = NEW.run_id;
    END;
    CREATE TRIGGER connections_revoked_attention AFTER UPDATE OF status ON connections
      WHEN NEW.status = 'revoked' AND OLD.status != 'revoked' AND NEW.revoked_by = 'peer'
    BEGIN
      INSERT INTO attention_events (kind, object_kind, object_id) VALUES ('peer_revoked', 'connection', NEW.id);
    END;

    -- What is deleted takes its events and marks with it.
    CREATE TRIGGER conversations_delete_attention AFTER DELETE ON conversations BEGIN
      DELETE FROM attention_events WHERE object_kind = 'conversation' AND object_id = OLD.id;
      DELETE FROM read_marks WHERE object_kind = 'conversation' AND object_id = OLD.id;
    END;
    CREATE TRIGGER tasks_delete_attention AFTER DELETE ON tasks BEGIN
      DELETE FROM attention_events WHERE object_kind = 'task' AND object_id = OLD.id;
      DELETE FROM read_marks WHERE object_kind = 'task' AND object_id = OLD.id;
    END;
    CREATE TRIGGER threads_delete_attention AFTER DELETE ON threads BEGIN
      DELETE FROM attention_events WHERE object_kind = 'thread' AND object_id = OLD.id;
      DELETE FROM read_marks WHERE object_kind = 'thread' AND object_id = OLD.id;
    END;
    CREATE TRIGGER connections_delete_attention AFTER DELETE ON connections BEGIN
      DELETE FROM attention_events WHERE object_kind = 'connection' AND object_id = OLD.id;
      DELETE FROM read_marks WHERE object_kind = 'connection' AND object_id = OLD.id;
    END;
  `);
}
