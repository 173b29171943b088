import type { Author, AuthorKind, Conversation, Message, RunSummary } from '../../../shared/domain';
import type { Db } from '../database';
import { all, get, insert, run } from '../sql';

export interface ConversationRow {
  id: number;
  person_id: number;
  role_id: number;
  role_name: string;
  created_at: string;
}

interface MessageRow {
  id: number;
  conversation_id: number;
  author_kind: AuthorKind;
  author_id: number | null;
  author_name: string;
  body: string;
  posted_by_turn: number | null;
  created_at: string;
}

const toMessage = (row: MessageRow): Message => ({
  id: row.id,
  conversationId: row.conversation_id,
  author: { kind: row.author_kind, id: row.author_id, name: row.author_name },
  body: row.body,
  postedByTurnId: row.posted_by_turn,
  createdAt: row.created_at,
});

const SELECT_CONVERSATION = `SELECT conversations.*, roles.name AS role_name FROM conversations JOIN roles ON roles.id = conversations.role_id`;

export function getConversationRow(db: Db, id: number): ConversationRow | undefined {
  return get<ConversationRow>(db, `${SELECT_CONVERSATION} WHERE conversations.id = ?`, id);
}

export function findConversation(db: Db, personId: number, roleId: number): ConversationRow | undefined {
  return get<ConversationRow>(db, `${SELECT_CONVERSATION} WHERE person_id = ? AND role_id = ?`, personId, roleId);
}

export function listConversationRows(db: Db, personId: number): ConversationRow[] {
  return all<ConversationRow>(db, `${SELECT_CONVERSATION} WHERE person_id = ? ORDER BY roles.name`, personId);
}

export function insertConversation(db: Db, personId: number, roleId: number): ConversationRow {
  const id = insert(db, 'INSERT INTO conversations (person_id, role_id) VALUES (?, ?)', personId, roleId);
  return getConversationRow(db, id)!;
}

export function deleteConversation(db: Db, id: number): void {
  run(db, 'DELETE FROM conversations WHERE id = ?', id);
}

export function toConversation(db: Db, row: ConversationRow, runSummary: RunSummary): Conversation {
  const last = get<MessageRow>(db, 'SELECT * FROM messages WHERE conversation_id = ? ORDER BY id DESC LIMIT 1', row.id);
  return {
    id: row.id,
    personId: row.person_id,
    roleId: row.role_id,
    roleName: row.role_name,
    createdAt: row.created_at,
    lastMessage: last ? toMessage(last) : null,
    run: runSummary,
  };
}

/** `postedByTurn`: the turn whose agent posted it, for a line a turn posted. */
export function insertMessage(
  db: Db,
  conversationId: number,
  author: Author,
  body: string,
  postedByTurn: number | null = null,
): Message {
  const id = insert(
    db,
    'INSERT INTO messages (conversation_id, author_kind, author_id, author_name, body, posted_by_turn) VALUES (?, ?, ?, ?, ?, ?)',
    conversationId,
    author.kind,
    author.id,
    author.name,
    body,
    postedByTurn,
  );
  return toMessage(get<MessageRow>(db, 'SELECT * FROM messages WHERE id = ?', id)!);
}

/** The latest `limit` messages, oldest first. */
export function listMessages(
  db: Db,
  conversationId: number,
  limit: number,
  before = Number.MAX_SAFE_INTEGER,
): Message[] {
  return all<MessageRow>(
    db,
    'SELECT * FROM messages WHERE conversation_id = ? AND id < ? ORDER BY id DESC LIMIT ?',
    conversationId,
    before,
    limit,
  )
    .reverse()
    .map(toMessage);
}

export function conversationIdsForRole(db: Db, roleId: number): number[] {
  return all<{ id: number }>(db, 'SELECT id FROM conversations WHERE role_id = ?', roleId).map((row) => row.id);
}

/** The highest message id so far (0 when there is none): what notifications count from. */
export function maxMessageId(db: Db): number {
  return get<{ id: number | null }>(db, 'SELECT MAX(id) AS id FROM messages')?.id ?? 0;
}

/** A role's messages in a conversation after `afterId`, oldest first, at most `limit`. */
export function roleMessagesAfter(db: Db, conversationId: number, afterId: number, limit = 20): Message[] {
  return all<MessageRow>(
    db,
    `SELECT * FROM messages WHERE conversation_id = ? AND id > ? AND author_kind = 'role' ORDER BY id LIMIT ?`,
    conversationId,
    afterId,
    limit,
  ).map(toMessage);
}
