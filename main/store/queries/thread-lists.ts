// Thread lists with what each row's summary shows — its connection, run, last turn, what
// waits for it, its newest text and its counts — read in one statement per list, page
// or thread, so a list costs its rows and never a query per row. The order people read a
// page in comes from indexes (see migration 0015): agent conversations whose agent is
// working first, then open ones, then closed ones, the newest text first within each.
import type { ContextKind, TextState, TurnStatus } from '../../../shared/domain';
import type { Db } from '../database';
import { allValues, type Named } from '../sql';
import { WAITING_TEXT } from './runs';
import type { FailedBy, ThreadFilter, ThreadRow, TurnState } from './threads';

/** A thread row with the columns of its summary. */
export interface ThreadListRow extends ThreadRow {
  connection_name: string;
  connection_fingerprint: string;
  run_id: number | null;
  run_session: string | null;
  turn_id: number | null;
  turn_status: TurnStatus | null;
  turn_attempt: number | null;
  turn_reason: string | null;
  turn_started_at: string | null;
  turn_ended_at: string | null;
  /** Inputs that wake the run and texts that wait for a turn. */
  pending: number;
  last_direction: 'out' | 'in' | null;
  last_seq: number | null;
  last_body: string | null;
  last_state: TextState | null;
  last_reason: string | null;
  last_created_at: string | null;
  last_failed_by: FailedBy | null;
  last_sent_by_turn: number | null;
  /** The turn that was given the last text, when it is an incoming one a turn took. */
  last_taken_by_turn: number | null;
  /** A deleted root's title, kept when it was deleted. */
  root_title: string | null;
}

/**
 * The summaries' columns for the thread ids of `page` (a CTE named so, with an `id`
 * column), in the order of `ListValues`. Texts that wait are counted only in a thread
 * that has received texts in hand: the counts kept on the thread say so without
 * reading its texts.
 */
const SUMMARY = `
  threads.id, threads.connection_id, threads.wire_id, threads.local_role_id, threads.local_role, threads.peer_role,
  threads.root_kind, threads.root_id, threads.root_gone, threads.started_by, threads.status, threads.close_reason,
  threads.created_at, threads.closed_at, threads.last_text_id,
  threads.texts_queued, threads.texts_sent, threads.texts_acked, threads.texts_failed, threads.texts_received,
  threads.texts_handled, threads.texts_held,
  connections.name AS connection_name, connections.fingerprint AS connection_fingerprint,
  runs.id AS run_id, runs.session AS run_session,
  turns.id AS turn_id, turns.status AS turn_status, turns.attempt AS turn_attempt, turns.reason AS turn_reason,
  turns.started_at AS turn_started_at, turns.ended_at AS turn_ended_at,
  CASE WHEN runs.id IS NULL THEN 0 ELSE
    (SELECT count(*) FROM inputs WHERE inputs.state = 'pending' AND inputs.run_id = runs.id AND inputs.wakes = 1)
    + CASE WHEN threads.texts_received = 0 THEN 0 ELSE
        (SELECT count(*) FROM texts WHERE texts.thread_id = threads.id AND texts.direction = 'in' AND ${WAITING_TEXT})
      END
  END AS pending,
  last.direction AS last_direction, last.seq AS last_seq, last.body AS last_body, last.state AS last_state,
  last.reason AS last_reason, last.created_at AS last_created_at,
  threads.peer_turn, threads.peer_turn_seq, threads.peer_turn_at, last.failed_by AS last_failed_by,
  deleted_roots.title AS root_title, threads.peer_relayed_on,
  threads.withdrawn_seq, threads.withdrawn_by, threads.withdrawn_at, threads.withdraw_untold,
  last.sent_by_turn AS last_sent_by_turn,
  CASE WHEN last.direction = 'in' THEN
    (SELECT inputs.turn_id FROM inputs WHERE inputs.text_id = last.id AND inputs.state != 'pending'
     ORDER BY inputs.id DESC LIMIT 1)
  END AS last_taken_by_turn`;

/** One row of SUMMARY, as values. */
type ListValues = [
  number,
  number,
  string,
  number | null,
  string,
  string,
  ContextKind,
  number,
  number,
  'local' | 'peer',
  'open' | 'closed',
  string | null,
  string,
  string | null,
  number | null,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  string,
  string,
  number | null,
  string | null,
  number | null,
  TurnStatus | null,
  number | null,
  string | null,
  string | null,
  string | null,
  number,
  'out' | 'in' | null,
  number | null,
  string | null,
  TextState | null,
  string | null,
  string | null,
  TurnState | null,
  number | null,
  string | null,
  FailedBy | null,
  string | null,
  string | null,
  number | null,
  string | null,
  string | null,
  number,
  number | null,
  number | null,
];

const toListRow = (v: [...ListValues, ...unknown[]]): ThreadListRow => ({
  id: v[0],
  connection_id: v[1],
  wire_id: v[2],
  local_role_id: v[3],
  local_role: v[4],
  peer_role: v[5],
  root_kind: v[6],
  root_id: v[7],
  root_gone: v[8],
  started_by: v[9],
  status: v[10],
  close_reason: v[11],
  created_at: v[12],
  closed_at: v[13],
  last_text_id: v[14],
  texts_queued: v[15],
  texts_sent: v[16],
  texts_acked: v[17],
  texts_failed: v[18],
  texts_received: v[19],
  texts_handled: v[20],
  texts_held: v[21],
  connection_name: v[22],
  connection_fingerprint: v[23],
  run_id: v[24],
  run_session: v[25],
  turn_id: v[26],
  turn_status: v[27],
  turn_attempt: v[28],
  turn_reason: v[29],
  turn_started_at: v[30],
  turn_ended_at: v[31],
  pending: v[32],
  last_direction: v[33],
  last_seq: v[34],
  last_body: v[35],
  last_state: v[36],
  last_reason: v[37],
  last_created_at: v[38],
  peer_turn: v[39],
  peer_turn_seq: v[40],
  peer_turn_at: v[41],
  last_failed_by: v[42],
  root_title: v[43],
  peer_relayed_on: v[44],
  withdrawn_seq: v[45],
  withdrawn_by: v[46],
  withdrawn_at: v[47],
  withdraw_untold: v[48],
  last_sent_by_turn: v[49],
  last_taken_by_turn: v[50],
});
const COLUMN_COUNT = 51;

const summaryJoins = (join: 'JOIN' | 'LEFT JOIN') => `
  ${join} threads ON threads.id = page.id
  ${join} connections ON connections.id = threads.connection_id
  LEFT JOIN runs ON runs.context_kind = 'thread' AND runs.context_id = threads.id
  LEFT JOIN turns ON turns.id = (SELECT max(id) FROM turns WHERE turns.run_id = runs.id)
  LEFT JOIN texts AS last ON last.id = threads.last_text_id
  LEFT JOIN deleted_roots ON threads.root_gone = 1 AND deleted_roots.kind = threads.root_kind
    AND deleted_roots.id = threads.root_id`;

type FilterKind = 'root' | 'peerStarted' | 'orphaned';
const kindOf = (filter: ThreadFilter): FilterKind =>
  'root' in filter ? 'root' : 'peerStarted' in filter ? 'peerStarted' : 'orphaned';

/** Which threads a list holds; each has an index that orders it (threads_root, threads_peer_started, threads_orphaned). */
const WHERE: Record<FilterKind, string> = {
  root: 'threads.root_kind = @kind AND threads.root_id = @id',
  peerStarted: "threads.started_by = 'peer'",
  orphaned: 'threads.root_gone = 1',
};

const rootParams = (filter: ThreadFilter): Named =>
  'root' in filter ? { kind: filter.root.kind, id: filter.root.id } : { kind: '', id: 0 };

/**
 * One page: the working ones (few: a running turn each) by themselves, then the rest
 * straight off the list's index — `status DESC` is open before closed — with the limit
 * and offset shifted by how many of the page the working ones took. The list's size is
 * kept in thread_list_sizes; the page is joined to it so an empty page still says it.
 */
const pageSql = (kind: FilterKind) => `
  WITH running AS MATERIALIZED (
    SELECT DISTINCT threads.id, threads.status, threads.last_text_id FROM turns
    JOIN runs ON runs.id = turns.run_id
    JOIN threads ON threads.id = runs.context_id
    WHERE turns.status = 'running' AND runs.context_kind = 'thread' AND ${WHERE[kind]}
  ),
  page AS (
    SELECT * FROM (
      SELECT 0 AS idle, id, status, last_text_id FROM running
      ORDER BY status DESC, last_text_id DESC, id DESC LIMIT @limit OFFSET @offset)
    UNION ALL
    SELECT * FROM (
      SELECT 1 AS idle, threads.id, threads.status, threads.last_text_id FROM threads
      WHERE ${WHERE[kind]} AND threads.id NOT IN (SELECT id FROM running)
      ORDER BY threads.status DESC, threads.last_text_id DESC, threads.id DESC
      LIMIT max(0, @limit - max(0, min(@limit, (SELECT count(*) FROM running) - @offset)))
      OFFSET max(0, @offset - (SELECT count(*) FROM running)))
  )
  SELECT ${SUMMARY}, size.total
  FROM (SELECT coalesce((SELECT size FROM thread_list_sizes
                         WHERE list = '${kind}' AND root_kind = @kind AND root_id = @id), 0) AS total) AS size
  LEFT JOIN page ON 1 ${summaryJoins('LEFT JOIN')}
  ORDER BY page.idle, page.status DESC, page.last_text_id DESC, page.id DESC`;

const PAGE_SQL: Record<FilterKind, string> = {
  root: pageSql('root'),
  peerStarted: pageSql('peerStarted'),
  orphaned: pageSql('orphaned'),
};

/** One page of a thread list, in the order people read it, and how many the list holds. */
export function pageThreads(
  db: Db,
  filter: ThreadFilter,
  offset: number,
  limit: number,
): { total: number; rows: ThreadListRow[] } {
  const rows = allValues<[...ListValues, number]>(db, PAGE_SQL[kindOf(filter)], {
    ...rootParams(filter),
    offset,
    limit,
  });
  // An empty page is the size's row alone, with no thread in it.
  const total = rows[0]?.[COLUMN_COUNT] ?? 0;
  return { total, rows: rows[0]?.[0] === null ? [] : rows.map(toListRow) };
}

/** A whole list (`threads.list`): under a root oldest first, the peer-started and orphaned newest first. */
const LIST_SQL: Record<FilterKind, string> = {
  root: `WITH page AS (SELECT threads.id FROM threads WHERE ${WHERE.root})
         SELECT ${SUMMARY} FROM page ${summaryJoins('JOIN')} ORDER BY threads.id`,
  peerStarted: `WITH page AS (SELECT threads.id FROM threads WHERE ${WHERE.peerStarted})
                SELECT ${SUMMARY} FROM page ${summaryJoins('JOIN')} ORDER BY threads.id DESC`,
  orphaned: `WITH page AS (SELECT threads.id FROM threads WHERE ${WHERE.orphaned})
             SELECT ${SUMMARY} FROM page ${summaryJoins('JOIN')} ORDER BY threads.id DESC`,
};

export function listThreads(db: Db, filter: ThreadFilter): ThreadListRow[] {
  return allValues<ListValues>(db, LIST_SQL[kindOf(filter)], rootParams(filter)).map(toListRow);
}

const ONE_SQL = `WITH page AS (SELECT @id AS id) SELECT ${SUMMARY} FROM page ${summaryJoins('JOIN')}`;

/** One thread with its summary's columns. */
export function threadListRow(db: Db, id: number): ThreadListRow | undefined {
  const [values] = allValues<ListValues>(db, ONE_SQL, { id });
  return values && toListRow(values);
}
