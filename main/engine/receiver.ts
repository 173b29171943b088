// The receiving side: frames from an open link. A text is decided on by decideText
// (./receive-decision.ts) and, when accepted, committed before its ack; it waits,
// received, as the work of its agent conversation's run. Acks read together are
// recorded together; a rejection fails the text and tells the sending role. A peer's
// word on the turn that took our texts (`turn`) is kept on the thread we started.
import { log } from '../log';
import { exposedRoleNames, getConnectionRow, setPeerRoles } from '../store/queries/connections';
import { getRoleByName } from '../store/queries/roles';
import { ensureRun } from '../store/queries/runs';
import {
  ackTexts,
  closeThread,
  failText,
  insertText,
  insertThread,
  heldIncomingOfThread,
  markAckedAfterPause,
  outText,
  setPeerTurn,
  threadByWireId,
  unsentTextsOfThread,
} from '../store/queries/threads';
import type { ApprovalRow } from '../store/queries/approvals';
import { run as runSql } from '../store/sql';
import { transaction } from '../store/database';
import { isStorageFailure } from '../store/storage-errors';
import { frameFailed, type EngineCore, type OpenLink } from './core';
import type { Tx } from './group-commit';
import { endHeld, heldIds, type Holds } from './holds';
import { decideText } from './receive-decision';
import { takeOffWire, type Sender } from './sender';
import type { ThreadState } from './sender-key';
import type { AckFrame, Frame, RejectReason, TextFrame, TurnFrame } from './wire';

type After = (action: () => void) => void;

const rejectNotices: Record<RejectReason, (peer: string) => string> = {
  thread: (peer) =>
    `${peer} has closed this agent conversation (its topic was deleted there), so the text was not delivered. Your next send from the same topic starts a new agent conversation.`,
  roles: (peer) => `${peer} refused the text: the roles do not match this agent conversation.`,
  role: (peer) => `${peer} does not let you address that role (it is not exposed to you, or it was removed).`,
  paused: (peer) => `${peer} has paused the connection; the text was not delivered.`,
  queue: (peer) => `${peer} has too much waiting; the text was not delivered. Try again later.`,
  revoke: (peer) => `${peer} revoked the connection; the text was not delivered.`,
};

export class Receiver {
  constructor(
    private readonly core: EngineCore,
    private readonly sender: Sender,
    private readonly holds: Holds,
    /** The peer revoked the connection (a `revoke` frame). */
    private readonly revokedByPeer: (open: OpenLink) => Promise<void>,
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
          transaction(db, () => setPeerRoles(db, connectionId, frame.roles));
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
        // Checks first, then writes: no savepoint of its own (see GroupCommit).
        batch.run((after, tx) => this.receiveText(open, frame, after, tx), { savepoint: false }).catch(failed);
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
        // What a peer's agent does is shown, not relied on: no fsync of its own, and one
        // that cannot be recorded is let go (the peer does not send it again).
        batch
          .run((after, tx) => this.receiveTurn(open, frame, tx), { durable: false, savepoint: false })
          .catch((error: unknown) => {
            if ((error as Error).message !== 'shutting down')
              log.warn('could not record what the peer said of its turn', { error: String(error) });
          });
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
    setPeerTurn(db, state.row.id, frame.state, frame.seq);
    // The cached row is the engine's own: kept in step rather than read again.
    state.row = { ...state.row, peer_turn: frame.state, peer_turn_seq: frame.seq };
    this.core.threadChangedAfter(state.row, tx);
  }

  private receiveText(open: OpenLink, frame: TextFrame, after: After, tx: Tx): void {
    const { db, batch, threads, counters } = this.core;
    const { connectionId, link } = open;
    const reply = (response: Frame) => after(() => link.send(response));
    // Looked up once per group commit, not per text.
    const connection = batch.memo(`connection ${connectionId}`, () => getConnectionRow(db, connectionId))!;
    const role = batch.memo(`role ${frame.to}`, () => getRoleByName(db, frame.to));
    let state = threads.byWireId(connectionId, frame.thread);
    if (state && role && role.createdAt > state.row.created_at) {
      // The role was made after the thread: the role the thread had may have been removed
      // (its id set to null in the row) and its id reused. Read the row again.
      threads.forget(state);
      state = threads.byWireId(connectionId, frame.thread)!;
    }
    const exposed = batch.memo(`exposed ${connectionId}`, () => exposedRoleNames(db, connectionId));
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
    const held = connection.incoming_policy === 'ask';
    const textId = insertText(db, row.id, 'in', frame.seq, frame.body, held ? 'held' : 'received');
    counters.addedIncoming(connectionId);
    // The thread's run, made once per thread: the text waits in it as it is, received,
    // until a turn takes it. A thread's run goes only with its role, and a removed role
    // is refused above.
    state.runId ??= ensureRun(db, { kind: 'thread', id: row.id }, accepted.id).id;
    if (held) this.holds.hold('incoming', row, textId, state.runId, tx);
    else after(() => this.core.options.runs.wake());
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
    for (const ack of acks) {
      const state = threads.byWireId(open.connectionId, ack.thread);
      if (!state) continue;
      const flying = takeOffWire(open, state.row.id, ack.seq, tx);
      if (flying) answered.set(flying.textId, state);
      else others.push(ack);
    }
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
    if (text && (text.state === 'sent' || text.state === 'queued')) {
      failText(db, text.id, reason, 'peer');
      if (state.undelivered !== undefined) state.undelivered--;
      const peer = `${connection.name}/${thread.peer_role}`;
      // Paused means nothing moves: then the notice waits for the next turn.
      this.core.notify(
        thread,
        `Your text #${seq} to ${peer} was rejected (${reason}): ${rejectNotices[reason](connection.name)}`,
        connection.status === 'active',
      );
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
