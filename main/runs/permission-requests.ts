// An agent's request to use a tool (ACP `session/request_permission`) waits for a person
// in the same place as held texts (DESIGN §11.9): an approval of kind `permission` in the
// context of the run that asks. The turn asking waits for the answer; a person approves or
// denies it, or it is cancelled — the turn was stopped or ended, it waited too long, or
// Parley restarted (no agent waits for a request made before).
import type { EventHub } from '../events';
import { ruleAllowing, threadPlace, toolOf } from '../access/allow-rule-lookup';
import { ALWAYS_ALLOWED } from '../access/allow-rules';
import { approvalAudience } from '../access/lookup';
import { transaction, type Db } from '../store/database';
import {
  cancelAllPermissionRequests,
  cancelTurnApprovals,
  getApproval,
  insertApproval,
  pendingPermissionCounts,
  settleApproval,
  type ApprovalRow,
} from '../store/queries/approvals';
import type { RunRow } from '../store/queries/runs';
import type { PermissionOutcome } from '../role-api/protocol';

export type { PermissionOutcome } from '../role-api/protocol';

export interface PermissionRequest {
  /** The tool as the agent named it. */
  title: string;
  /** What it asked, as people are shown it (JSON). */
  detail?: unknown;
}

const waitWords = (ms: number) => (ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.ceil(ms / 1000)} s`);

/**
 * How many requests may wait for a person at once, in one turn and in one run. An agent
 * that asks faster than people answer gets no more rows in everyone's list: its next
 * request is denied at once, by Parley, in words it can act on.
 */
export const PERMISSION_BOUND = { turn: 8, run: 16 } as const;

/** Whether one more request may wait, given how many already do: null, or why not (for the agent). */
export function permissionBoundReason(
  pending: { turn: number; run: number },
  bound: { turn: number; run: number } = PERMISSION_BOUND,
): string | null {
  const over = pending.turn >= bound.turn ? 'turn' : pending.run >= bound.run ? 'run' : null;
  if (over === null) return null;
  const count = over === 'turn' ? pending.turn : pending.run;
  return (
    `nobody was asked: ${count} of your permission requests already wait for a person in this ${over}, ` +
    `the most that may wait at once. Wait for those answers before you ask for more, or do without this tool.`
  );
}

/** How long a request waits for a person before it is cancelled. */
export const PERMISSION_TIMEOUT_MS = 10 * 60_000;

export class PermissionRequests {
  private readonly waiting = new Map<
    number,
    { resolve: (outcome: PermissionOutcome) => void; timer: NodeJS.Timeout }
  >();

  constructor(
    private readonly db: Db,
    private readonly events: EventHub,
    private readonly timeoutMs = PERMISSION_TIMEOUT_MS,
  ) {}

  /** Made at start: requests left pending by an earlier run of Parley wait for nobody now. */
  recover(): void {
    const cancelled = transaction(this.db, () => cancelAllPermissionRequests(this.db, 'Parley restarted'));
    for (const row of cancelled) this.changed(row);
  }

  /** The running turn `turnId` of `run` asks; resolves with a person's word, or cancelled. */
  ask(run: RunRow, turnId: number, request: PermissionRequest): Promise<PermissionOutcome> {
    const id = transaction(this.db, () => {
      // A person may have chosen to always allow this tool for the peer role the run works for.
      const place = threadPlace(this.db, { kind: run.context_kind, id: run.context_id });
      const rule = place && ruleAllowing(this.db, 'permission', place, toolOf(request.title, request.detail));
      if (rule) {
        const allowedId = insertApproval(this.db, {
          kind: 'permission',
          context: { kind: run.context_kind, id: run.context_id },
          runId: run.id,
          turnId,
          title: request.title,
          detail: request.detail,
        });
        settleApproval(
          this.db,
          allowedId,
          'approved',
          { id: rule.created_by, name: rule.created_by_name },
          ALWAYS_ALLOWED,
        );
        return { allowedId, by: rule.created_by_name };
      }
      const refused = permissionBoundReason(pendingPermissionCounts(this.db, turnId, run.id));
      if (refused !== null) return refused;
      return insertApproval(this.db, {
        kind: 'permission',
        context: { kind: run.context_kind, id: run.context_id },
        runId: run.id,
        turnId,
        title: request.title,
        detail: request.detail,
      });
    });
    // Denied rather than cancelled: the agent's turn goes on without the tool.
    if (typeof id === 'string') return Promise.resolve({ outcome: 'denied', by: 'Parley', reason: id });
    if (typeof id === 'object') {
      this.changed(getApproval(this.db, id.allowedId)!);
      return Promise.resolve({ outcome: 'approved', by: id.by });
    }
    const outcome = new Promise<PermissionOutcome>((resolve) => {
      const timer = setTimeout(
        () => this.cancel(id, `nobody answered within ${waitWords(this.timeoutMs)}`),
        this.timeoutMs,
      );
      timer.unref();
      this.waiting.set(id, { resolve, timer });
    });
    this.changed(getApproval(this.db, id)!);
    return outcome;
  }

  /** A person's word (the caller has checked that it is theirs to give). */
  decide(
    approvalId: number,
    approve: boolean,
    by: { id: number; name: string },
  ): { decided: boolean; approval: ApprovalRow } {
    const decided = transaction(this.db, () =>
      settleApproval(this.db, approvalId, approve ? 'approved' : 'denied', by),
    );
    const approval = getApproval(this.db, approvalId)!;
    if (decided) {
      this.settle(approvalId, { outcome: approve ? 'approved' : 'denied', by: by.name });
      this.changed(approval);
    }
    return { decided, approval };
  }

  /**
   * Inside the caller's transaction: the turn's requests are cancelled (it was stopped, or
   * it ended). Returns what to call after the commit: it answers the waiting agent.
   */
  endTurnInTransaction(turnId: number, reason: string): () => void {
    const cancelled = cancelTurnApprovals(this.db, turnId, reason);
    return () => {
      for (const row of cancelled) {
        this.settle(row.id, { outcome: 'cancelled', reason });
        this.changed(row);
      }
    };
  }

  /** Shutting down: every waiting agent hears that its request is cancelled (the rows stay, for recover). */
  close(): void {
    for (const id of [...this.waiting.keys()])
      this.settle(id, { outcome: 'cancelled', reason: 'Parley is shutting down' });
  }

  private cancel(approvalId: number, reason: string): void {
    const cancelled = transaction(this.db, () => settleApproval(this.db, approvalId, 'cancelled', null, reason));
    this.settle(approvalId, { outcome: 'cancelled', reason });
    if (cancelled) this.changed(getApproval(this.db, approvalId)!);
  }

  private settle(approvalId: number, outcome: PermissionOutcome): void {
    const waiter = this.waiting.get(approvalId);
    if (!waiter) return;
    this.waiting.delete(approvalId);
    clearTimeout(waiter.timer);
    waiter.resolve(outcome);
  }

  private changed(row: ApprovalRow): void {
    this.events.emit({ type: 'changed', kind: 'approval', id: row.id }, approvalAudience(this.db, row));
  }
}
