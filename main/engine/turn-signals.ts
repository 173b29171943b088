// Telling a peer what our agent does with its texts (protocol 2 revision 1's `turn`):
// a turn took texts of a thread the peer started (`working`), or that turn is over and
// no answer went back (`stopped`, `failed`, `ended`). Only the state and the peer's own
// seq cross the wire, only on that thread's connection, and only to a peer that agreed
// to revision 1. One frame when a turn starts and at most one when it ends: nothing per
// text. A state that finds no link waits, the latest per thread, until one opens.
import { getConnectionRow } from '../store/queries/connections';
import { getThread, lastSeqTakenBy } from '../store/queries/threads';
import type { EngineCore, OpenLink } from './core';
import { frameRevision, type TurnFrame, type TurnState } from './wire';

/** States waiting per connection: past this, the oldest is dropped. */
const MAX_WAITING = 10_000;

export class TurnSignals {
  /** Per connection, by wire thread ID: the state its peer has not heard yet. */
  private readonly waiting = new Map<number, Map<string, TurnFrame>>();

  constructor(private readonly core: EngineCore) {}

  /** A turn of an agent conversation's run: `working` when it took texts, or how it ended unanswered. */
  turn(threadRowId: number, turnId: number, state: TurnState): void {
    const { db } = this.core;
    const thread = getThread(db, threadRowId);
    if (!thread || thread.started_by !== 'peer') return;
    if (getConnectionRow(db, thread.connection_id)?.status === 'revoked') return;
    const seq = lastSeqTakenBy(db, turnId);
    if (seq === null) return;
    const frame: TurnFrame = { type: 'turn', thread: thread.wire_id, seq, state };
    const open = this.core.open.get(thread.connection_id);
    if (open?.link.state === 'open') {
      // A peer from before revision 1 never hears of it.
      if (open.link.revision < frameRevision.turn) return;
      if (open.link.send(frame)) return;
    }
    let waiting = this.waiting.get(thread.connection_id);
    if (!waiting) {
      waiting = new Map();
      this.waiting.set(thread.connection_id, waiting);
    }
    waiting.delete(frame.thread);
    waiting.set(frame.thread, frame);
    if (waiting.size > MAX_WAITING) waiting.delete(waiting.keys().next().value!);
  }

  /** A link opened: what waited for it goes first, before any text is sent again. */
  flush(open: OpenLink): void {
    const waiting = this.waiting.get(open.connectionId);
    if (!waiting) return;
    this.waiting.delete(open.connectionId);
    if (open.link.revision < frameRevision.turn) return;
    for (const frame of waiting.values()) open.link.send(frame);
  }

  /** The connection is revoked: nothing more goes to that peer. */
  forget(connectionId: number): void {
    this.waiting.delete(connectionId);
  }
}
