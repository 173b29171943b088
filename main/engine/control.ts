// What owners (and deletes) do to connections and roots: pause and unpause (local,
// reversible), revoke (permanent, both sides), delete a root, choose what a peer may
// address, set the queue limit. Each writes its whole decision in one transaction,
// then signals the agents it stopped and tells the UI.
import type { ConnectionPolicy, ContextRef, TrustLevel } from '../../shared/domain';
import { cancelContextApprovals, dropUntakenIncoming, type ApprovalRow } from '../store/queries/approvals';
import { transaction, type Db } from '../store/database';
import {
  exposedRoles,
  setConnectionRevoked,
  setConnectionStatus,
  setExposedRoles,
  setPolicy,
  setTrust,
  setQueueLimit,
  type ConnectionRow,
} from '../store/queries/connections';
import { getConversationRow } from '../store/queries/conversations';
import { getPerson } from '../store/queries/people';
import { getTaskRow } from '../store/queries/tasks';
import {
  closeThread,
  failText,
  getThread,
  heldIncoming,
  heldIncomingOfThread,
  keepDeletedRootTitle,
  markRootGone,
  threadsByRoot,
  threadsOfConnection,
  unsentTextsOfThread,
  waitingOutgoing,
  type ThreadRow,
} from '../store/queries/threads';
import { roleRefById, roleRefByName } from '../store/queries/roles';
import { relayAskEnded } from './relay-end';
import type { EngineCore, OpenLink } from './engine-core';
import { EngineError } from './errors';
import { endHeld, heldIds } from './holds';
import type { LinkManager } from './links';
import { roleIds } from './pairing';
import { CloseCode } from './wire';
import type { Withdrawals } from './withdrawals';

export class Control {
  constructor(
    private readonly core: EngineCore,
    private readonly links: LinkManager,
    /** The connection is revoked: drop whatever waited to be told to its peer. */
    private readonly revoked: (connectionId: number) => void,
    /** Tells the peer of our pause, and withdraws the asks of deleted roots. */
    private readonly told: Withdrawals,
  ) {}

  /**
   * Pauses the connection here (DESIGN §11.5, paused means nothing moves): in one
   * transaction the status, every text waiting to be sent or on the wire failed with
   * `paused` (never sent again; a late ack still marks it delivered), and the stop of
   * every agent of its agent conversations; then the agents are signalled.
   */
  async pause(connectionId: number, by: string): Promise<void> {
    const { db } = this.core;
    const connection = this.core.requireConnection(connectionId);
    if (connection.status === 'revoked') throw revokedError(connection);
    if (connection.status === 'paused') return;
    const threads = threadsOfConnection(db, connectionId);
    let cancelled: ApprovalRow[] = [];
    const signal = transaction(db, () => {
      setConnectionStatus(db, connectionId, 'paused', by);
      const waiting = waitingOutgoing(db, connectionId);
      // A held text waits to be sent too: it fails like the rest (a held incoming one stays for a person).
      cancelled = endHeld(db, [], heldIds(waiting), 'paused');
      for (const text of waiting) {
        failText(db, text.id, 'paused', 'us');
        this.core.notify(
          getThread(db, text.thread_id)!,
          text.state === 'queued' || text.state === 'held'
            ? `Your text #${text.seq} was not sent: ${by} paused the connection to ${connection.name}.`
            : `Your text #${text.seq} may not have reached ${connection.name}: ${by} paused the connection while it was on its way, and it will not be sent again.`,
          false,
        );
      }
      // Asks made for a peer's agent conversation can get no answer now: their relaying runs answer instead.
      for (const thread of threads)
        relayAskEnded(
          this.core,
          thread,
          `${by} paused the connection to ${connection.name}, so no answer can come`,
          true,
        );
      return this.core.options.runs.stopInTransaction(threadContexts(threads), `${by} (paused the connection)`);
    });
    // What was on the wire failed: nothing of it waits for an ack any more.
    this.core.open.get(connectionId)?.inFlight.clear();
    this.core.threads.clear();
    this.core.connectionChanged(connectionId);
    this.told.statusChanged(connectionId);
    for (const approval of cancelled) this.core.approvalChanged(approval);
    await signal();
    for (const thread of threads) this.core.threadChanged(thread.id);
  }

  /** Unpause restarts nothing: what was stopped stays stopped until new work comes. */
  unpause(connectionId: number): void {
    const connection = this.core.requireConnection(connectionId);
    if (connection.status === 'revoked') throw revokedError(connection);
    if (connection.status !== 'paused') return;
    transaction(this.core.db, () => setConnectionStatus(this.core.db, connectionId, 'active'));
    this.core.connectionChanged(connectionId);
    this.told.statusChanged(connectionId);
  }

  /**
   * Revokes for good: a `revoke` frame when the peer is there, then the same ending as
   * when the peer revokes. Committed before the peer hears of it: a write the disk
   * refuses leaves both sides as they were.
   */
  async revoke(connectionId: number, by: string): Promise<void> {
    const connection = this.core.requireConnection(connectionId);
    if (connection.status === 'revoked') return;
    const ended = this.commitRevocation(connectionId, 'us', `revoked by ${by}`, by);
    const open = this.links.detach(connectionId);
    open?.link.send({ type: 'revoke' });
    open?.link.close(CloseCode.revoked, 'this connection was revoked');
    await this.afterRevocation(connectionId, ended);
  }

  async revokedByPeer(open: OpenLink): Promise<void> {
    const connection = this.core.requireConnection(open.connectionId);
    if (connection.status !== 'revoked') {
      const ended = this.commitRevocation(open.connectionId, 'peer', `revoked by ${connection.name}`, connection.name);
      this.links.detach(open.connectionId);
      open.link.close(CloseCode.revoked, 'revoked');
      await this.afterRevocation(open.connectionId, ended);
      return;
    }
    open.link.close(CloseCode.revoked, 'revoked');
  }

  /**
   * Revoked, by either side, in one transaction: every unacked text fails, every agent
   * conversation closes, the stop of its agents is committed. Nothing changes in memory
   * when the write fails.
   */
  private commitRevocation(connectionId: number, by: 'us' | 'peer', reason: string, who: string): Revocation {
    const { db } = this.core;
    const threads = threadsOfConnection(db, connectionId);
    this.revoked(connectionId);
    let cancelled: ApprovalRow[] = [];
    const signal = transaction(db, () => {
      setConnectionRevoked(db, connectionId, by, who);
      for (const thread of threads) closeThread(db, thread.id, reason);
      const waiting = waitingOutgoing(db, connectionId);
      for (const text of waiting) failText(db, text.id, 'revoke', by);
      cancelled = endHeld(db, heldIncoming(db, connectionId), heldIds(waiting), 'revoke');
      // Before the stop, which would keep them for a next turn that never comes.
      cancelled.push(
        ...dropUntakenIncoming(db, connectionId, 'revoke', `${who} revoked the connection before the agent took it`),
      );
      return this.core.options.runs.stopInTransaction(threadContexts(threads), reason);
    });
    return { threads, signal, cancelled };
  }

  /** After the revocation's commit: the agents are signalled and the UI told. */
  private async afterRevocation(connectionId: number, { threads, signal, cancelled }: Revocation): Promise<void> {
    this.core.threads.clear();
    this.core.connectionChanged(connectionId);
    for (const approval of cancelled) this.core.approvalChanged(approval);
    await signal();
    for (const thread of threads) this.core.threadChanged(thread.id);
  }

  /**
   * Deletes roots (conversations, tasks) in one step (DESIGN §11.6): one transaction
   * closes their agent conversations, fails their unsent texts, commits the stop of
   * every agent working for them or for the roots, and runs `remove` (the delete
   * itself). A crash leaves the before or the after. `committed` runs right after the
   * commit, before any event; the agents are signalled then, and this resolves once
   * they are gone.
   */
  async deleteRoots(roots: ContextRef[], by: string, remove: () => void, committed?: () => void): Promise<void> {
    const { db } = this.core;
    let threads: ThreadRow[] = [];
    const cancelled: ApprovalRow[] = [];
    const withdrawn: Array<() => void> = [];
    const signal = transaction(db, () => {
      threads = roots.flatMap((root) => (root.kind === 'thread' ? [] : threadsByRoot(db, root.kind, root.id)));
      for (const root of roots) {
        if (root.kind === 'thread') continue;
        // What it was called stays with the agent conversations it leaves (read before `remove`).
        const title = rootTitle(db, root.kind, root.id);
        if (markRootGone(db, root.kind, root.id) > 0 && title !== null)
          keepDeletedRootTitle(db, root.kind, root.id, title);
      }
      for (const thread of threads) {
        closeThread(db, thread.id, 'root deleted');
        const unsent = unsentTextsOfThread(db, thread.id);
        for (const text of unsent) failText(db, text.id, 'closed', 'us');
        cancelled.push(...endHeld(db, heldIncomingOfThread(db, thread.id), heldIds(unsent), 'closed'));
      }
      // Their asks still open are withdrawn: the peers stop working on them, down the chain.
      for (const root of roots)
        if (root.kind !== 'thread') withdrawn.push(this.told.withdrawUnder(root.kind, root.id, by));
      // What the deleted roots' own agents asked for (tools) waits no more.
      for (const root of roots)
        cancelled.push(...cancelContextApprovals(db, root, 'its conversation or task was deleted'));
      const stopping = this.core.options.runs.stopInTransaction([...threadContexts(threads), ...roots], by);
      remove();
      return stopping;
    });
    committed?.();
    for (const send of withdrawn) send();
    this.core.threads.clear();
    for (const thread of threads) this.core.threadChanged(thread.id);
    for (const approval of cancelled) this.core.approvalChanged(approval);
    await signal();
    await this.core.options.runs.reapOrphans();
  }

  expose(connectionId: number, roles: string[]): void {
    const { db } = this.core;
    this.core.requireConnection(connectionId);
    for (const role of roles)
      if (!roleRefByName(db, role)) throw new EngineError('not_found', `no role named "${role}"`);
    transaction(db, () => setExposedRoles(db, connectionId, roleIds(db, roles)));
    const open = this.core.open.get(connectionId);
    if (open) this.sendRoles(open);
    this.core.connectionChanged(connectionId);
  }

  /** The roles this side lets the peer address: sent when a link opens and when they change. */
  sendRoles(open: OpenLink): void {
    open.link.send({
      type: 'roles',
      roles: exposedRoles(this.core.db, open.connectionId).map((r) => ({ name: r.name, description: r.description })),
    });
  }

  /** What waits for a person on this connection from now on; texts already held stay held until decided. */
  setPolicy(connectionId: number, policy: Partial<ConnectionPolicy>): void {
    const connection = this.core.requireConnection(connectionId);
    if (connection.status === 'revoked') throw revokedError(connection);
    transaction(this.core.db, () => setPolicy(this.core.db, connectionId, policy));
    this.core.connectionChanged(connectionId);
  }

  /** How far runs working for this peer may reach; a run takes the new level at its next turn. */
  setTrust(connectionId: number, level: TrustLevel): void {
    const connection = this.core.requireConnection(connectionId);
    if (connection.status === 'revoked') throw revokedError(connection);
    transaction(this.core.db, () => setTrust(this.core.db, connectionId, level));
    this.core.connectionChanged(connectionId);
  }

  setQueueLimit(connectionId: number, limit: number): void {
    this.core.requireConnection(connectionId);
    transaction(this.core.db, () => setQueueLimit(this.core.db, connectionId, limit));
    this.core.connectionChanged(connectionId);
  }
}

/** A conversation's or a task's title, as its orphaned agent conversations show it. */
function rootTitle(db: Db, kind: 'conversation' | 'task', id: number): string | null {
  if (kind === 'task') return getTaskRow(db, id)?.title ?? null;
  const conversation = getConversationRow(db, id);
  if (!conversation) return null;
  const person = getPerson(db, conversation.person_id)?.name ?? 'someone';
  const role = roleRefById(db, conversation.role_id)?.name ?? 'a role';
  return `${person}’s conversation with ${role}`;
}

/** What a revocation committed: the agent conversations it closed, their agents' stop, the approvals it cancelled. */
interface Revocation {
  threads: ThreadRow[];
  signal: () => Promise<boolean>;
  cancelled: ApprovalRow[];
}

const threadContexts = (threads: ThreadRow[]): ContextRef[] =>
  threads.map((thread) => ({ kind: 'thread' as const, id: thread.id }));

function revokedError(connection: ConnectionRow): EngineError {
  return new EngineError('revoked', `the connection to ${connection.name} was revoked`);
}
