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
  /** An incoming text: the turn of our role that took it, and how it ended. */
  turn: { id: number; status: TurnStatus; reason: string | null; endedAt: string | null } | null;
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

/** What came of a text, in a few words: its state, a person's word on it, the turn that took it. */
export function textOutcome(text: LedgerText, entry: LedgerEntry): string {
  const parts = [outcome[text.state]];
  if (text.state === 'failed') {
    const side = text.failedBy === 'peer' ? ` by ${entry.peer}` : text.failedBy === 'us' ? ' here' : '';
    parts[0] = `not delivered${side}${text.reason ? ` (${text.reason})` : ''}`;
  }
  if (text.approval) {
    const { state, by, at } = text.approval;
    const who = by ? ` by ${by}` : '';
    const when = at ? ` at ${at}` : '';
    parts.push(state === 'pending' ? 'waiting for approval' : `${state}${who}${when}`);
  }
  if (text.turn) {
    const how = text.turn.status === 'done' ? 'answered' : text.turn.status;
    parts.push(`turn ${how}${text.turn.reason ? `: ${text.turn.reason}` : ''}`);
  }
  return parts.join('; ');
}
