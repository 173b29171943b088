// Withdrawals, declines and pause, told to the peer (protocol 2 revision 2).
//
// A withdrawal takes back the asks of an agent conversation we started: it is committed
// here first (the texts not yet sent fail), then the `withdraw` frame goes on every link
// until the peer answers `noted`. The peer stops the run working on it as its own
// person's Stop would, marks what it was given handled, and withdraws in turn the open
// asks that run made under that agent conversation: down a relay chain, each hop durable
// before it confirms. A person's decline of a peer's held text goes back as
// `reject … declined`, also until `noted`. A pause here goes as `status`, on each change
// and on every link. A peer of revision 1 gets none of it (see docs/agent-conversations.md).
import type { ConnectionStatus } from '../../shared/domain';
import type { ApprovalRow } from '../store/queries/approvals';
import { getConnectionRow } from '../store/queries/connections';
import { failText, getThread, setTextState, threadByWireId, type ThreadRow } from '../store/queries/threads';
import {
  declineNoted,
  hasOpenAsk,
  lastOutSeq,
  markDeclineUntold,
  openAsksUnder,
  recordWithdrawal,
  setPeerPaused,
  untoldDeclines,
  untoldWithdrawals,
  waitingIncomingUpTo,
  withdrawalNoted,
} from '../store/queries/withdrawals';
import { transaction, type Db } from '../store/database';
import type { EngineCore, OpenLink } from './engine-core';
import { EngineError } from './errors';
import type { Tx } from './group-commit';
import { endHeld } from './holds';
import { DECLINED_REVISION, frameRevision, type NotedFrame, type WithdrawFrame } from './wire';

type After = (action: () => void) => void;

/** Whether a person here may withdraw an agent conversation's asks, and if not, why. */
export type WithdrawVerdict = 'withdraw' | 'not_ours' | 'answered' | 'revoked';

export function decideWithdraw(facts: {
  startedBy: 'local' | 'peer';
  openAsk: boolean;
  connection: ConnectionStatus;
}): WithdrawVerdict {
  if (facts.startedBy !== 'local') return 'not_ours';
  if (facts.connection === 'revoked') return 'revoked';
  return facts.openAsk ? 'withdraw' : 'answered';
}

const refusals: Record<Exclude<WithdrawVerdict, 'withdraw'>, () => EngineError> = {
  not_ours: () =>
    new EngineError('invalid', 'only an ask made from here can be withdrawn; stop the agent to end work asked of you'),
  answered: () =>
    new EngineError(
      'invalid',
      'there is nothing to withdraw: an answer came, the peer’s turn on it ended, or it was withdrawn already',
    ),
  revoked: () => new EngineError('revoked', 'the connection was revoked; nothing more goes to that peer'),
};

export class Withdrawals {
  constructor(private readonly core: EngineCore) {}

  /** threads.withdraw: a person here takes back what an agent conversation we started asks. */
  async withdraw(threadRowId: number, by: string): Promise<{ withdrawn: true }> {
    const { db } = this.core;
    let cancelled: ApprovalRow[] = [];
    const thread = transaction(db, () => {
      const row = getThread(db, threadRowId);
      if (!row) throw new EngineError('not_found', 'no such agent conversation');
      const connection = getConnectionRow(db, row.connection_id)!;
      const verdict = decideWithdraw({
        startedBy: row.started_by,
        openAsk: row.started_by === 'local' && hasOpenAsk(db, row),
        connection: connection.status,
      });
      if (verdict !== 'withdraw') throw refusals[verdict]();
      cancelled = withdrawInTransaction(db, row, by);
      return row;
    });
    this.afterWithdrawals([thread], cancelled);
    return Promise.resolve({ withdrawn: true as const });
  }

  /** Inside a transaction: withdraws the open asks under a root (it is being deleted). Returns what to send after. */
  withdrawUnder(rootKind: ThreadRow['root_kind'], rootId: number, by: string): () => void {
    const { db } = this.core;
    const threads = openAsksUnder(db, rootKind, rootId);
    const cancelled = threads.flatMap((thread) => withdrawInTransaction(db, thread, by));
    return () => this.afterWithdrawals(threads, cancelled);
  }

  private afterWithdrawals(threads: ThreadRow[], cancelled: ApprovalRow[]): void {
    // Their rows changed (and texts failed): read them again when next needed.
    this.core.threads.clear();
    // What was on the wire failed: nothing of it waits for an ack any more.
    for (const thread of threads) this.core.open.get(thread.connection_id)?.inFlight.delete(thread.id);
    for (const thread of threads) {
      this.sendWithdraw(thread.connection_id, getThread(this.core.db, thread.id));
      this.core.threadChanged(thread.id);
      this.core.connectionChanged(thread.connection_id);
    }
    for (const approval of cancelled) this.core.approvalChanged(approval);
  }

  private sendWithdraw(connectionId: number, thread: ThreadRow | undefined): void {
    const open = this.core.open.get(connectionId);
    if (!thread || thread.withdraw_untold !== 1 || thread.withdrawn_seq === null || !open) return;
    open.link.send({ type: 'withdraw', thread: thread.wire_id, seq: thread.withdrawn_seq });
  }

  /**
   * The peer withdrew an agent conversation it started: committed before `noted` goes
   * back. The run is stopped as a person's Stop would stop it, what waited for it up to
   * `seq` counts as handled, and the open asks it made under it are withdrawn in turn.
   */
  receiveWithdraw(open: OpenLink, frame: WithdrawFrame): void {
    const { db } = this.core;
    this.core.batch
      .run((after, tx) => {
        const noted = () => open.link.send({ type: 'noted', thread: frame.thread, seq: frame.seq, of: 'withdraw' });
        const thread = threadByWireId(db, open.connectionId, frame.thread);
        // Not one it started here, or withdrawn already up to there: nothing more to do.
        if (!thread || thread.started_by !== 'peer' || (thread.withdrawn_seq ?? 0) >= frame.seq) {
          after(noted);
          return null;
        }
        tx.writing();
        const name = getConnectionRow(db, open.connectionId)!.name;
        recordWithdrawal(db, thread.id, frame.seq, name, false);
        const waiting = waitingIncomingUpTo(db, thread.id, frame.seq);
        for (const text of waiting) if (text.state === 'received') setTextState(db, text.id, 'handled', 'withdrawn');
        const cancelled = endHeld(
          db,
          waiting.filter((text) => text.state === 'held'),
          [],
          'withdrawn',
        );
        const stopping = this.core.options.runs.stopInTransaction(
          [{ kind: 'thread', id: thread.id }],
          name,
          `Withdrawn by ${name}`,
        );
        const downstream = this.withdrawUnder('thread', thread.id, name);
        after(() => {
          noted();
          downstream();
          for (const approval of cancelled) this.core.approvalChanged(approval);
          this.core.threads.clear();
          this.core.threadChanged(thread.id);
        });
        return stopping;
      })
      .then((stopping) => stopping?.())
      .catch(() => {
        // Not noted: the peer sends it again on the next link.
      });
  }

  /** The peer noted our withdrawal or our decline: it goes no more. */
  receiveNoted(open: OpenLink, frame: NotedFrame, tx: Tx): void {
    const { db } = this.core;
    const thread = threadByWireId(db, open.connectionId, frame.thread);
    if (!thread) return;
    tx.writing();
    if (frame.of === 'withdraw') {
      if (withdrawalNoted(db, thread.id, frame.seq)) this.core.threadChangedAfter(thread, tx);
    } else declineNoted(db, thread.id, frame.seq);
  }

  /** Inside the decision's commit: a person here declined the peer's held text; its sender is told. */
  declined(thread: ThreadRow, textId: number, seq: number, after: After): void {
    const open = this.core.open.get(thread.connection_id);
    // A peer of revision 1 knows no `declined` (it would close the link): it is not told.
    if (open && open.link.revision < DECLINED_REVISION) return;
    markDeclineUntold(this.core.db, textId, true);
    after(() => this.sendDeclined(thread.connection_id, thread.wire_id, seq));
  }

  private sendDeclined(connectionId: number, wireId: string, seq: number): void {
    const open = this.core.open.get(connectionId);
    if (open && open.link.revision >= DECLINED_REVISION)
      open.link.send({ type: 'reject', thread: wireId, seq, reason: 'declined' });
  }

  /** Our pause changed: the peer hears of it now (and on every link, from `flush`). */
  statusChanged(connectionId: number): void {
    const open = this.core.open.get(connectionId);
    if (open) this.sendStatus(open);
  }

  private sendStatus(open: OpenLink): void {
    const connection = getConnectionRow(this.core.db, open.connectionId);
    if (!connection || connection.status === 'revoked') return;
    open.link.send({ type: 'status', paused: connection.status === 'paused' });
  }

  /** The peer paused or unpaused: kept, and shown; our roles' sends are refused meanwhile. */
  receiveStatus(open: OpenLink, paused: boolean, tx: Tx): void {
    const connection = getConnectionRow(this.core.db, open.connectionId);
    if (!connection || (connection.peer_paused_at !== null) === paused) return;
    tx.writing();
    setPeerPaused(this.core.db, open.connectionId, paused);
    this.core.connectionChangedAfter(open.connectionId, tx);
  }

  /** A link opened: our pause, then every withdrawal and decline the peer has not noted. */
  flush(open: OpenLink): void {
    const { db } = this.core;
    if (open.link.revision < frameRevision.status) {
      // A peer that no longer speaks revision 2 cannot tell us it unpaused: what it said before is dropped.
      if (getConnectionRow(db, open.connectionId)?.peer_paused_at != null) {
        void this.core.batch
          .run((_after, tx) => this.receiveStatus(open, false, tx))
          .catch(() => {
            // Kept; the next link tries again.
          });
      }
      return;
    }
    this.sendStatus(open);
    for (const row of untoldWithdrawals(db, open.connectionId))
      open.link.send({ type: 'withdraw', thread: row.wire_id, seq: row.withdrawn_seq });
    for (const row of untoldDeclines(db, open.connectionId))
      open.link.send({ type: 'reject', thread: row.wire_id, seq: row.seq, reason: 'declined' });
  }
}

/**
 * Inside a transaction: records our withdrawal of a thread's asks up to its newest
 * text, and fails what of them the peer has not confirmed: held, queued, and on the wire
 * (were one sent again after the `withdraw` on a new link, the peer would work on it).
 * Held ones' approvals are cancelled.
 */
function withdrawInTransaction(db: Db, thread: ThreadRow, by: string): ApprovalRow[] {
  const seq = lastOutSeq(db, thread.id);
  recordWithdrawal(db, thread.id, seq, by, true);
  const unsent = db
    .prepare(
      "SELECT id, state FROM texts WHERE thread_id = ? AND direction = 'out' AND state IN ('held', 'queued', 'sent')",
    )
    .all(thread.id) as Array<{ id: number; state: string }>;
  for (const text of unsent) failText(db, text.id, 'withdrawn', 'us');
  return endHeld(
    db,
    [],
    unsent.filter((text) => text.state === 'held').map((text) => text.id),
    'withdrawn',
  );
}
