// The search query: FTS5 matches in the four indexes (migration 0014), each joined to
// its row and narrowed to what the person may read, one hit per object (its best
// match), best first and, among equals, newest first. bm25 scores are negative: lower
// is better.
import type { Statement } from 'better-sqlite3';
import type { ContextKind } from '../../../shared/domain';
import { MATCH_END, MATCH_START } from '../../search/snippet';
import type { Db } from '../database';
import { get } from '../sql';

export type HitSource = 'messages' | 'tasks' | 'task_log' | 'texts';

export interface CandidateRow {
  kind: ContextKind;
  /** The conversation, task or agent conversation (row id) the match is in. */
  id: number;
  source: HitSource;
  /** The matching row of `source`. */
  row_id: number;
  score: number;
  at: string;
}

export interface SearchScope {
  personId: number;
  /** Owners also read agent conversations whose root is gone. */
  owner: boolean;
}

/**
 * The people's side of DESIGN §7 as SQL, so a page of hits is not mostly hits the
 * caller may not read: their own conversations, every task, agent conversations whose
 * root they read. It only narrows; each hit is still checked by the caller.
 */
export const CANDIDATES_SQL = `
  SELECT kind, id, source, row_id, score, at FROM (
    SELECT *, row_number() OVER (PARTITION BY kind, id ORDER BY score, at DESC) AS best FROM (
      SELECT 'conversation' AS kind, m.conversation_id AS id, 'messages' AS source, m.id AS row_id,
             messages_search.rank AS score, m.created_at AS at
        FROM messages_search
        JOIN messages m ON m.id = messages_search.rowid
        JOIN conversations c ON c.id = m.conversation_id
       WHERE messages_search MATCH @query AND c.person_id = @person
      UNION ALL
      SELECT 'task', t.id, 'tasks', t.id, bm25(tasks_search, 4.0, 1.0), t.created_at
        FROM tasks_search
        JOIN tasks t ON t.id = tasks_search.rowid
       WHERE tasks_search MATCH @query
      UNION ALL
      SELECT 'task', l.task_id, 'task_log', l.id, task_log_search.rank, l.created_at
        FROM task_log_search
        JOIN task_log l ON l.id = task_log_search.rowid
       WHERE task_log_search MATCH @query
      UNION ALL
      SELECT 'thread', x.thread_id, 'texts', x.id, texts_search.rank, x.created_at
        FROM texts_search
        JOIN texts x ON x.id = texts_search.rowid
        JOIN threads th ON th.id = x.thread_id
       WHERE texts_search MATCH @query
         AND CASE
               WHEN th.root_gone THEN @owner
               WHEN th.root_kind = 'conversation'
                 THEN EXISTS (SELECT 1 FROM conversations rc WHERE rc.id = th.root_id AND rc.person_id = @person)
               ELSE 1
             END
    )
  )
  WHERE best = 1
  ORDER BY score, at DESC
  LIMIT @limit OFFSET @offset`;

const candidateStatements = new WeakMap<Db, Statement>();

export function searchCandidates(
  db: Db,
  query: string,
  scope: SearchScope,
  limit: number,
  offset: number,
): CandidateRow[] {
  let statement = candidateStatements.get(db);
  if (!statement) {
    statement = db.prepare(CANDIDATES_SQL);
    candidateStatements.set(db, statement);
  }
  return statement.all({
    query,
    person: scope.personId,
    owner: scope.owner ? 1 : 0,
    limit,
    offset,
  }) as CandidateRow[];
}

/** How many characters of context a snippet has around its matches, in tokens. */
const SNIPPET_TOKENS = 14;

/** The matching row's snippet, with MATCH_START/MATCH_END around each match. */
export function markedSnippet(db: Db, source: HitSource, rowId: number, query: string): string {
  const index = `${source}_search`;
  const row = get<{ snippet: string }>(
    db,
    `SELECT snippet(${index}, -1, '${MATCH_START}', '${MATCH_END}', '…', ${SNIPPET_TOKENS}) AS snippet
       FROM ${index} WHERE ${index} MATCH ? AND rowid = ?`,
    query,
    rowId,
  );
  return row?.snippet ?? '';
}

/** What a hit is called: the conversation's role, the task's title, the agent conversation's peer and role. */
export function hitTitle(db: Db, kind: ContextKind, id: number): string {
  switch (kind) {
    case 'conversation':
      return (
        get<{ name: string }>(
          db,
          'SELECT r.name FROM conversations c JOIN roles r ON r.id = c.role_id WHERE c.id = ?',
          id,
        )?.name ?? 'conversation'
      );
    case 'task':
      return get<{ title: string }>(db, 'SELECT title FROM tasks WHERE id = ?', id)?.title ?? 'task';
    case 'thread': {
      const row = get<{ peer: string; peer_role: string }>(
        db,
        'SELECT c.name AS peer, th.peer_role FROM threads th JOIN connections c ON c.id = th.connection_id WHERE th.id = ?',
        id,
      );
      return row ? `${row.peer}/${row.peer_role}` : 'agent conversation';
    }
  }
}

export interface HitRoot {
  kind: ContextKind;
  id: number;
  gone: boolean;
}

export function threadRoot(db: Db, threadId: number): HitRoot | undefined {
  const row = get<{ root_kind: ContextKind; root_id: number; root_gone: number }>(
    db,
    'SELECT root_kind, root_id, root_gone FROM threads WHERE id = ?',
    threadId,
  );
  return row && { kind: row.root_kind, id: row.root_id, gone: row.root_gone !== 0 };
}
