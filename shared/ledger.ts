// The record of what a conversation's or a task's roles said to other installations and
// heard from them (DESIGN §12.8): every agent conversation rooted there, and those rooted in
// them in turn (a local relay), with each text, its state, who let it through or stopped it,
// and how the turn that took it ended.
import type { ContextKind, TextState, TurnStatus } from './domain';

export type LedgerRootKind = Extract<ContextKind, 'conversation' | 'task'>;

export interface LedgerText {
  /** The text's row id here (not its wire seq). */
  id: number;
  /** `out`: our role to the peer's; `in`: the peer's role to ours. */
  direction: 'out' | 'in';
  /** Its number in its direction of its agent conversation, as on the wire. */
  seq: number;
  body: string;
  state: TextState;
  /** Why it failed, or how it was handled. */
  reason: string | null;
  /** For a failed text: which side made it fail, where known. */
  failedBy: 'us' | 'peer' | null;
  at: string;
  /** A person's word on it, when it waited for one. */
  approval: { state: 'pending' | 'approved' | 'denied' | 'cancelled'; by: string | null; at: string | null } | null;
  /** An outgoing text: the turn of our role whose agent sent it; null where that was not kept. */
  sentBy: LedgerTurn | null;
  /** An incoming text: each turn of our role that took it, oldest first (a re-run takes it again). */
  takenBy: LedgerTurn[];
}

/** A turn of one of our roles' agents, and how it ended (or that it still works). */
export interface LedgerTurn {
  id: number;
  role: string;
  status: TurnStatus;
  reason: string | null;
  startedAt: string;
  endedAt: string | null;
}

export interface LedgerEntry {
  /** The agent conversation's row id here. */
  threadId: number;
  /** The connection's name: the PEER of PEER/ROLE. */
  peer: string;
  localRole: string;
  peerRole: string;
  startedBy: 'local' | 'peer';
  status: 'open' | 'closed';
  closeReason: string | null;
  /** Set when this agent conversation relays another one of this record (its root), by that one's row id. */
  relayOf: number | null;
  /** What the peer said of its turn on our last text: working, stopped, failed, ended. */
  peerTurn: string | null;
  startedAt: string;
  texts: LedgerText[];
}

export interface Ledger {
  root: { kind: LedgerRootKind; id: number; title: string };
  entries: LedgerEntry[];
  /** True when the record is longer than the texts returned (the newest are left out). */
  truncated: boolean;
}

const outcome: Record<LedgerText['state'], string> = {
  held: 'held for approval',
  queued: 'waiting to be sent',
  sent: 'sent, not yet confirmed',
  acked: 'delivered',
  failed: 'not delivered',
  received: 'received, not yet taken',
  handled: 'taken',
};

const ended: Record<TurnStatus, string> = {
  running: 'still working',
  done: 'finished',
  failed: 'failed',
  stopped: 'stopped',
  interrupted: 'cut off when Parley stopped',
};

/** A turn in a few words: whose, when it started, how it ended. */
export function turnWords(turn: LedgerTurn, time: (iso: string) => string = (iso) => iso): string {
  const reason = turn.reason && turn.status !== 'done' ? ` (${turn.reason})` : '';
  return `${turn.role}’s turn of ${time(turn.startedAt)}, ${ended[turn.status]}${reason}`;
}

/**
 * What came of a text, in a few words: its state, a person's word on it, the turn that sent
 * it or the turns that took it. `time` writes a timestamp (the export keeps ISO times).
 */
export function textOutcome(
  text: LedgerText,
  entry: LedgerEntry,
  time: (iso: string) => string = (iso) => iso,
): string {
  const parts = [outcome[text.state]];
  if (text.state === 'failed') {
    const side = text.failedBy === 'peer' ? ` by ${entry.peer}` : text.failedBy === 'us' ? ' here' : '';
    parts[0] = `not delivered${side}${text.reason ? ` (${text.reason})` : ''}`;
  }
  if (text.approval) {
    const { state, by, at } = text.approval;
    const who = by ? ` by ${by}` : '';
    const when = at ? ` at ${time(at)}` : '';
    parts.push(state === 'pending' ? 'waiting for approval' : `${state}${who}${when}`);
  }
  if (text.sentBy) parts.push(`sent by ${turnWords(text.sentBy, time)}`);
  if (text.takenBy.length > 0) {
    const taken = `taken by ${text.takenBy.map((turn) => turnWords(turn, time)).join(', then by ')}`;
    // A turn has it: that says more than "received" or "taken".
    if (text.state === 'handled' || text.state === 'received') parts[0] = taken;
    else parts.push(taken);
  }
  return parts.join('; ');
}
