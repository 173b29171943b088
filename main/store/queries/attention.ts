// What each person has read (their floor and their marks) and what is new to them
// above it: role messages, task log entries, incoming texts and attention events. The
// scans start at the person's floor, by id (NOT INDEXED keeps the planner on that range
// rather than walking a whole index to save a sort), so their cost follows what is
// unread, not the history; who may read what is decided afterwards, by the access rules.
import type { Db } from '../database';
import { all, get, run } from '../sql';

/** The kinds of object a person's mark is on. */
export type MarkedKind = 'conversation' | 'task' | 'thread' | 'connection';

/** Everything up to these ids counts as read. */
export interface ReadFloor {
  message_id: number;
  task_log_id: number;
  text_id: number;
  event_id: number;
}

/** New rows of one object, above what the person has read there. */
export interface UnreadRow {
  object_id: number;
  n: number;
  /** The lowest and the highest new id. */
  first: number;
  last: number;
  at: string;
}

/** A text that came in, with the facts of its agent conversation that say whose news it is. */
/** The texts that came in to one root, not read yet. */
export interface IncomingNewsRow {
  root_kind: 'conversation' | 'task' | 'thread';
  root_id: number;
  root_gone: number;
  n: number;
  first: number;
  last: number;
  /** When the last came, and from whom. */
  at: string;
  connection_id: number;
  peer_role: string;
}

export interface AttentionEventRow {
  id: number;
  kind: 'text_failed' | 'turn_failed' | 'peer_paused' | 'peer_revoked';
  object_kind: MarkedKind;
  object_id: number;
  reason: string | null;
  at: string;
}

/** The newest row of each kind: the floor of someone who has read everything. */
export function newestIds(db: Db): ReadFloor {
  return get<ReadFloor>(
    db,
    `SELECT (SELECT coalesce(max(id), 0) FROM messages) AS message_id,
            (SELECT coalesce(max(id), 0) FROM task_log) AS task_log_id,
            (SELECT coalesce(max(id), 0) FROM texts) AS text_id,
            (SELECT coalesce(max(id), 0) FROM attention_events) AS event_id`,
  )!;
}

const noFloor: ReadFloor = { message_id: 0, task_log_id: 0, text_id: 0, event_id: 0 };

export function readFloor(db: Db, personId: number): ReadFloor {
  return (
    get<ReadFloor>(
      db,
      'SELECT message_id, task_log_id, text_id, event_id FROM read_floors WHERE person_id = ?',
      personId,
    ) ?? noFloor
  );
}

/** Raises the person's floor (never lowers it). */
export function raiseFloor(db: Db, personId: number, floor: ReadFloor): void {
  run(
    db,
    `INSERT INTO read_floors (person_id, message_id, task_log_id, text_id, event_id) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (person_id) DO UPDATE SET
       message_id = max(message_id, excluded.message_id), task_log_id = max(task_log_id, excluded.task_log_id),
       text_id = max(text_id, excluded.text_id), event_id = max(event_id, excluded.event_id)`,
    personId,
    floor.message_id,
    floor.task_log_id,
    floor.text_id,
    floor.event_id,
  );
}

/** Drops the person's marks that their floor has caught up with. */
export function dropMarksBelow(db: Db, personId: number, floor: ReadFloor): void {
  run(
    db,
    `DELETE FROM read_marks WHERE person_id = ? AND event_id <= ? AND text_id <= ? AND content_id <= CASE object_kind
       WHEN 'conversation' THEN ? WHEN 'task' THEN ? ELSE 0 END`,
    personId,
    floor.event_id,
    floor.text_id,
    floor.message_id,
    floor.task_log_id,
  );
}

/** Every mark of the person goes: used with a floor raised to the newest rows. */
export function dropMarks(db: Db, personId: number): void {
  run(db, 'DELETE FROM read_marks WHERE person_id = ?', personId);
}

const markOf = (kind: MarkedKind, column: 'content_id' | 'event_id', idColumn: string) =>
  `coalesce((SELECT ${column} FROM read_marks WHERE person_id = ? AND object_kind = '${kind}' AND object_id = ${idColumn}), 0)`;

/** Messages from a role (answers, reports) above the person's floor and mark, per conversation. */
export function unreadMessages(db: Db, personId: number, floor: ReadFloor): UnreadRow[] {
  return all<UnreadRow>(
    db,
    `SELECT m.conversation_id AS object_id, count(*) AS n, min(m.id) AS first, max(m.id) AS last, max(m.created_at) AS at
     FROM messages m NOT INDEXED
     WHERE m.id > ? AND m.author_kind = 'role' AND m.id > ${markOf('conversation', 'content_id', 'm.conversation_id')}
     GROUP BY m.conversation_id`,
    floor.message_id,
    personId,
  );
}

/**
 * Task log entries someone else wrote (the agent's output and reports, other people's
 * comments and status changes), per task. Notices are left to the attention events: a
 * failed turn is one of those.
 */
export function unreadTaskLog(db: Db, personId: number, floor: ReadFloor): UnreadRow[] {
  return all<UnreadRow>(
    db,
    `SELECT l.task_id AS object_id, count(*) AS n, min(l.id) AS first, max(l.id) AS last, max(l.created_at) AS at
     FROM task_log l NOT INDEXED
     WHERE l.id > ? AND l.kind != 'notice' AND NOT (l.author_kind = 'person' AND l.author_id IS ?)
       AND l.id > ${markOf('task', 'content_id', 'l.task_id')}
     GROUP BY l.task_id`,
    floor.task_log_id,
    personId,
    personId,
  );
}

/** How many texts that came in one list reads at most, above the person's floor. */
export const TEXT_SCAN_LIMIT = 50_000;

/** What the scan of texts that came in read: beyond `lastId` nothing is known when it was `full`. */
export interface IncomingScan {
  full: boolean;
  lastId: number;
}

export function scanIncomingTexts(db: Db, floor: ReadFloor, limit = TEXT_SCAN_LIMIT): IncomingScan {
  const row = get<{ n: number; last: number | null }>(
    db,
    `SELECT count(*) AS n, max(id) AS last FROM
       (SELECT x.id FROM texts x NOT INDEXED WHERE x.id > ? AND x.direction = 'in' ORDER BY x.id LIMIT ?)`,
    floor.text_id,
    limit,
  );
  return { full: (row?.n ?? 0) === limit, lastId: row?.last ?? floor.text_id };
}

/**
 * The texts that came in from peers above the person's floor and above their mark on the
 * agent conversation's root, gathered per root (whose news they are: ./attention's rules):
 * how many, the first and the last, and who sent the last. Gathered in SQL, so a list
 * costs one row per root and not one per text.
 */
export function incomingNews(db: Db, personId: number, floor: ReadFloor, limit = TEXT_SCAN_LIMIT): IncomingNewsRow[] {
  return all<IncomingNewsRow>(
    db,
    `WITH scan AS (
       SELECT x.id, x.thread_id FROM texts x NOT INDEXED
       WHERE x.id > ? AND x.direction = 'in' ORDER BY x.id LIMIT ?
     ), news AS (
       SELECT t.root_kind, t.root_id, t.root_gone, count(*) AS n, min(s.id) AS first, max(s.id) AS last
       FROM scan s JOIN threads t ON t.id = s.thread_id
       LEFT JOIN read_marks m ON m.person_id = ? AND m.object_kind = t.root_kind AND m.object_id = t.root_id
       WHERE s.id > coalesce(m.text_id, 0)
       GROUP BY t.root_kind, t.root_id, t.root_gone
     )
     SELECT news.root_kind, news.root_id, news.root_gone, news.n, news.first, news.last,
       x.created_at AS at, t.connection_id, t.peer_role
     FROM news JOIN texts x ON x.id = news.last JOIN threads t ON t.id = x.thread_id
     ORDER BY news.first`,
    floor.text_id,
    limit,
    personId,
  );
}

/** What an item says of an agent conversation, and what the access rules decide on: not the whole row. */
export interface AttentionThreadRow {
  id: number;
  root_kind: 'conversation' | 'task' | 'thread';
  root_id: number;
  root_gone: number;
  started_by: 'local' | 'peer';
  connection_id: number;
  peer_role: string;
  local_role: string;
}

export function attentionThread(db: Db, id: number): AttentionThreadRow | undefined {
  return get<AttentionThreadRow>(
    db,
    `SELECT id, root_kind, root_id, root_gone, started_by, connection_id, peer_role, local_role
     FROM threads WHERE id = ?`,
    id,
  );
}

/** `attentionThread` of many at once, in one statement. */
export function attentionThreads(db: Db, ids: readonly number[]): Map<number, AttentionThreadRow> {
  if (ids.length === 0) return new Map();
  const rows = all<AttentionThreadRow>(
    db,
    `SELECT id, root_kind, root_id, root_gone, started_by, connection_id, peer_role, local_role
     FROM threads WHERE id IN (SELECT value FROM json_each(?))`,
    JSON.stringify(ids),
  );
  return new Map(rows.map((row) => [row.id, row]));
}

/** Attention events above the person's floor and their mark on the object, oldest first. */
export function unreadEvents(db: Db, personId: number, floor: ReadFloor, limit = 20_000): AttentionEventRow[] {
  return all<AttentionEventRow>(
    db,
    `SELECT e.id, e.kind, e.object_kind, e.object_id, e.reason, e.at FROM attention_events e NOT INDEXED
     WHERE e.id > ? AND e.id > coalesce((SELECT event_id FROM read_marks
       WHERE person_id = ? AND object_kind = e.object_kind AND object_id = e.object_id), 0)
     ORDER BY e.id LIMIT ?`,
    floor.event_id,
    personId,
    limit,
  );
}

/** The newest message or task log entry of an object: what reading it now covers. */
function newestContent(db: Db, kind: MarkedKind, id: number): number {
  switch (kind) {
    case 'conversation':
      return get<{ id: number }>(db, 'SELECT max(id) AS id FROM messages WHERE conversation_id = ?', id)?.id ?? 0;
    case 'task':
      return get<{ id: number }>(db, 'SELECT max(id) AS id FROM task_log WHERE task_id = ?', id)?.id ?? 0;
    case 'thread':
    case 'connection':
      return 0;
  }
}

/**
 * The person has read the object as it is now: its content, its events so far, and
 * every answer that came back to it — any text that came in up to now, since a later
 * one has a higher id.
 */
export function markObjectRead(db: Db, personId: number, kind: MarkedKind, id: number): void {
  const eventId =
    get<{ id: number }>(
      db,
      'SELECT max(id) AS id FROM attention_events WHERE object_kind = ? AND object_id = ?',
      kind,
      id,
    )?.id ?? 0;
  run(
    db,
    `INSERT INTO read_marks (person_id, object_kind, object_id, content_id, text_id, event_id)
     VALUES (?, ?, ?, ?, (SELECT coalesce(max(id), 0) FROM texts), ?)
     ON CONFLICT (person_id, object_kind, object_id) DO UPDATE SET
       content_id = max(content_id, excluded.content_id), text_id = max(text_id, excluded.text_id),
       event_id = max(event_id, excluded.event_id), read_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
    personId,
    kind,
    id,
    newestContent(db, kind, id),
    eventId,
  );
}

/** Agent conversations the peers started, and those rooted in them (their relays). */
export function peerStartedThreadIds(db: Db): number[] {
  return all<{ id: number }>(
    db,
    `SELECT t.id FROM threads t WHERE t.root_kind = 'thread' AND (
       (t.root_id = t.id AND t.started_by = 'peer')
       OR EXISTS (SELECT 1 FROM threads r WHERE r.id = t.root_id AND r.started_by = 'peer' AND r.root_id = r.id))`,
  ).map((row) => row.id);
}
