import type { Db } from '../database';

/**
 * Ids are never handed out again (DESIGN §11.1). Without AUTOINCREMENT, SQLite gives a
 * new row the highest id + 1, so deleting the newest person, conversation or task lets
 * the next one take its id, and whatever still named the old one — a signed-in
 * session, an agent conversation's root, a run — then names the new one.
 *
 * SQLite cannot add AUTOINCREMENT to a table, so every table that hands out ids is
 * rebuilt the documented way (https://www.sqlite.org/lang_altertable.html#otheralter):
 * with foreign keys off (this migration declares it; the runner checks every foreign
 * key before it commits), each table is made anew, filled, the old one dropped and the
 * new one renamed; then the indexes and triggers come back. The triggers go first:
 * they name tables that are briefly missing, which a rename would trip over.
 *
 * The new sequences start above every id anything still names, not only above the
 * rows left, so that ids deleted before this version (a conversation an agent
 * conversation still points at) are not handed out either.
 */
export function neverReuseIds(db: Db): void {
  const floors = new Map<string, number>();
  for (const [table, sql] of Object.entries(idsInUse)) floors.set(table, db.prepare(sql).pluck().get() as number);

  db.exec(`
    DROP TRIGGER conversations_delete_run;
    DROP TRIGGER tasks_delete_run;
    DROP TRIGGER threads_delete_run;
  `);
  for (const table of tables) {
    db.exec(`CREATE TABLE parley_new_${table.name} (${table.definition})`);
    db.exec(`INSERT INTO parley_new_${table.name} (${table.columns}) SELECT ${table.columns} FROM ${table.name}`);
    db.exec(`DROP TABLE ${table.name}`);
    db.exec(`ALTER TABLE parley_new_${table.name} RENAME TO ${table.name}`);
  }
  db.exec(indexesAndTriggers);

  const ensure = db.prepare(
    'INSERT INTO sqlite_sequence (name, seq) SELECT @name, 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = @name)',
  );
  const raise = db.prepare('UPDATE sqlite_sequence SET seq = max(seq, @floor) WHERE name = @name');
  for (const { name } of tables) {
    ensure.run({ name });
    raise.run({ name, floor: floors.get(name) ?? 0 });
  }
}

/** Per table, the highest id that is a row or that anything else still names (0 when none). */
const idsInUse: Record<string, string> = {
  people: maxOf(
    'SELECT max(id) FROM people',
    'SELECT max(person_id) FROM sign_in_tokens',
    "SELECT max(author_id) FROM messages WHERE author_kind = 'person'",
    "SELECT max(author_id) FROM task_log WHERE author_kind = 'person'",
    'SELECT max(created_by) FROM tasks',
    'SELECT max(created_by) FROM role_tokens',
    'SELECT max(created_by) FROM invitations',
  ),
  roles: maxOf(
    'SELECT max(id) FROM roles',
    "SELECT max(author_id) FROM messages WHERE author_kind = 'role'",
    "SELECT max(author_id) FROM task_log WHERE author_kind = 'role'",
    'SELECT max(local_role_id) FROM threads',
    'SELECT max(role_id) FROM runs',
  ),
  conversations: maxOf(
    'SELECT max(id) FROM conversations',
    'SELECT max(conversation_id) FROM messages',
    "SELECT max(root_id) FROM threads WHERE root_kind = 'conversation'",
    "SELECT max(context_id) FROM runs WHERE context_kind = 'conversation'",
  ),
  tasks: maxOf(
    'SELECT max(id) FROM tasks',
    'SELECT max(parent_id) FROM tasks',
    'SELECT max(task_id) FROM task_log',
    "SELECT max(root_id) FROM threads WHERE root_kind = 'task'",
    "SELECT max(context_id) FROM runs WHERE context_kind = 'task'",
  ),
  threads: maxOf(
    'SELECT max(id) FROM threads',
    "SELECT max(root_id) FROM threads WHERE root_kind = 'thread'",
    "SELECT max(context_id) FROM runs WHERE context_kind = 'thread'",
    'SELECT max(thread_id) FROM texts',
  ),
  runs: maxOf('SELECT max(id) FROM runs', 'SELECT max(run_id) FROM turns', 'SELECT max(run_id) FROM inputs'),
  turns: maxOf('SELECT max(id) FROM turns', 'SELECT max(turn_id) FROM inputs'),
  texts: maxOf('SELECT max(id) FROM texts', 'SELECT max(text_id) FROM inputs'),
  connections: maxOf('SELECT max(id) FROM connections', 'SELECT max(connection_id) FROM invitations'),
};

/** The highest of what the scalar queries find, 0 when they find nothing. */
function maxOf(...queries: string[]): string {
  return `SELECT coalesce(max(n), 0) FROM (${queries.map((query) => `SELECT (${query}) AS n`).join(' UNION ALL ')})`;
}

interface Table {
  name: string;
  columns: string;
  definition: string;
}

const now = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

/** The tables of version 10 that hand out ids, parents before children, as they were but for AUTOINCREMENT. */
const tables: Table[] = [
  {
    name: 'people',
    columns: 'id, name, kind, created_at',
    definition: `
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      name TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('owner', 'member')),
      created_at TEXT NOT NULL DEFAULT (${now})`,
  },
  {
    name: 'sign_in_tokens',
    columns: 'id, person_id, token_hash, label, created_at',
    definition: `
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
      token_hash TEXT NOT NULL UNIQUE,
      label TEXT NOT NULL DEFAULT '',
      created_at TEXT NOT NULL DEFAULT (${now})`,
  },
  {
    name: 'roles',
    columns: 'id, name, description, agent, created_at',
    definition: `
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      name TEXT NOT NULL UNIQUE,
      description TEXT NOT NULL DEFAULT '',
      agent TEXT NOT NULL CHECK (json_valid(agent)),
      created_at TEXT NOT NULL DEFAULT (${now})`,
  },
  {
    name: 'role_tokens',
    columns: 'id, role_id, token_hash, created_by, created_at',
    definition: `
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      role_id INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
      token_hash TEXT NOT NULL UNIQUE,
      created_by INTEGER REFERENCES people(id) ON DELETE SET NULL,
      created_at TEXT NOT NULL DEFAULT (${now})`,
  },
  {
    name: 'conversations',
    columns: 'id, person_id, role_id, created_at',
    definition: `
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      person_id INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
      role_id INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
      created_at TEXT NOT NULL DEFAULT (${now}),
      UNIQUE (person_id, role_id)`,
  },
  {
    name: 'messages',
    columns: 'id, conversation_id, author_kind, author_id, author_name, body, created_at',
    definition: `
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
      author_kind TEXT NOT NULL CHECK (author_kind IN ('person', 'role', 'system')),
      author_id INTEGER,
      author_name TEXT NOT NULL,
      body TEXT NOT NULL,
      created_at TEXT NOT NULL DEFAULT (${now})`,
  },
  {
    name: 'tasks',
    columns: 'id, role_id, parent_id, title, body, status, created_by, created_at, finished_at',
    definition: `
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      role_id INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
      -- A parent takes its subtasks with it.
      parent_id INTEGER REFERENCES tasks(id) ON DELETE CASCADE,
      title TEXT NOT NULL,
      body TEXT NOT NULL DEFAULT '',
      status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'finished')),
      created_by INTEGER REFERENCES people(id) ON DELETE SET NULL,
      created_at TEXT NOT NULL DEFAULT (${now}),
      finished_at TEXT`,
  },
  {
    name: 'task_log',
    columns: 'id, task_id, kind, author_kind, author_id, author_name, body, created_at',
    definition: `
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
      kind TEXT NOT NULL CHECK (kind IN ('comment', 'output', 'report', 'notice', 'status')),
      author_kind TEXT NOT NULL CHECK (author_kind IN ('person', 'role', 'system')),
      author_id INTEGER,
      author_name TEXT NOT NULL,
      body TEXT NOT NULL,
      created_at TEXT NOT NULL DEFAULT (${now})`,
  },
  {
    name: 'runs',
    columns: 'id, role_id, context_kind, context_id, session, created_at',
    definition: `
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      role_id INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
      context_kind TEXT NOT NULL CHECK (context_kind IN ('conversation', 'task', 'thread')),
      context_id INTEGER NOT NULL,
      session TEXT,
      created_at TEXT NOT NULL DEFAULT (${now}),
      UNIQUE (context_kind, context_id)`,
  },
  {
    name: 'turns',
    columns: 'id, run_id, status, attempt, reason, output, token_hash, pid, proc_start, started_at, ended_at',
    definition: `
      id INTEGER PRIMARY KEY AUTOINCREMENT,
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
      started_at TEXT NOT NULL DEFAULT (${now}),
      ended_at TEXT`,
  },
  {
    name: 'connections',
    columns: 'id, fingerprint, cert, name, address, status, queue_limit, created_at, revoked_at',
    definition: `
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      fingerprint TEXT NOT NULL UNIQUE,
      cert TEXT NOT NULL,
      -- The peer's installation name, unique here: it is PEER in PEER/ROLE.
      name TEXT NOT NULL UNIQUE,
      -- Where to dial the peer (host:port); null when only the peer dials.
      address TEXT,
      status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'revoked')),
      queue_limit INTEGER NOT NULL DEFAULT 100 CHECK (queue_limit BETWEEN 1 AND 100000),
      created_at TEXT NOT NULL DEFAULT (${now}),
      revoked_at TEXT`,
  },
  {
    name: 'invitations',
    columns: 'id, secret_hash, roles, created_by, expires_at, used_at, connection_id, created_at',
    definition: `
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      secret_hash TEXT NOT NULL UNIQUE,
      roles TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(roles)),
      created_by INTEGER REFERENCES people(id) ON DELETE SET NULL,
      expires_at TEXT NOT NULL,
      used_at TEXT,
      connection_id INTEGER REFERENCES connections(id) ON DELETE SET NULL,
      created_at TEXT NOT NULL DEFAULT (${now})`,
  },
  {
    name: 'threads',
    columns:
      'id, connection_id, thread_id, local_role_id, local_role, peer_role, root_kind, root_id, root_gone, started_by, status, close_reason, created_at, closed_at',
    definition: `
      id INTEGER PRIMARY KEY AUTOINCREMENT,
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
      created_at TEXT NOT NULL DEFAULT (${now}),
      closed_at TEXT,
      UNIQUE (connection_id, thread_id)`,
  },
  {
    name: 'texts',
    columns: 'id, thread_id, direction, seq, body, state, reason, created_at, updated_at',
    definition: `
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      thread_id INTEGER NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
      direction TEXT NOT NULL CHECK (direction IN ('out', 'in')),
      seq INTEGER NOT NULL,
      body TEXT NOT NULL,
      -- out: queued, sent, acked, failed; in: received, handled.
      state TEXT NOT NULL CHECK (state IN ('queued', 'sent', 'acked', 'failed', 'received', 'handled')),
      reason TEXT,
      created_at TEXT NOT NULL DEFAULT (${now}),
      updated_at TEXT,
      UNIQUE (thread_id, direction, seq)`,
  },
  {
    name: 'inputs',
    columns: 'id, run_id, kind, body, author_name, wakes, state, turn_id, created_at, text_id',
    definition: `
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
      kind TEXT NOT NULL CHECK (kind IN ('message', 'comment', 'text', 'notice')),
      body TEXT NOT NULL,
      author_name TEXT NOT NULL,
      wakes INTEGER NOT NULL DEFAULT 1,
      state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'taken', 'handled')),
      turn_id INTEGER REFERENCES turns(id) ON DELETE SET NULL,
      created_at TEXT NOT NULL DEFAULT (${now}),
      text_id INTEGER REFERENCES texts(id) ON DELETE SET NULL`,
  },
];

/** The named indexes and the triggers of version 10, as they were. */
const indexesAndTriggers = `
  CREATE INDEX sign_in_tokens_person ON sign_in_tokens(person_id);
  CREATE INDEX conversations_role ON conversations(role_id);
  CREATE INDEX messages_conversation ON messages(conversation_id, id);
  CREATE INDEX tasks_parent ON tasks(parent_id);
  CREATE INDEX tasks_role ON tasks(role_id);
  CREATE INDEX task_log_task ON task_log(task_id, id);
  CREATE INDEX turns_run ON turns(run_id, id);
  CREATE INDEX turns_running ON turns(status) WHERE status = 'running';
  CREATE INDEX inputs_pending ON inputs(state, run_id) WHERE state = 'pending';
  CREATE INDEX inputs_turn ON inputs(turn_id);
  CREATE INDEX inputs_text ON inputs(text_id) WHERE text_id IS NOT NULL;
  CREATE UNIQUE INDEX threads_sender_key ON threads(connection_id, root_kind, root_id, local_role_id, peer_role)
    WHERE status = 'open' AND started_by = 'local';
  CREATE INDEX threads_root ON threads(root_kind, root_id);
  CREATE INDEX texts_waiting ON texts(state) WHERE state IN ('queued', 'sent', 'received');
  -- A run belongs to its context: when the context goes, so does the run.
  CREATE TRIGGER conversations_delete_run AFTER DELETE ON conversations BEGIN
    DELETE FROM runs WHERE context_kind = 'conversation' AND context_id = OLD.id;
  END;
  CREATE TRIGGER tasks_delete_run AFTER DELETE ON tasks BEGIN
    DELETE FROM runs WHERE context_kind = 'task' AND context_id = OLD.id;
  END;
  CREATE TRIGGER threads_delete_run AFTER DELETE ON threads BEGIN
    DELETE FROM runs WHERE context_kind = 'thread' AND context_id = OLD.id;
  END;
`;
