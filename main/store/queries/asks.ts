// The asks a conversation's or a task's turns made: the outgoing texts that turns sent in
// the agent conversations rooted there, each with the turn that sent it, for the page to
// show under that turn's line.
import type { AskRef } from '../../../shared/domain';
import type { Db } from '../database';
import { all } from '../sql';

interface AskRow {
  thread_id: number;
  id: number;
  sent_by_turn: number;
  created_at: string;
}

/** Oldest first; `since` (a time) leaves out the asks made before the page's first line. */
export function conversationAsks(db: Db, conversationId: number, since: string | null): AskRef[] {
  return rootAsks(db, 'conversation', conversationId, since);
}

/** The same for any root a person works in: a conversation or a task. */
export function rootAsks(db: Db, kind: 'conversation' | 'task', id: number, since: string | null): AskRef[] {
  return all<AskRow>(
    db,
    `SELECT texts.thread_id, texts.id, texts.sent_by_turn, texts.created_at
     FROM threads JOIN texts ON texts.thread_id = threads.id AND texts.direction = 'out'
     WHERE threads.root_kind = ? AND threads.root_id = ? AND threads.started_by = 'local'
       AND texts.sent_by_turn IS NOT NULL AND texts.created_at >= ?
     ORDER BY texts.id`,
    kind,
    id,
    since ?? '',
  ).map((row) => ({
    threadId: row.thread_id,
    textId: row.id,
    sentByTurnId: row.sent_by_turn,
    createdAt: row.created_at,
  }));
}
