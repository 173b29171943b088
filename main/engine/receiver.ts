// The receiving side: frames from an open link. A text is decided on by decideText
// (./receive-decision.ts) and, when accepted, committed before its ack; it waits,
// received, as the work of its agent conversation's run. Acks read together are
// recorded together; a rejection fails the text and tells the sending role. A peer's
// word on the turn that took our texts (`turn`) is kept on the thread we started.
import { log } from '../log';
import { isRoleName } from '../../shared/role-name';
import { cleanDescription } from '../one-line';
import { ruleAllowing } from '../access/allow-rule-lookup';
import { exposedRoleNames, getConnectionRow, setPeerRoles } from '../store/queries/connections';
import { roleRefByName } from '../store/queries/roles';
import { ensureRun } from '../store/queries/runs';
import {
  ackTexts,
  closeThread,
  failText,
  insertText,
  insertThread,
  heldIncomingOfThread,
  markAckedAfterPause,
  markDeliveredUpTo,
  outText,
  setPeerTurn,
  threadByWireId,
  unsentTextsOfThread,
} from '../store/queries/threads';
import type { ApprovalRow } from '../store/queries/approvals';
import { run as runSql } from '../store/sql';
import { transaction } from '../store/database';
import { isStorageFailure } from '../store/storage-errors';
import { frameFailed, type EngineCore, type InFlight, type OpenLink } from './engine-core';
import { CHECKED_FIRST, type Tx } from './group-commit';
import { endHeld, heldIds, type Holds } from './holds';
import { decideText } from './receive-decision';
import { takeOffWire, type Sender } from './sender';
import type { ThreadState } from './sender-key';
import { cleanPeerName } from './announced';
import { relayAskEnded } from './relay-end';
import {
  frameRevision,
  MAX_RELAYED_ON,
  type AckFrame,
  type Frame,
  type RejectReason,
  type TextFrame,
  type TurnAckFrame,
  type TurnFrame,
} from './wire';
import type { Withdrawals } from './withdrawals';

type After = (action: () => void) => void;

const rejectNotices: Record<RejectReason, (peer: string) => string> = {
  thread: (peer) =>
    `${peer} has closed this agent conversation (its topic was deleted there), so the text was not delivered. Your next send from the same topic starts a new agent conversation.`,
  roles: (peer) => `${peer} refused the text: the roles do not match this agent conversation.`,
  role: (peer) => `${peer} does not let you address that role (it is not exposed to you, or it was removed).`,
  paused: (peer) => `${peer} has paused the connection; the text was not delivered.`,
  queue: (peer) => `${peer} has too much waiting; the text was not delivered. Try again later.`,
  revoke: (peer) => `${peer} revoked the connection; the text was not delivered.`,
  declined: (peer) =>
    `a person at ${peer} declined it: it reached ${peer} but its agent never saw it. Do not send it again unless someone asks you to.`,
};

/** How a peer's turn ended without an answer, as the relaying agent is told. */
const endedWords = {
  stopped: (peer: string) => `someone at ${peer} stopped the agent working on it`,
  failed: (peer: string) => `${peer}'s agent failed on it`,
  ended: (peer: string) => `${peer}'s agent finished without answering`,
} as const;

export class Receiver {
  /** Once per commit that received texts for an agent: the run manager looks for turns to start. */
  private readonly wakeRuns = (): void => this.core.options.runs.wake();

  constructor(
    private readonly core: EngineCore,
    private readonly sender: Sender,
    private readonly holds: Holds,
    /** The peer revoked the connection (a `revoke` frame). */
    private readonly revokedByPeer: (open: OpenLink) => Promise<void>,
    /** The peer recorded a turn state we sent (a `turn-ack` frame). */
    private readonly turnAcked: (open: OpenLink, frame: TurnAckFrame) => void,
    private readonly withdrawals: Withdrawals,
  ) {}

  onFrame(open: OpenLink, frame: Frame): void {
    try {
      this.take(open, frame);
    } catch (error) {
      frameFailed(open.link, error);
    }
  }

  private take(open: OpenLink, frame: Frame): void {
    const { db, batch } = this.core;
    const connectionId = open.connectionId;
    const failed = (error: unknown) => frameFailed(open.link, error);
    // Acks queued so far are recorded before this frame; a later ack starts a new piece.
    if (frame.type !== 'ack') open.acks = null;
    switch (frame.type) {
      case 'roles':
        try {
          // A description is the peer's word: kept as one clean line, never as it came.
          const roles = frame.roles.map((role) => ({
            name: role.name,
            description: cleanDescription(role.description),
          }));
          transaction(db, () => setPeerRoles(db, connectionId, roles));
        } catch (error) {
          // The roles it knew stay; the peer sends them again on every link.
          if (!isStorageFailure(error)) throw error;
          log.warn('could not record the peer roles', { error: String(error) });
          return;
        }
        this.core.connectionChanged(connectionId);
        return;
      case 'revoke':
        this.revokedByPeer(open).catch(failed);
        return;
      case 'text':
        // A link a newer one replaced (the duplicate rule) may still deliver a text its
        // sender has taken back since (withdrawn, or failed by a pause) and told us so on
        // the newer link. Left unacknowledged: one the sender still means goes again on
        // the link that stays, as every unacknowledged text does.
        if (this.core.open.get(connectionId) !== open) return;
        batch.run((after, tx) => this.receiveText(open, frame, after, tx), CHECKED_FIRST).catch(failed);
        return;
      case 'ack':
        this.queueAck(open, frame);
        return;
      case 'reject':
        batch
          .run((after, tx) => this.receiveReject(open, frame.thread, frame.seq, frame.reason, after, tx))
          .catch(failed);
        return;
      case 'turn':
        // A link a newer one replaced (the duplicate rule) still delivers what was on it,
        // which may be older than what the newer link brought already: a peer that
        // acknowledges sends its latest state again on the link that stays, so only that
        // link's word counts. Unacknowledged here, nothing is lost.
        if (open.link.revision >= frameRevision['turn-ack'] && this.core.open.get(connectionId) !== open) return;
        // What a peer's agent does is shown, not relied on: no fsync of its own. Once it is
        // recorded (or ignored) a peer of revision 2 hears so and stops sending it; one that
        // cannot be recorded is not acknowledged, so that peer sends it on the next link.
        batch
          .run(
            (after, tx) => {
              this.receiveTurn(open, frame, tx);
              if (open.link.revision >= frameRevision['turn-ack'])
                after(() =>
                  open.link.send({ type: 'turn-ack', thread: frame.thread, seq: frame.seq, state: frame.state }),
                );
            },
            { durable: false, savepoint: false },
          )
          .catch((error: unknown) => {
            if ((error as Error).message !== 'shutting down')
              log.warn('could not record what the peer said of its turn', { error: String(error) });
          });
        return;
      case 'turn-ack':
        try {
          this.turnAcked(open, frame);
        } catch (error) {
          // Not dropped: the state goes once more on the next link, and the peer acknowledges it again.
          if (!isStorageFailure(error)) throw error;
          log.warn('could not record the peer’s acknowledgement of a turn state', { error: String(error) });
        }
        return;
      case 'withdraw':
        this.withdrawals.receiveWithdraw(open, frame);
        return;
      case 'noted':
        batch.run((_after, tx) => this.withdrawals.receiveNoted(open, frame, tx)).catch(failed);
        return;
      case 'status':
        batch.run((_after, tx) => this.withdrawals.receiveStatus(open, frame.paused, tx)).catch(failed);
        return;
      case 'hello':
        return;
      // The link manager takes it (links.ts): where the peer is reached.
      case 'reach':
        return;
    }
  }

  /**
   * The peer's word on the turn that took our texts of a thread: kept only for a thread
   * we started, for texts we sent, and never older than what it said before.
   */
  private receiveTurn(open: OpenLink, frame: TurnFrame, tx: Tx): void {
    const { db, threads } = this.core;
    const state = threads.byWireId(open.connectionId, frame.thread);
    if (!state || state.row.started_by !== 'local') return;
    if (frame.seq > threads.lastSeq(state, 'out') || frame.seq < (state.row.peer_turn_seq ?? 0)) return;
    tx.writing();
    const before = state.row;
    const relayedOn = frame.state === 'relayed' ? JSON.stringify(relayedNames(frame.on ?? [])) : null;
    const peerTurn = frame.state === 'relayed' ? 'working' : frame.state;
    setPeerTurn(db, state.row.id, peerTurn, frame.seq, relayedOn);
    // Its agent took our texts up to seq: they arrived, whatever a pause here said of them.
    if (markDeliveredUpTo(db, state.row.id, frame.seq) > 0) {
      threads.forget(state);
      this.core.connectionChangedAfter(open.connectionId, tx);
    } else
      // The cached row is the engine's own: kept in step rather than read again.
      state.row = { ...state.row, peer_turn: peerTurn, peer_turn_seq: frame.seq, peer_relayed_on: relayedOn };
    this.core.threadChangedAfter(state.row, tx);
    // The turn that had our latest text is over and nothing came: a run relaying for a
    // peer hears it once (a state sent again is no news).
    const news = before.peer_turn !== frame.state || before.peer_turn_seq !== frame.seq;
    if (news && frame.seq >= threads.lastSeq(state, 'out') && frame.state in endedWords) {
      const connection = getConnectionRow(db, open.connectionId)!;
      relayAskEnded(this.core, before, endedWords[frame.state as keyof typeof endedWords](connection.name));
    }
  }

  private receiveText(open: OpenLink, frame: TextFrame, after: After, tx: Tx): void {
    const { db, batch, threads, counters } = this.core;
    const { connectionId, link } = open;
    const reply = (response: Frame) => after(() => link.send(response));
    // Looked up once per group commit, not per text.
    const connection = batch.memo('connection', connectionId, () => getConnectionRow(db, connectionId))!;
    const role = batch.memo('role', frame.to, () => roleRefByName(db, frame.to));
    let state = threads.byWireId(connectionId, frame.thread);
    if (state && role && role.createdAt > state.row.created_at) {
      // The role was made after the thread: the role the thread had may have been removed
      // (its id set to null in the row) and its id reused. Read the row again.
      threads.forget(state);
      state = threads.byWireId(connectionId, frame.thread)!;
    }
    const exposed = batch.memo('exposed', connectionId, () => exposedRoleNames(db, connectionId));
    const verdict = decideText({
      repeat: state !== undefined && frame.seq <= threads.lastSeq(state, 'in'),
      connection: connection.status,
      thread: state?.row ?? null,
      from: frame.from,
      to: frame.to,
      role: role ?? null,
      exposed: role !== undefined && exposed.includes(role.name),
      queueFull: counters.incomingFull(connectionId, connection.queue_limit),
    });
    // A repeat of a text already committed is acked again and not processed twice.
    if (verdict === 'repeat') return reply({ type: 'ack', thread: frame.thread, seq: frame.seq });
    if (verdict !== 'accept') return reply({ type: 'reject', thread: frame.thread, seq: frame.seq, reason: verdict });
    // Every check passed: from here on it writes (a failure now rolls the batch back).
    tx.writing();
    const accepted = role!;
    state ??= threads.load(
      insertThread(db, {
        connectionId,
        wireId: frame.thread,
        localRoleId: accepted.id,
        localRole: accepted.name,
        peerRole: frame.from,
        rootKind: 'thread',
        rootId: null,
        startedBy: 'peer',
      }),
    )!;
    const row = state.row;
    // On a connection that asks first, the text is stored and acked as usual but held
    // for a person: no turn takes it until someone who reads this thread lets it in.
    const rule = connection.incoming_policy === 'ask' ? ruleAllowing(db, 'incoming', row) : undefined;
    const held = connection.incoming_policy === 'ask' && rule === undefined;
    const textId = insertText(db, row.id, 'in', frame.seq, frame.body, held ? 'held' : 'received');
    counters.addedIncoming(connectionId);
    // The thread's run, made once per thread: the text waits in it as it is, received,
    // until a turn takes it. A thread's run goes only with its role, and a removed role
    // is refused above.
    state.runId ??= ensureRun(db, { kind: 'thread', id: row.id }, accepted.id).id;
    if (rule) this.holds.allowedByRule('incoming', row, textId, state.runId, rule, tx);
    if (held) this.holds.hold('incoming', row, textId, state.runId, tx);
    else tx.afterOnce('runs', 0, this.wakeRuns);
    state.inSeq = Math.max(threads.lastSeq(state, 'in'), frame.seq);
    reply({ type: 'ack', thread: frame.thread, seq: frame.seq });
    this.core.threadChangedAfter(row, tx);
  }

  /**
   * Acks read before the next group commit are recorded together: one piece and one
   * UPDATE by text id for all of them (one piece and one statement per ack cost the
   * sending side ~9 µs a text, together ~4).
   */
  private queueAck(open: OpenLink, frame: AckFrame): void {
    if (open.acks) {
      open.acks.push(frame);
      return;
    }
    const acks = [frame];
    open.acks = acks;
    this.core.batch
      // An ack's bookkeeping need not survive a power failure (the text would be sent
      // again and the repeat acked, not processed): no fsync of its own.
      .run(
        (after, tx) => {
          if (open.acks === acks) open.acks = null;
          this.receiveAcks(open, acks, after, tx);
        },
        { durable: false, savepoint: false },
      )
      .catch((error: unknown) => frameFailed(open.link, error));
  }

  private receiveAcks(open: OpenLink, acks: AckFrame[], after: After, tx: Tx): void {
    const { db, threads } = this.core;
    // The acks of texts on the wire, by text id; any other (a repeat, an ack after a
    // reconnect) takes the slower way, after these.
    const answered = new Map<number, ThreadState>();
    const others: AckFrame[] = [];
    /** What came off the wire, put back should the commit roll back: thread row id, then text, in turn. */
    const taken: Array<number | InFlight> = [];
    for (const ack of acks) {
      const state = threads.byWireId(open.connectionId, ack.thread);
      if (!state) continue;
      const threadRowId = state.row.id;
      const flying = open.inFlight.get(threadRowId);
      if (flying?.seq === ack.seq) {
        open.inFlight.delete(threadRowId);
        taken.push(threadRowId, flying);
        answered.set(flying.textId, state);
      } else others.push(ack);
    }
    if (taken.length > 0)
      tx.undo(() => {
        for (let i = 0; i < taken.length; i += 2) open.inFlight.set(taken[i] as number, taken[i + 1] as InFlight);
      });
    if (answered.size > 0) {
      tx.writing();
      for (const id of ackTexts(db, [...answered.keys()])) {
        const state = answered.get(id)!;
        if (state.undelivered !== undefined) state.undelivered--;
      }
      for (const state of answered.values()) {
        this.sender.claimNext(open, state, after, tx);
        this.core.threadChangedAfter(state.row, tx);
      }
      this.core.connectionChangedAfter(open.connectionId, tx);
    }
    for (const ack of others) this.receiveAck(open, ack, after, tx);
  }

  private receiveAck(open: OpenLink, ack: AckFrame, after: After, tx: Tx): void {
    const { db, threads } = this.core;
    const state = threads.byWireId(open.connectionId, ack.thread);
    if (!state) return;
    const thread = state.row;
    tx.writing();
    // One statement, not a read and a write.
    const { changes } = runSql(
      db,
      "UPDATE texts SET state = 'acked', reason = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE thread_id = ? AND direction = 'out' AND seq = ? AND state IN ('sent', 'queued')",
      thread.id,
      ack.seq,
    );
    if (state.undelivered !== undefined) state.undelivered -= changes;
    // A text that was on the wire when the owner paused failed then; an ack that still
    // comes for it says it was delivered after all.
    if (changes === 0) markAckedAfterPause(db, thread.id, ack.seq);
    takeOffWire(open, thread.id, ack.seq, tx);
    this.sender.claimNext(open, state, after, tx);
    this.core.threadChangedAfter(thread, tx);
    this.core.connectionChangedAfter(open.connectionId, tx);
  }

  private receiveReject(open: OpenLink, wireId: string, seq: number, reason: RejectReason, after: After, tx: Tx): void {
    const { db, threads } = this.core;
    const connectionId = open.connectionId;
    // Rare: the row read afresh rather than trusted from the cache.
    const thread = threadByWireId(db, connectionId, wireId);
    if (!thread) return;
    const state = threads.reload(thread);
    const connection = getConnectionRow(db, connectionId)!;
    const text = outText(db, thread.id, seq);
    // A decline comes after the ack: the text was delivered, and a person there turned it away.
    const declinable = reason === 'declined' && text?.state === 'acked';
    if (reason === 'declined') after(() => open.link.send({ type: 'noted', thread: wireId, seq, of: 'declined' }));
    if (text && (text.state === 'sent' || text.state === 'queued' || declinable)) {
      failText(db, text.id, reason, 'peer');
      if (state.undelivered !== undefined && !declinable) state.undelivered--;
      const peer = `${connection.name}/${thread.peer_role}`;
      // Paused means nothing moves: then the notice waits for the next turn.
      this.core.notify(
        thread,
        `Your text #${seq} to ${peer} was rejected (${reason}): ${rejectNotices[reason](connection.name)}`,
        connection.status === 'active',
      );
      relayAskEnded(this.core, thread, `${connection.name} refused it (${reason})`);
    }
    takeOffWire(open, thread.id, seq, tx);
    let cancelled: ApprovalRow[] = [];
    if (reason === 'thread') {
      // The peer closed its side: close ours, so the next send from this root starts anew.
      closeThread(db, thread.id, `closed by ${connection.name}`);
      const unsent = unsentTextsOfThread(db, thread.id);
      for (const text of unsent) failText(db, text.id, 'thread', 'peer');
      cancelled = endHeld(db, heldIncomingOfThread(db, thread.id), heldIds(unsent), 'thread');
      // Its row and texts changed: read them again when next needed.
      threads.forget(state);
    } else this.sender.claimNext(open, state, after, tx);
    after(() => {
      this.core.threadChanged(thread.id);
      this.core.connectionChanged(connectionId);
      for (const approval of cancelled) this.core.approvalChanged(approval);
    });
  }
}

/**
 * The PEER/ROLE a relaying peer says it waits on are its words: cleaned as a peer's name
 * is, the role kept only when it is a role name, and at most MAX_RELAYED_ON of them.
 */
export function relayedNames(on: readonly string[]): string[] {
  const names: string[] = [];
  for (const name of on.slice(0, MAX_RELAYED_ON)) {
    const slash = name.lastIndexOf('/');
    const peer = cleanPeerName(slash < 0 ? name : name.slice(0, slash));
    const role = slash < 0 ? '' : name.slice(slash + 1);
    if (peer && isRoleName(role)) names.push(`${peer}/${role}`);
  }
  return names;
}
