// The relay end (DESIGN §12.5): a turn in an agent conversation a peer started may ask
// other peers instead of answering. Its asker then hears `relayed` and whom it waits on,
// and when one of those asks ends without an answer — stopped or failed there, ended
// unanswered, refused, or no answer can come because the connection is paused here —
// the relaying run gets a notice that its next turn answers for: that turn's output
// goes back as the reply (the reply guard), or its own end is told. So the first asker
// always reaches an end, however many hops down the question went.
import { getConnectionRow } from '../store/queries/connections';
import { getThread, lastText, type ThreadRow } from '../store/queries/threads';
import { all } from '../store/sql';
import type { Db } from '../store/database';
import type { EngineCore } from './engine-core';

/**
 * The asks a run of agent conversation `rootThreadId` made that wait for an answer, as
 * PEER/ROLE: agent conversations started here and rooted there whose last text is ours,
 * not failed, and not ended by the peer's word on the turn that took it.
 */
export function openRelayAsks(db: Db, rootThreadId: number): string[] {
  return all<{ name: string }>(
    db,
    `SELECT DISTINCT connections.name || '/' || threads.peer_role AS name
     FROM threads
     JOIN connections ON connections.id = threads.connection_id
     JOIN texts AS last ON last.id = threads.last_text_id
     WHERE threads.root_kind = 'thread' AND threads.root_id = ? AND threads.started_by = 'local'
       AND threads.status = 'open' AND last.direction = 'out' AND last.state != 'failed'
       AND NOT (coalesce(threads.peer_turn IN ('stopped', 'failed', 'ended') AND threads.peer_turn_seq >= last.seq, 0))
     ORDER BY threads.id`,
    rootThreadId,
  ).map((row) => row.name);
}

/** The asker took back everything it asked in this agent conversation: no answer is owed it. */
function withdrawnByAsker(db: Db, root: ThreadRow): boolean {
  if (root.withdrawn_seq === null) return false;
  const asked = all<{ seq: number | null }>(
    db,
    "SELECT max(seq) AS seq FROM texts WHERE thread_id = ? AND direction = 'in'",
    root.id,
  )[0]?.seq;
  return asked === null || asked === undefined || root.withdrawn_seq >= asked;
}

/**
 * An ask made here ended without an answer (`why` says how, in words for the agent):
 * when it was made by a run working for a peer's agent conversation, that run is told,
 * and the turn the notice starts answers its asker. Inside the caller's transaction.
 */
export function relayAskEnded(
  core: EngineCore,
  ask: ThreadRow,
  why: string,
  /** Only when nothing ended it before (a pause ends every ask of its connection, answered or told or not). */
  onlyIfOpen = false,
): void {
  const { db } = core;
  if (ask.started_by !== 'local' || ask.root_kind !== 'thread' || ask.root_id === null) return;
  const root = getThread(db, ask.root_id);
  if (!root || root.started_by !== 'peer' || root.status !== 'open' || withdrawnByAsker(db, root)) return;
  const last = lastText(db, ask.id);
  // An answer came after the question: nothing ended unanswered.
  if (!last || last.direction !== 'out') return;
  // We took it back ourselves (a Stop here, or our asker's withdrawal): no one waits on it.
  if ((ask.withdrawn_seq ?? 0) >= last.seq) return;
  if (
    onlyIfOpen &&
    ((last.state === 'failed' && last.reason !== 'paused') ||
      (['stopped', 'failed', 'ended'].includes(ask.peer_turn ?? '') && (ask.peer_turn_seq ?? 0) >= last.seq))
  )
    return;
  const asker = getConnectionRow(db, root.connection_id);
  if (!asker || asker.status === 'revoked') return;
  const peer = `${getConnectionRow(db, ask.connection_id)?.name ?? 'the peer'}/${ask.peer_role}`;
  core.notify(
    root,
    `Your question to ${peer} (your text #${last.seq} there) ended without an answer: ${why}. No answer will come from there. Answer the agent conversation you are working in now with what you have (your final output is sent as the reply), or ask elsewhere.`,
    // Paused means nothing moves: then it waits for the next turn.
    asker.status === 'active',
    true,
  );
}

/**
 * The answer to an ask made for a peer's agent conversation came, but the turn that took
 * it here was stopped, failed, or passed nothing on: the relaying run is told, and its
 * next turn answers its asker, as when the ask ends unanswered.
 */
export function relayAnswerLost(core: EngineCore, ask: ThreadRow, why: string): void {
  const { db } = core;
  if (ask.started_by !== 'local' || ask.root_kind !== 'thread' || ask.root_id === null) return;
  const root = getThread(db, ask.root_id);
  if (!root || root.started_by !== 'peer' || root.status !== 'open' || withdrawnByAsker(db, root)) return;
  const asker = getConnectionRow(db, root.connection_id);
  if (!asker || asker.status === 'revoked') return;
  const peer = `${getConnectionRow(db, ask.connection_id)?.name ?? 'the peer'}/${ask.peer_role}`;
  core.notify(
    root,
    `${peer} answered your question, but ${why}, so the answer was not passed on here. Answer the agent conversation you are working in now with what you have (your final output is sent as the reply); \`parley history\` shows what ${peer} said.`,
    asker.status === 'active',
    true,
  );
}
