// The app API's `search`: the words people type, matched in the full-text index over
// what they may read. Rows written since the index last caught up are indexed first,
// so a search finds everything committed before it.
import type { SearchHit } from '../../shared/api-contract';
import type { ContextKind, Person } from '../../shared/domain';
import { hasWaitingRows, indexAllWaitingRows } from '../search/index-catch-up';
import { matchExpression } from '../search/match-expression';
import { parseSnippet } from '../search/snippet';
import type { Db } from '../store/database';
import { getConversationRow } from '../store/queries/conversations';
import { hitTitle, markedSnippet, searchCandidates, threadRoot, type CandidateRow } from '../store/queries/search';
import { getTaskRow } from '../store/queries/tasks';
import { getThread } from '../store/queries/threads';
import type { HandlerTable } from './handlers';

const DEFAULT_LIMIT = 20;

/**
 * Whether the person may read the conversation, task or agent conversation a hit is
 * in (DESIGN §7): the one question search asks of the access rules. The query already
 * narrows to the same rules in SQL; this keeps a hit that slipped through from showing.
 */
export function mayReadHit(db: Db, person: Person, kind: ContextKind, id: number): boolean {
  switch (kind) {
    case 'conversation':
      return getConversationRow(db, id)?.person_id === person.id;
    case 'task':
      return getTaskRow(db, id) !== undefined;
    case 'thread': {
      const thread = getThread(db, id);
      if (!thread) return false;
      if (thread.root_gone) return person.kind === 'owner';
      if (thread.root_kind === 'conversation') return getConversationRow(db, thread.root_id)?.person_id === person.id;
      return true;
    }
  }
}

function toHit(db: Db, row: CandidateRow, match: string): SearchHit {
  const { text, highlights } = parseSnippet(markedSnippet(db, row.source, row.row_id, match));
  const hit: SearchHit = {
    kind: row.kind,
    id: row.id,
    title: hitTitle(db, row.kind, row.id),
    snippet: text,
    highlights,
    at: row.at,
  };
  if (row.kind === 'thread') {
    const root = threadRoot(db, row.id);
    if (root) hit.root = root;
  }
  return hit;
}

export const searchHandlers: Pick<HandlerTable, 'search'> = {
  search: ({ services: { db }, person }, { query, limit }) => {
    const match = matchExpression(query);
    if (match === null) return { hits: [] };
    if (hasWaitingRows(db)) indexAllWaitingRows(db);
    const wanted = limit ?? DEFAULT_LIMIT;
    const scope = { personId: person.id, owner: person.kind === 'owner' };
    const hits: SearchHit[] = [];
    // Pages until enough readable hits are found; a page comes back short at the end.
    const pageSize = wanted * 2;
    for (let offset = 0; hits.length < wanted; offset += pageSize) {
      const page = searchCandidates(db, match, scope, pageSize, offset);
      for (const row of page) {
        if (hits.length === wanted) break;
        if (mayReadHit(db, person, row.kind, row.id)) hits.push(toHit(db, row, match));
      }
      if (page.length < pageSize) break;
    }
    return { hits };
  },
};
