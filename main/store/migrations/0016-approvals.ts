import type { Db } from '../database';

const OLD_STATES = "CHECK (state IN ('queued', 'sent', 'acked', 'failed', 'received', 'handled'))";
const NEW_STATES = "CHECK (state IN ('held', 'queued', 'sent', 'acked', 'failed', 'received', 'handled'))";
const STATES = ['held', 'queued', 'sent', 'acked', 'failed', 'received', 'handled'] as const;

/** `texts_held = texts_held + (NEW.state = 'held') - (OLD.state = 'held'), …`: 0015's, with held. */
const countChanges = (plus: string | null, minus: string | null) =>
  STATES.map(
    (state) =>
      `texts_${state} = texts_${state}` +
      (plus ? ` + (${plus}.state = '${state}')` : '') +
      (minus ? ` - (${minus}.state = '${state}')` : ''),
  ).join(', ');

/**
 * What `texts` has attached that changes here: what waits (the limits and the sender
 * read texts through it) takes held texts in, and each thread's counts by state (0015)
 * count them too. Everything else attached to it is made again as it was.
 */
const REPLACED: Record<string, string> = {
  texts_waiting: "CREATE INDEX texts_waiting ON texts(state) WHERE state IN ('held', 'queued', 'sent', 'received')",
  texts_insert_thread_facts: `CREATE TRIGGER texts_insert_thread_facts AFTER INSERT ON texts BEGIN
    UPDATE threads SET last_text_id = NEW.id, ${countChanges('NEW', null)} WHERE id = NEW.thread_id;
  END`,
  texts_state_thread_facts: `CREATE TRIGGER texts_state_thread_facts AFTER UPDATE OF state ON texts WHEN OLD.state != NEW.state BEGIN
    UPDATE threads SET ${countChanges('NEW', 'OLD')} WHERE id = NEW.thread_id;
  END`,
  texts_delete_thread_facts: `CREATE TRIGGER texts_delete_thread_facts AFTER DELETE ON texts BEGIN
    UPDATE threads SET ${countChanges(null, 'OLD')} WHERE id = OLD.thread_id;
  END`,
};

/**
 * Approvals (DESIGN §11.9). Per connection an owner chooses whether an agent's send goes
 * out at once or waits for a person (`outgoing_policy`), and whether a peer's text goes
 * to the agent at once or waits (`incoming_policy`). A text that waits is `held`, in
 * either direction: held texts count against the limits like any text that waits, so
 * `texts_waiting` covers them. `approvals` is what waits for a person — a held text, or
 * an agent's request to use a tool — with its decision once made.
 *
 * SQLite cannot change a CHECK constraint in place, so `texts` is rebuilt the documented
 * way (https://www.sqlite.org/lang_altertable.html#otheralter), with foreign keys off (the
 * runner checks them all before it commits): its own CREATE statement with the one list
 * of states changed, every column and row copied with its id, the indexes and triggers it
 * had made again (search's as they were; what waits and each thread's counts by state
 * with held texts in), and its id sequence kept where it was, so no id is handed out twice.
 */
export function addApprovals(db: Db): void {
  db.exec(`
    ALTER TABLE connections ADD COLUMN outgoing_policy TEXT NOT NULL DEFAULT 'send'
      CHECK (outgoing_policy IN ('send', 'ask'));
    ALTER TABLE connections ADD COLUMN incoming_policy TEXT NOT NULL DEFAULT 'run'
      CHECK (incoming_policy IN ('run', 'ask'));
    -- No text was held before: every thread holds none.
    ALTER TABLE threads ADD COLUMN texts_held INTEGER NOT NULL DEFAULT 0;
  `);
  rebuildTexts(db);
  db.exec(`
    CREATE TABLE approvals (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      -- outgoing: an agent's text held before it goes out; incoming: a peer's text held
      -- before a turn takes it; permission: an agent asks to use a tool.
      kind TEXT NOT NULL CHECK (kind IN ('outgoing', 'incoming', 'permission')),
      -- Where it waits, which says who reads and decides it: the agent conversation of a
      -- held text, or the context of the run that asks.
      context_kind TEXT NOT NULL CHECK (context_kind IN ('conversation', 'task', 'thread')),
      context_id INTEGER NOT NULL,
      text_id INTEGER UNIQUE REFERENCES texts(id) ON DELETE CASCADE,
      -- The run that is told of the decision (the sending run of an outgoing text).
      run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
      -- A permission request lives as long as the turn that asks.
      turn_id INTEGER REFERENCES turns(id) ON DELETE SET NULL,
      -- A permission request: the tool as the agent named it, and what it asked (JSON).
      title TEXT NOT NULL DEFAULT '',
      detail TEXT CHECK (detail IS NULL OR json_valid(detail)),
      state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'denied', 'cancelled')),
      -- Why it was cancelled (the text failed, the turn ended).
      reason TEXT,
      decided_by INTEGER REFERENCES people(id) ON DELETE SET NULL,
      decided_by_name TEXT,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
      decided_at TEXT,
      CHECK ((kind = 'permission') = (text_id IS NULL))
    );
    CREATE INDEX approvals_pending ON approvals(state) WHERE state = 'pending';
    CREATE INDEX approvals_context ON approvals(context_kind, context_id);
    CREATE INDEX approvals_turn ON approvals(turn_id) WHERE turn_id IS NOT NULL;
  `);
}

function rebuildTexts(db: Db): void {
  const table = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'texts'").pluck().get() as
    string | undefined;
  if (!table?.includes(OLD_STATES)) throw new Error('texts does not have the states this migration expects');
  const columns = (db.prepare("SELECT name FROM pragma_table_info('texts')").pluck().all() as string[])
    .map((name) => `"${name}"`)
    .join(', ');
  const attached = db
    .prepare(
      "SELECT name, sql FROM sqlite_master WHERE tbl_name = 'texts' AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY type, name",
    )
    .all() as Array<{ name: string; sql: string }>;
  for (const name of Object.keys(REPLACED))
    if (!attached.some((entry) => entry.name === name))
      throw new Error(`texts has no ${name} for this migration to change`);
  const sequence = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'texts'").pluck().get() as
    number | undefined;

  const definition = table.replace(/^CREATE TABLE\s+("texts"|texts)/, 'CREATE TABLE parley_new_texts');
  if (definition === table) throw new Error('texts has a CREATE statement this migration cannot read');
  db.exec(definition.replace(OLD_STATES, NEW_STATES));
  db.exec(`INSERT INTO parley_new_texts (${columns}) SELECT ${columns} FROM texts`);
  db.exec('DROP TABLE texts');
  db.exec('ALTER TABLE parley_new_texts RENAME TO texts');
  for (const { name, sql } of attached) db.exec(REPLACED[name] ?? sql);
  db.exec(
    "INSERT INTO sqlite_sequence (name, seq) SELECT 'texts', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'texts')",
  );
  db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'texts'").run(sequence ?? 0);
}
