// Held texts (DESIGN §11.9): on a connection that asks first, an agent's send is
// committed as `held` and a peer's text is acked as usual but committed as `held`; each
// waits for a person's word in an approval. Approved, an outgoing text goes on the wire
// like any other, and an incoming one becomes the agent's work; denied, an outgoing text
// fails (its sending run is told) and an incoming one counts as handled without ever
// reaching the agent. A held text whose agent conversation or connection ends fails (or
// is dropped) like any unsent text, and its approval is cancelled with the same reason.
import type { ApprovalKind } from '../../shared/domain';
import {
  cancelTextApprovals,
  getApproval,
  insertApproval,
  settleApproval,
  type ApprovalRow,
} from '../store/queries/approvals';
import { ALWAYS_ALLOWED } from '../access/allow-rules';
import type { AllowRuleRow } from '../store/queries/allow-rules';
import { getConnectionRow } from '../store/queries/connections';
import { adoptWaitingTexts, findRun, getRun } from '../store/queries/runs';
import { failText, getText, setTextState, type TextRow, type ThreadRow } from '../store/queries/threads';
import type { Db } from '../store/database';
import type { EngineCore, OpenLink } from './engine-core';
import { EngineError } from './errors';
import type { Tx } from './group-commit';
import type { ThreadState } from './sender-key';

type After = (action: () => void) => void;

export interface HeldDecision {
  /** False when it no longer waited: decided by someone else, or cancelled meanwhile. */
  decided: boolean;
  approval: ApprovalRow;
}

export class Holds {
  constructor(
    private readonly core: EngineCore,
    /** The sender's: puts the thread's next undelivered text on the wire after the commit. */
    private readonly claimNext: (open: OpenLink, state: ThreadState, after: After, tx: Tx) => void,
    /** A peer's held text was declined here: its sender is to be told. */
    private readonly declined: (thread: ThreadRow, textId: number, seq: number, after: After) => void = () => {},
  ) {}

  /** Inside a group commit: the approval a text just committed as held waits on. */
  hold(
    kind: Exclude<ApprovalKind, 'permission'>,
    thread: ThreadRow,
    textId: number,
    runId: number | null,
    tx: Tx,
  ): void {
    const context = { kind: 'thread' as const, id: thread.id };
    const id = insertApproval(this.core.db, { kind, context, textId, runId });
    this.core.approvalChangedAfter({ id, kind, context_kind: context.kind, context_id: context.id }, tx);
  }

  /**
   * Inside a group commit: a text that would have waited went on because a person chose
   * to always allow its peer role. It is recorded as approved by them, as if they had
   * approved it here, so the record says who let it through.
   */
  allowedByRule(
    kind: Exclude<ApprovalKind, 'permission'>,
    thread: ThreadRow,
    textId: number,
    runId: number | null,
    rule: AllowRuleRow,
    tx: Tx,
  ): void {
    const context = { kind: 'thread' as const, id: thread.id };
    const id = insertApproval(this.core.db, { kind, context, textId, runId });
    settleApproval(this.core.db, id, 'approved', { id: rule.created_by, name: rule.created_by_name }, ALWAYS_ALLOWED);
    this.core.approvalChangedAfter({ id, kind, context_kind: context.kind, context_id: context.id }, tx);
  }

  /** A person's word on a held text, committed with what follows from it. */
  decide(approvalId: number, approve: boolean, by: { id: number; name: string }): Promise<HeldDecision> {
    const { db, threads } = this.core;
    return this.core.batch.run((after, tx) => {
      const approval = getApproval(db, approvalId);
      if (!approval || approval.text_id === null) throw new Error(`approval ${approvalId} is not a held text`);
      if (approval.state !== 'pending') return { decided: false, approval };
      const text = getText(db, approval.text_id)!;
      const state = threads.byRowId(text.thread_id)!;
      const thread = state.row;
      const connection = getConnectionRow(db, thread.connection_id)!;
      const peer = `${connection.name}/${thread.peer_role}`;
      // Paused means nothing moves: letting a peer's text in would start it at the first
      // wake after unpausing, whatever that wake was for.
      if (approval.kind === 'incoming' && approve && connection.status === 'paused')
        throw new EngineError(
          'paused',
          `the connection to ${connection.name} is paused: unpause it first, then approve`,
        );
      tx.writing();
      settleApproval(db, approval.id, approve ? 'approved' : 'denied', by);
      if (approval.kind === 'outgoing') {
        if (approve) setTextState(db, text.id, 'queued');
        else {
          failText(db, text.id, 'denied', 'us');
          if (state.undelivered !== undefined) state.undelivered--;
        }
        // Approved, it may go now; denied, the text after it may.
        const open = this.core.open.get(connection.id);
        if (open) this.claimNext(open, state, after, tx);
        this.tellSender(
          approval.run_id,
          approve
            ? `Your text #${text.seq} to ${peer} was approved by ${by.name}; it goes out as usual.`
            : `Your text #${text.seq} to ${peer} was denied by ${by.name}: it was not sent. Do not send it again unless ${by.name} asks you to.`,
          !approve,
        );
        this.core.connectionChangedAfter(connection.id, tx);
      } else {
        if (approve) setTextState(db, text.id, 'received');
        else {
          setTextState(db, text.id, 'handled', 'denied');
          this.declined(thread, text.id, text.seq, after);
        }
        // Either may let later texts through that waited behind this one. While paused (a
        // denial) they go to the next turn without starting one: the next text or a
        // person's approval after unpausing starts it, not an unrelated wake.
        const run = findRun(db, { kind: 'thread', id: thread.id });
        if (connection.status === 'paused') {
          if (run) adoptWaitingTexts(db, run, false);
        } else after(() => this.core.options.runs.wake());
      }
      this.core.threadChangedAfter(thread, tx);
      this.core.approvalChangedAfter(approval, tx);
      return { decided: true, approval: getApproval(db, approval.id)! };
    });
  }

  /**
   * The sending run hears how a person decided, as a notice: a denial starts a turn (like
   * a rejection: the agent must learn its text did not go) unless the run was stopped; an
   * approval waits for the next turn.
   */
  private tellSender(runId: number | null, text: string, wakes: boolean): void {
    const run = runId === null ? undefined : getRun(this.core.db, runId);
    if (!run) return;
    this.core.options.runs.addInput(
      { kind: run.context_kind, id: run.context_id },
      run.role_id,
      'notice',
      text,
      'parley',
      wakes,
    );
  }
}

/** The ids of the held ones among `texts`. */
export const heldIds = (texts: readonly TextRow[]): number[] =>
  texts.filter((text) => text.state === 'held').map((text) => text.id);

/**
 * Inside a transaction: incoming texts held for a person whose agent conversation or
 * connection ended; they count as handled (with `reason`) and never reach the agent.
 * Returns every approval cancelled, theirs and those of `failedOutgoing` (held outgoing
 * texts the caller failed with `reason`), for their change events after the commit.
 */
export function endHeld(
  db: Db,
  heldIncoming: readonly TextRow[],
  failedOutgoing: readonly number[],
  reason: string,
): ApprovalRow[] {
  for (const text of heldIncoming) setTextState(db, text.id, 'handled', reason);
  return cancelTextApprovals(db, [...heldIds(heldIncoming), ...failedOutgoing], reason);
}
