import type { Db } from '../database';

export function createTasks(db: Db): void {
  db.exec(`
    CREATE TABLE tasks (
      id INTEGER PRIMARY KEY,
      role_id INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
      -- A parent takes its subtasks with it.
      parent_id INTEGER REFERENCES tasks(id) ON DELETE CASCADE,
      title TEXT NOT NULL,
      body TEXT NOT NULL DEFAULT '',
      status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'finished')),
      created_by INTEGER REFERENCES people(id) ON DELETE SET NULL,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
      finished_at TEXT
    );
    CREATE INDEX tasks_parent ON tasks(parent_id);
    CREATE INDEX tasks_role ON tasks(role_id);
    CREATE TABLE task_log (
      id INTEGER PRIMARY KEY,
      task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
      kind TEXT NOT NULL CHECK (kind IN ('comment', 'output', 'report', 'notice', 'status')),
      author_kind TEXT NOT NULL CHECK (author_kind IN ('person', 'role', 'system')),
      author_id INTEGER,
      author_name TEXT NOT NULL,
      body TEXT NOT NULL,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    );
    CREATE INDEX task_log_task ON task_log(task_id, id);
  `);
}
