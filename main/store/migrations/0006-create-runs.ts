import type { Db } from '../database';

export function createRuns(db: Db): void {
  db.exec(`
    -- One run per context (a conversation, a task, later an agent conversation); it
    -- keeps the adapter's session across turns.
    CREATE TABLE runs (
      id INTEGER PRIMARY KEY,
      role_id INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
      context_kind TEXT NOT NULL CHECK (context_kind IN ('conversation', 'task', 'thread')),
      context_id INTEGER NOT NULL,
      session TEXT,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
      UNIQUE (context_kind, context_id)
    );
    CREATE TABLE turns (
      id INTEGER PRIMARY KEY,
      run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
      status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'stopped', 'interrupted')),
      attempt INTEGER NOT NULL DEFAULT 0,
      reason TEXT,
      output TEXT,
      -- SHA-256 of the run token; only valid while status = 'running'.
      token_hash TEXT UNIQUE,
      pid INTEGER,
      -- The process's start time, so a restarted Parley never signals a reused pid.
      proc_start TEXT,
      started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
      ended_at TEXT
    );
    CREATE INDEX turns_run ON turns(run_id, id);
    CREATE INDEX turns_running ON turns(status) WHERE status = 'running';
    -- Inputs wait as 'pending' until a turn takes them; 'handled' once the turn ends.
    -- A notice does not wake the run by itself (wakes = 0): nothing restarts an agent
    -- but new work.
    CREATE TABLE inputs (
      id INTEGER PRIMARY KEY,
      run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
      kind TEXT NOT NULL CHECK (kind IN ('message', 'comment', 'text', 'notice')),
      body TEXT NOT NULL,
      author_name TEXT NOT NULL,
      wakes INTEGER NOT NULL DEFAULT 1,
      state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'taken', 'handled')),
      turn_id INTEGER REFERENCES turns(id) ON DELETE SET NULL,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    );
    CREATE INDEX inputs_pending ON inputs(state, run_id) WHERE state = 'pending';
    CREATE INDEX inputs_turn ON inputs(turn_id);
    -- A run belongs to its context: when the context goes, so does the run.
    CREATE TRIGGER conversations_delete_run AFTER DELETE ON conversations BEGIN
      DELETE FROM runs WHERE context_kind = 'conversation' AND context_id = OLD.id;
    END;
    CREATE TRIGGER tasks_delete_run AFTER DELETE ON tasks BEGIN
      DELETE FROM runs WHERE context_kind = 'task' AND context_id = OLD.id;
    END;
  `);
}
