// The search query: FTS5 matches in the four indexes (migration 0014), each joined to
// its row and narrowed to what the person may read, one hit per object (its best
// match), best first and, among equals, newest first. bm25 scores are negative: lower
// is better.
import type { Statement } from 'better-sqlite3';
import type { ContextKind } from '../../../shared/domain';
import type { Db } from '../database';
import { get } from '../sql';

/** The markers around each match in a snippet (../../search/snippet.ts draws them). */
export interface SnippetMarks {
  start: string;
  end: string;
}

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

/** Matches in one index, best first: with `@k`, only its `@k` best (FTS5 ranks them without sorting them all). */
const matches = (index: string, bounded: boolean) =>
  `(SELECT rowid, rank FROM ${index} WHERE ${index} MATCH @query ORDER BY rank${bounded ? ' LIMIT @k' : ''})`;

/**
 * The people's side of DESIGN §7 as SQL, so a page of hits is not mostly hits the
 * caller may not read: their own conversations, every task, agent conversations whose
 * root they read. It only narrows; each hit is still checked by the caller.
 *
 * Bounded, each index gives its `@k` best matches before anything is joined: a word
 * found in most of a million texts costs a ranking, not a million joins. The caller
 * asks again unbounded when that left too few hits and some index had more. CROSS JOIN
 * keeps SQLite from starting at the person's conversations: the matches lead, and
 * each row is one lookup by primary key.
 */
export function candidatesSql(bounded: boolean): string {
  return `
  SELECT kind, id, source, row_id, score, at FROM (
    SELECT *, row_number() OVER (PARTITION BY kind, id ORDER BY score, at DESC) AS best FROM (
      SELECT 'conversation' AS kind, m.conversation_id AS id, 'messages' AS source, m.id AS row_id,
             s.rank AS score, m.created_at AS at
        FROM ${matches('messages_search', bounded)} s
        CROSS JOIN messages m ON m.id = s.rowid
        CROSS JOIN conversations c ON c.id = m.conversation_id
       WHERE c.person_id = @person
      UNION ALL
      SELECT 'task', t.id, 'tasks', t.id, s.rank, t.created_at
        FROM ${matches('tasks_search', bounded)} s
        CROSS JOIN tasks t ON t.id = s.rowid
      UNION ALL
      SELECT 'task', l.task_id, 'task_log', l.id, s.rank, l.created_at
        FROM ${matches('task_log_search', bounded)} s
        CROSS JOIN task_log l ON l.id = s.rowid
      UNION ALL
      SELECT 'thread', x.thread_id, 'texts', x.id, s.rank, x.created_at
        FROM ${matches('texts_search', bounded)} s
        CROSS JOIN texts x ON x.id = s.rowid
        CROSS JOIN threads th ON th.id = x.thread_id
       WHERE CASE
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
}

const candidateStatements = new WeakMap<Db, { bounded: Statement; unbounded: Statement }>();

/**
 * A page of candidates, best first; `perIndex` bounds how many matches each index
 * gives (null: all of them).
 */
export function searchCandidates(
  db: Db,
  query: string,
  scope: SearchScope,
  page: { limit: number; offset: number; perIndex: number | null },
): CandidateRow[] {
  let statements = candidateStatements.get(db);
  if (!statements) {
    statements = { bounded: db.prepare(candidatesSql(true)), unbounded: db.prepare(candidatesSql(false)) };
    candidateStatements.set(db, statements);
  }
  const params = {
    query,
    person: scope.personId,
    owner: scope.owner ? 1 : 0,
    limit: page.limit,
    offset: page.offset,
  };
  return (
    page.perIndex === null ? statements.unbounded.all(params) : statements.bounded.all({ ...params, k: page.perIndex })
  ) as CandidateRow[];
}

/**
 * How far a search bounded to `k` matches per index is exact: the best score among the
 * matches each index left out (its (k+1)-th best), or null when no index had more than
 * `k`. A hit scoring better than that cannot have been preceded by one left out.
 */
export function boundedSearchExactBelow(db: Db, query: string, k: number): number | null {
  let below: number | null = null;
  for (const source of ['messages', 'tasks', 'task_log', 'texts'] as const) {
    const index = `${source}_search`;
    // Counting stops at k + 1 and ranks nothing; only an index with more is ranked again.
    const count = get<{ n: number }>(
      db,
      `SELECT count(*) AS n FROM (SELECT 1 FROM ${index} WHERE ${index} MATCH ? LIMIT ?)`,
      query,
      k + 1,
    );
    if (!count || count.n <= k) continue;
    const left = get<{ rank: number }>(
      db,
      `SELECT rank FROM ${index} WHERE ${index} MATCH ? ORDER BY rank LIMIT 1 OFFSET ?`,
      query,
      k,
    );
    if (left && (below === null || left.rank < below)) below = left.rank;
  }
  return below;
}

/** How many characters of context a snippet has around its matches, in tokens. */
const SNIPPET_TOKENS = 14;

/** The matching row's snippet, with the search's marks around each match. */
export function markedSnippet(db: Db, source: HitSource, rowId: number, query: string, marks: SnippetMarks): string {
  const index = `${source}_search`;
  const row = get<{ snippet: string }>(
    db,
    `SELECT snippet(${index}, -1, ?, ?, '…', ${SNIPPET_TOKENS}) AS snippet
       FROM ${index} WHERE ${index} MATCH ? AND rowid = ?`,
    marks.start,
    marks.end,
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
