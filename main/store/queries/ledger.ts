// The record of a conversation's or a task's exchanges with other installations (DESIGN
// §12.8), read in four statements whatever its size: the agent conversations rooted there
// and, through local relays, in them (a recursive walk over the root index); their texts
// oldest first; the approvals of those texts; and the turns that sent them or took them,
// as stored (`texts.sent_by_turn`, `inputs.turn_id`), never inferred.
import type { Ledger, LedgerEntry, LedgerRootKind, LedgerText, LedgerTurn } from '../../../shared/ledger';
import type { TurnStatus } from '../../../shared/domain';
import type { Db } from '../database';
import { all } from '../sql';
import type { TextRow, ThreadRow } from './threads';

/** At most this many texts in one record; the rest is said to be left out. */
export const LEDGER_TEXT_LIMIT = 5_000;

type LedgerThreadRow = ThreadRow & { peer: string };

/** A text as the record reads it: every column but when it last changed. */
type LedgerTextRow = Omit<TextRow, 'updated_at'>;

interface ApprovalRow {
  text_id: number;
  state: 'pending' | 'approved' | 'denied' | 'cancelled';
  decided_by_name: string | null;
  decided_at: string | null;
}

interface TurnRow {
  /** The text the turn sent (`sent`) or took (`taken`). */
  text_id: number;
  link: 'sent' | 'taken';
  turn_id: number;
  role: string;
  status: TurnStatus;
  reason: string | null;
  started_at: string;
  ended_at: string | null;
}

/** The agent conversations of the record: rooted at the root, or (a relay) at one of those, any depth. */
function ledgerThreads(db: Db, kind: LedgerRootKind, id: number): LedgerThreadRow[] {
  return all<LedgerThreadRow>(
    db,
    `WITH RECURSIVE ledger(id) AS (
       SELECT threads.id FROM threads WHERE threads.root_kind = ? AND threads.root_id = ?
       UNION
       SELECT threads.id FROM threads JOIN ledger ON threads.root_kind = 'thread' AND threads.root_id = ledger.id
     )
     SELECT threads.*, connections.name AS peer
     FROM ledger JOIN threads ON threads.id = ledger.id JOIN connections ON connections.id = threads.connection_id
     ORDER BY threads.id`,
    kind,
    id,
  );
}

/** The record for one root, of the agent conversations in `readable` (the access rules' choice). */
export function readLedger(
  db: Db,
  root: { kind: LedgerRootKind; id: number; title: string },
  readable: <R extends ThreadRow>(rows: R[]) => R[],
  limit = LEDGER_TEXT_LIMIT,
): Ledger {
  const kept = readable(ledgerThreads(db, root.kind, root.id));
  if (kept.length === 0) return { root, entries: [], truncated: false };
  const ids = JSON.stringify(kept.map((thread) => thread.id));
  const texts = all<LedgerTextRow>(
    db,
    `SELECT texts.id, texts.thread_id, texts.direction, texts.seq, texts.body, texts.state, texts.reason,
            texts.failed_by, texts.sent_by_turn, texts.created_at
     FROM json_each(?) AS wanted JOIN texts ON texts.thread_id = wanted.value
     ORDER BY texts.id LIMIT ?`,
    ids,
    limit + 1,
  );
  const truncated = texts.length > limit;
  if (truncated) texts.length = limit;
  const textIds = JSON.stringify(texts.map((text) => text.id));
  const approvals = new Map(
    all<ApprovalRow>(
      db,
      `SELECT approvals.text_id, approvals.state, approvals.decided_by_name, approvals.decided_at
       FROM json_each(?) AS wanted JOIN approvals ON approvals.text_id = wanted.value`,
      textIds,
    ).map((row) => [row.text_id, row]),
  );
  // The turn that sent each outgoing text and every turn that took an incoming one.
  const sent: Array<[number, number]> = [];
  for (const text of texts) if (text.sent_by_turn !== null) sent.push([text.id, text.sent_by_turn]);
  const sentBy = new Map<number, LedgerTurn>();
  const takenBy = new Map<number, LedgerTurn[]>();
  for (const row of all<TurnRow>(
    db,
    `SELECT link.text_id, link.link, turns.id AS turn_id, roles.name AS role, turns.status, turns.reason,
            turns.started_at, turns.ended_at
     FROM (SELECT json_extract(pair.value, '$[0]') AS text_id, 'sent' AS link, json_extract(pair.value, '$[1]') AS turn_id
             FROM json_each(?) AS pair
           UNION ALL
           SELECT inputs.text_id, 'taken', inputs.turn_id
             FROM json_each(?) AS wanted JOIN inputs ON inputs.text_id = wanted.value
             WHERE inputs.turn_id IS NOT NULL) AS link
     JOIN turns ON turns.id = link.turn_id JOIN runs ON runs.id = turns.run_id JOIN roles ON roles.id = runs.role_id
     ORDER BY turns.id`,
    JSON.stringify(sent),
    textIds,
  )) {
    const turn: LedgerTurn = {
      id: row.turn_id,
      role: row.role,
      status: row.status,
      reason: row.reason,
      startedAt: row.started_at,
      endedAt: row.ended_at,
    };
    if (row.link === 'sent') sentBy.set(row.text_id, turn);
    else {
      const list = takenBy.get(row.text_id) ?? [];
      if (!list.some((other) => other.id === turn.id)) list.push(turn);
      takenBy.set(row.text_id, list);
    }
  }
  const byThread = new Map<number, LedgerText[]>();
  for (const text of texts) {
    const approval = approvals.get(text.id);
    const list = byThread.get(text.thread_id) ?? [];
    list.push({
      id: text.id,
      direction: text.direction,
      seq: text.seq,
      body: text.body,
      state: text.state,
      reason: text.reason,
      failedBy: text.failed_by,
      at: text.created_at,
      approval: approval ? { state: approval.state, by: approval.decided_by_name, at: approval.decided_at } : null,
      sentBy: sentBy.get(text.id) ?? null,
      takenBy: takenBy.get(text.id) ?? [],
    });
    byThread.set(text.thread_id, list);
  }
  const inRecord = new Set(kept.map((thread) => thread.id));
  const entries: LedgerEntry[] = kept.map((thread) => ({
    threadId: thread.id,
    peer: thread.peer,
    localRole: thread.local_role,
    peerRole: thread.peer_role,
    startedBy: thread.started_by,
    status: thread.status,
    closeReason: thread.close_reason,
    relayOf: thread.root_kind === 'thread' && inRecord.has(thread.root_id) ? thread.root_id : null,
    peerTurn: thread.peer_turn,
    startedAt: thread.created_at,
    texts: byThread.get(thread.id) ?? [],
  }));
  return { root, entries, truncated };
}
