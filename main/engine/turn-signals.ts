// Telling a peer what our agent does with its texts (protocol 2's `turn`): a turn took
// texts of a thread the peer started (`working`), or that turn is over and no answer
// went back (`stopped`, `failed`, `ended`), or it ended waiting on asks of its own to
// other peers (`relayed`, revision 2). Only the state and the peer's own seq cross the
// wire (and, for `relayed`, whom it waits on), only on that thread's connection. One
// frame when a turn starts and at most one when it ends: nothing per text.
//
// A peer of revision 2 acknowledges each state (`turn-ack`). Until it does, the state is
// kept in `turn_signals` — the latest per thread, so a newer one replaces it — and sent
// again on every new link, after a restart here too: a link that dies just after the
// send, or a duplicate link closed by the rule, loses none. A peer of revision 1 hears
// each state once, as it always did; one from before revisions hears none.
import { log } from '../log';
import { getConnectionRow } from '../store/queries/connections';
import { getThread, lastSeq, lastSeqTakenBy } from '../store/queries/threads';
import {
  ackTurnSignal,
  dropTurnSignal,
  dropTurnSignalsOf,
  keepTurnSignal,
  turnSignalsOf,
  type TurnSignalRow,
} from '../store/queries/turn-signals';
import { isStorageFailure } from '../store/storage-errors';
import type { EngineCore, OpenLink } from './engine-core';
import { openRelayAsks } from './relay-end';
import {
  frameRevision,
  MAX_RELAYED_ON,
  revisionNeeded,
  type TurnAckFrame,
  type TurnFrame,
  type TurnState,
} from './wire';

export class TurnSignals {
  constructor(private readonly core: EngineCore) {}

  /**
   * A turn of an agent conversation's run: `working` when it took texts, how it ended
   * unanswered, or `relayed` with the PEER/ROLE it waits on.
   */
  turn(threadRowId: number, turnId: number, state: TurnState, on?: string[]): void {
    const { db } = this.core;
    const thread = getThread(db, threadRowId);
    if (!thread || thread.started_by !== 'peer') return;
    if (getConnectionRow(db, thread.connection_id)?.status === 'revoked') return;
    // A turn woken by a notice it answers for (a relay's ask ended) was given no text: it
    // answers for everything the peer sent.
    const seq = lastSeqTakenBy(db, turnId) ?? lastSeq(db, threadRowId, 'in');
    if (seq === 0) return;
    const waitingOn = state === 'relayed' ? (on ?? openRelayAsks(db, threadRowId).slice(0, MAX_RELAYED_ON)) : null;
    try {
      keepTurnSignal(db, threadRowId, seq, state, waitingOn);
    } catch (error) {
      // Not kept: it still goes to a link that is open now, as before acknowledgements.
      if (!isStorageFailure(error)) throw error;
      log.warn('could not keep a turn state for the peer', { error: String(error) });
    }
    const open = this.core.open.get(thread.connection_id);
    if (open?.link.state === 'open')
      this.sendOn(open, { thread_id: threadRowId, wire_id: thread.wire_id, seq, state, waiting_on: null }, waitingOn);
  }

  /** A link opened: what its peer has not acknowledged goes first, before any text is sent again. */
  flush(open: OpenLink): void {
    for (const row of turnSignalsOf(this.core.db, open.connectionId))
      this.sendOn(open, row, row.waiting_on ? (JSON.parse(row.waiting_on) as string[]) : null);
  }

  /** The peer recorded a state: it is not sent again (unless a newer one replaced it meanwhile). */
  acked(open: OpenLink, frame: TurnAckFrame): void {
    ackTurnSignal(this.core.db, open.connectionId, frame.thread, frame.seq, frame.state);
  }

  /** The connection is revoked: nothing more goes to that peer. */
  forget(connectionId: number): void {
    dropTurnSignalsOf(this.core.db, connectionId);
  }

  private sendOn(open: OpenLink, row: TurnSignalRow, waitingOn: string[] | null): void {
    const frame: TurnFrame = { type: 'turn', thread: row.wire_id, seq: row.seq, state: row.state };
    if (waitingOn) frame.on = waitingOn;
    const revision = open.link.revision;
    if (revision >= frameRevision['turn-ack']) {
      // Kept until the peer's turn-ack: a send that did not go, or went and was lost, goes on the next link.
      open.link.send(frame);
      return;
    }
    // An older peer cannot acknowledge: a state it cannot take (before revision 1, or
    // `relayed` before revision 2) is let go, and one it can goes once, as before.
    if (revisionNeeded(frame) > revision || open.link.send(frame))
      dropTurnSignal(this.core.db, row.thread_id, row.seq, row.state);
  }
}
