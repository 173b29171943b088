// The app API's `search`: the words people type, matched in the full-text index over
// what they may read. Rows written since the index last caught up are indexed first,
// so a search finds everything committed before it.
import type { SearchHit } from '../../shared/api-contract';
import type { ContextKind, Person } from '../../shared/domain';
import { contextTarget } from '../access/lookup';
import { decide } from '../access/rules';
import { hasWaitingRows, indexAllWaitingRows } from '../search/index-catch-up';
import { matchExpression } from '../search/match-expression';
import { newSnippetMarks, parseSnippet } from '../search/snippet';
import type { Db } from '../store/database';
import {
  hitTitle,
  markedSnippet,
  boundedSearchExactBelow,
  searchCandidates,
  threadRoot,
  type CandidateRow,
  type SearchScope,
} from '../store/queries/search';
import type { HandlerTable } from './handlers';

const DEFAULT_LIMIT = 20;
/** The fewest matches each index gives a first, bounded search. */
const MIN_PER_INDEX = 200;

/**
 * Whether the person may read the conversation, task or agent conversation a hit is
 * in: the access rules' answer (DESIGN §7). The query already narrows to them in SQL;
 * this keeps any hit that slipped through from showing.
 */
export function mayReadHit(db: Db, person: Person, kind: ContextKind, id: number): boolean {
  const target = contextTarget(db, { kind, id });
  return target !== undefined && decide(person, target, 'read').allowed;
}

function toHit(db: Db, row: CandidateRow, match: string): SearchHit {
  const marks = newSnippetMarks();
  const { text, highlights } = parseSnippet(markedSnippet(db, row.source, row.row_id, match, marks), marks);
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

/** Up to `wanted` hits the person may read, each with its score, paging through the candidates. */
function readableHits(
  db: Db,
  person: Person,
  match: string,
  scope: SearchScope,
  wanted: number,
  perIndex: number | null,
): Array<{ hit: SearchHit; score: number }> {
  const hits: Array<{ hit: SearchHit; score: number }> = [];
  const pageSize = wanted * 2;
  for (let offset = 0; hits.length < wanted; offset += pageSize) {
    const page = searchCandidates(db, match, scope, { limit: pageSize, offset, perIndex });
    for (const row of page) {
      if (hits.length === wanted) break;
      if (mayReadHit(db, person, row.kind, row.id)) hits.push({ hit: toHit(db, row, match), score: row.score });
    }
    // A page comes back short at the end.
    if (page.length < pageSize) break;
  }
  return hits;
}

export const searchHandlers: Pick<HandlerTable, 'search'> = {
  search: ({ services: { db }, person }, { query, limit }) => {
    const match = matchExpression(query);
    if (match === null) return { hits: [] };
    if (hasWaitingRows(db)) indexAllWaitingRows(db);
    const wanted = limit ?? DEFAULT_LIMIT;
    const scope = { personId: person.id, owner: person.kind === 'owner' };
    // First each index's best few. That is the answer unless an index had more and the
    // hits run past where its left-out matches begin (or are too few); then all matches.
    // Among hits that tie with a left-out match, newer first may not hold.
    const perIndex = Math.max(MIN_PER_INDEX, wanted * 10);
    let hits = readableHits(db, person, match, scope, wanted, perIndex);
    const exactBelow = boundedSearchExactBelow(db, match, perIndex);
    if (exactBelow !== null && (hits.length < wanted || hits.some(({ score }) => score > exactBelow)))
      hits = readableHits(db, person, match, scope, wanted, null);
    return { hits: hits.map(({ hit }) => hit) };
  },
};
