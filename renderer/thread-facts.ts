// What the window says about agent conversations, derived from what the app API returns:
// whether a stop dropped an incoming text (the API names the turn that took it), how many texts wait
// for the agent, the state of the connection they travel on, how an orphaned group is
// titled, and the state of an ask shown under the chat line that made it. Pure
// functions, tested by tables (thread-facts.test.ts).
import type {
  AskRef,
  ConnectionSummary,
  Message,
  PeerTurn,
  TextView,
  ThreadSummary,
  TurnSummary,
} from '../shared/domain';
import { shortTime } from './format';

export type FactTone = 'neutral' | 'accent' | 'good' | 'warn' | 'bad' | 'info';

// ------------------------------------------------------------------ incoming texts

/** How many incoming texts wait for the agent's next turn (not the ones it works on). */
export function waitingForAgent(thread: ThreadSummary): number {
  if (thread.run.state === 'idle') return thread.counts.received;
  // While a turn works, the run's pending count holds what arrived meanwhile.
  return Math.min(thread.run.pending, thread.counts.received);
}

export interface TextLabel {
  label: string;
  tone: FactTone;
  help: string;
  /** A sentence shown under the text, when its badge alone would not say enough. */
  note?: string;
}

/** The connection's name in "bob/researcher". */
const peerName = (peer: string) => peer.slice(0, peer.lastIndexOf('/'));

/** What the peer said of the turn that took this outgoing text, when it took this one (or a later one). */
export function peerTurnOf(text: TextView, peerTurn: PeerTurn | null | undefined): PeerTurn | undefined {
  return text.direction === 'out' && peerTurn && peerTurn.seq >= text.seq ? peerTurn : undefined;
}

/** Whom a relaying peer waits on, as it named them: "carol/researcher", or "another peer" when it named none. */
export function waitingOnWords(on: readonly string[] | undefined): string {
  if (!on || on.length === 0) return 'another peer';
  return on.length <= 2 ? on.join(' and ') : `${on.slice(0, 2).join(', ')} and ${on.length - 2} more`;
}

/** A delivered text: what the peer said of the turn that took it, until an answer came. */
function deliveredLabel(
  text: TextView,
  peer: string,
  peerTurn: PeerTurn | null | undefined,
  answered: boolean,
): TextLabel {
  const name = peerName(peer);
  switch (answered ? undefined : peerTurnOf(text, peerTurn)?.state) {
    case 'working':
      return { label: 'Working', tone: 'accent', help: `${name}'s agent is working on it.` };
    case 'stopped':
      return {
        label: `Stopped by ${name}`,
        tone: 'warn',
        help: `Someone at ${name} stopped the agent that had it: it was dropped there, and no answer will come.`,
      };
    case 'failed':
      return { label: `Failed at ${name}`, tone: 'bad', help: `${name}'s agent failed on it; no answer will come.` };
    case 'ended':
      return { label: 'No answer', tone: 'neutral', help: `${name}'s agent finished with it without answering.` };
    case 'relayed':
      return {
        label: `Waiting on ${waitingOnWords(peerTurn?.waitingOn)}`,
        tone: 'accent',
        help: `${name}'s agent asked ${waitingOnWords(peerTurn?.waitingOn)} and waits for that answer; its own answer, or how it ended, comes after.`,
      };
    case undefined:
      return {
        label: 'Delivered',
        tone: 'good',
        help: `${peer}'s installation stored it. An answer, if one comes, arrives as a text of its own.`,
      };
  }
}

/** Whether an answer (a text from the peer) came after this outgoing text. */
export function answeredAfter(text: TextView, texts: readonly TextView[]): boolean {
  return text.direction === 'out' && texts.some((t) => t.direction === 'in' && t.createdAt > text.createdAt);
}

/** A denied text's badge, with who denied it when the text says (a summary's last text does not). */
const deniedLabel = (text: TextView) => (text.deniedBy ? `Denied by ${text.deniedBy}` : 'Denied');

/**
 * The badge of a text as people read it. `withAgent` says whether a received text is
 * what the working agent was given; `turn` is the turn that took a handled one;
 * `peerTurn` is what the peer said of the turn that took our texts, which an answer
 * after the text (`answered`) makes old news.
 */
export function textLabel(
  text: TextView,
  peer: string,
  options: { withAgent?: boolean; turn?: TurnSummary; peerTurn?: PeerTurn | null; answered?: boolean } = {},
): TextLabel {
  const name = peerName(peer);
  switch (text.state) {
    case 'held':
      return {
        label: 'Held',
        tone: 'warn',
        help:
          text.direction === 'out'
            ? 'Waiting for a person’s approval before it goes out.'
            : 'Waiting for a person’s approval before the agent takes it.',
      };
    case 'queued':
      return {
        label: 'Queued',
        tone: 'neutral',
        help: 'Waiting to go out: the connection is offline or an earlier text awaits delivery.',
      };
    case 'sent':
      return { label: 'Sent', tone: 'info', help: `On its way: ${peer} has not confirmed it yet.` };
    case 'acked':
      return deliveredLabel(text, peer, options.peerTurn, options.answered ?? false);
    case 'failed':
      if (text.reason === 'denied')
        return {
          label: deniedLabel(text),
          tone: 'neutral',
          help: `${text.deniedBy ?? 'A person'} denied it, so it was never sent.`,
        };
      return {
        label: 'Failed',
        tone: 'bad',
        help:
          text.failedBy === 'peer'
            ? `It will not be delivered: ${name} refused it.`
            : text.failedBy === 'us'
              ? 'It will not be delivered: it failed here.'
              : 'It will not be delivered.',
      };
    case 'received':
      return options.withAgent
        ? { label: 'With the agent', tone: 'accent', help: 'The agent is working on it now.' }
        : { label: 'Received', tone: 'warn', help: 'Stored here; the agent has not taken it in yet.' };
    case 'handled': {
      if (text.reason === 'denied')
        return {
          label: deniedLabel(text),
          tone: 'neutral',
          help: `${text.deniedBy ?? 'A person'} denied it: the agent never got it.`,
          note: `Never given to the agent: ${text.deniedBy ?? 'a person'} denied it.`,
        };
      if (text.reason !== null)
        return {
          label: 'Dropped',
          tone: 'neutral',
          help: 'It waited for approval when its agent conversation or connection ended; the agent never got it.',
          note: `Never given to the agent: ${droppedBecause(text.reason)}`,
        };
      const turn = options.turn;
      if (turn?.status === 'stopped') {
        const by = turn.reason ?? 'Stopped';
        return {
          label: 'Stopped',
          tone: 'warn',
          help: `${by} before the agent finished with it; it was dropped and is not retried.`,
          note: `Dropped: ${by.replace(/^Stopped/, 'stopped')} before the agent finished; it will not be retried.`,
        };
      }
      if (turn?.status === 'failed')
        return {
          label: 'Failed',
          tone: 'bad',
          help: 'The agent’s turn failed while working on it.',
          note: `The agent failed on it${turn.reason ? `: ${turn.reason}` : '.'}`,
        };
      return { label: 'Read by the agent', tone: 'good', help: 'The agent took it in.' };
    }
  }
}

/** Why a held incoming text never reached the agent. */
function droppedBecause(reason: string): string {
  switch (reason) {
    case 'closed':
      return 'its agent conversation closed while it waited.';
    case 'thread':
      return 'the peer closed this agent conversation while it waited.';
    case 'revoke':
      return 'the connection was revoked while it waited.';
    default:
      return `${reason}.`;
  }
}

/** For each received text of the detail: whether the working agent has it (the oldest ones do). */
export function receivedWithAgent(texts: readonly TextView[], thread: ThreadSummary): Set<number> {
  const withAgent = new Set<number>();
  if (thread.run.state !== 'running' && thread.run.state !== 'stopping') return withAgent;
  const received = texts.filter((t) => t.direction === 'in' && t.state === 'received').sort((a, b) => a.seq - b.seq);
  const taken = Math.max(0, received.length - waitingForAgent(thread));
  for (const text of received.slice(0, taken)) withAgent.add(text.id);
  return withAgent;
}

// ------------------------------------------------------------------ connections

export type ConnectionState = 'paused' | 'offline' | 'revoked';

/** The connection's state where it matters to the agent conversations on it; null when all is well. */
export function connectionState(connection: ConnectionSummary | undefined): ConnectionState | null {
  if (!connection) return null;
  if (connection.status === 'revoked') return 'revoked';
  if (connection.status === 'paused') return 'paused';
  return connection.online ? null : 'offline';
}

export const connectionStateLabel: Record<ConnectionState, string> = {
  paused: 'Paused',
  offline: 'Offline',
  revoked: 'Revoked',
};

export const connectionStateTone: Record<ConnectionState, FactTone> = {
  paused: 'warn',
  offline: 'neutral',
  revoked: 'bad',
};

/** One sentence on what the connection's state means for an agent conversation on it. */
export function connectionStateNote(state: ConnectionState, peer: string): string {
  switch (state) {
    case 'paused':
      return `The connection to ${peer} is paused here: nothing goes to ${peer} or comes from it until an owner unpauses it.`;
    case 'offline':
      return `${peer} is offline: texts wait here and go out when it is back.`;
    case 'revoked':
      return `The connection to ${peer} was revoked: nothing more goes either way.`;
  }
}

/**
 * What a list of agent conversations shows on its tab: the states of the connections
 * its open ones travel on (paused before offline), and revoked ones.
 */
export function listConnectionStates(
  threads: Iterable<ThreadSummary>,
  connections: ReadonlyMap<number, ConnectionSummary>,
): Array<{ state: ConnectionState; peers: string[] }> {
  const found: Record<ConnectionState, Set<string>> = { paused: new Set(), offline: new Set(), revoked: new Set() };
  for (const thread of threads) {
    const state = connectionState(connections.get(thread.connection.id));
    if (!state) continue;
    if (state !== 'revoked' && thread.status !== 'open') continue;
    found[state].add(thread.connection.name);
  }
  return (['paused', 'offline', 'revoked'] as const)
    .filter((state) => found[state].size > 0)
    .map((state) => ({ state, peers: [...found[state]].sort() }));
}

// ------------------------------------------------------------------ orphaned groups

/**
 * The title of a group of agent conversations whose root was deleted: what it was
 * called (kept when it was deleted), or for roots deleted before that, which role it
 * was for; and since when it asked.
 */
export function orphanedGroupTitle(threads: readonly ThreadSummary[]): { title: string; since: string } {
  const first = threads.reduce((a, b) => (b.createdAt < a.createdAt ? b : a));
  const role = first.localRole;
  const kept = first.root.title;
  const title =
    first.root.kind === 'conversation'
      ? kept
        ? `Deleted: ${kept}`
        : `Deleted conversation with ${role}`
      : first.root.kind === 'task'
        ? kept
          ? `Deleted task: ${kept}`
          : `Deleted task for ${role}`
        : `Closed agent conversation of ${role}`;
  return { title, since: `first ask ${shortTime(first.createdAt)}` };
}

// ------------------------------------------------------------------ asks in the chat

/** "bob/researcher" for a thread. */
export const peerKey = (thread: Pick<ThreadSummary, 'connection' | 'peerRole'>) =>
  `${thread.connection.name}/${thread.peerRole}`;

export interface AskLink {
  threadId: number;
  textId: number;
}

/** Asks of a turn that posted no line (yet): shown on a row of their own, where the first was made. */
export interface LoneAsks {
  turnId: number;
  at: string;
  links: AskLink[];
}

/**
 * Where each ask shows: under the last line its turn posted (each line and each text
 * names its turn, as stored), or, for a turn that posted none, on a row of its own.
 */
export function placeAsks(
  messages: readonly Pick<Message, 'id' | 'postedByTurnId'>[],
  asks: readonly AskRef[],
): { under: Map<number, AskLink[]>; alone: LoneAsks[] } {
  const lineOfTurn = new Map<number, number>();
  for (const message of messages)
    if (message.postedByTurnId !== null) {
      const known = lineOfTurn.get(message.postedByTurnId);
      if (known === undefined || message.id > known) lineOfTurn.set(message.postedByTurnId, message.id);
    }
  const under = new Map<number, AskLink[]>();
  const alone = new Map<number, LoneAsks>();
  const ordered = [...asks].sort((a, b) => a.textId - b.textId);
  for (const ask of ordered) {
    const link = { threadId: ask.threadId, textId: ask.textId };
    const line = lineOfTurn.get(ask.sentByTurnId);
    if (line !== undefined) under.set(line, [...(under.get(line) ?? []), link]);
    else {
      const row = alone.get(ask.sentByTurnId) ?? { turnId: ask.sentByTurnId, at: ask.createdAt, links: [] };
      row.links.push(link);
      alone.set(ask.sentByTurnId, row);
    }
  }
  return { under, alone: [...alone.values()] };
}

export interface AskState {
  tone: FactTone;
  words: string;
  /** An action the person can take right here. */
  fix?: 'unpause' | 'approve';
}

/** Why an ask was not delivered, in words, with the fix when the person can apply it. */
function notDelivered(
  text: TextView,
  thread: ThreadSummary,
  connection: ConnectionSummary | undefined,
  isOwner: boolean,
): AskState {
  const peer = thread.connection.name;
  const pausedHere = connection?.status === 'paused';
  switch (text.reason) {
    case 'paused':
      if (text.failedBy === 'peer') return { tone: 'bad', words: `Not delivered: ${peer} paused the connection` };
      if (text.failedBy === 'us') {
        if (!pausedHere)
          return { tone: 'bad', words: `Not delivered: the connection to ${peer} was paused here; ask again` };
        return isOwner
          ? { tone: 'bad', words: `Not delivered: you paused the connection to ${peer}`, fix: 'unpause' }
          : { tone: 'bad', words: `Not delivered: the connection to ${peer} is paused here; an owner can unpause it` };
      }
      // From before it was kept which side paused: a pause here and the peer's refusal read alike.
      return {
        tone: 'bad',
        words: `Not delivered: the connection was paused (by ${peer}, or here while it waited)`,
        ...(pausedHere && isOwner ? { fix: 'unpause' as const } : {}),
      };
    case 'revoke':
    case 'revoked':
      if (text.failedBy === 'peer') return { tone: 'bad', words: `Not delivered: ${peer} revoked the connection` };
      if (text.failedBy === 'us')
        return { tone: 'bad', words: `Not delivered: the connection to ${peer} was revoked here` };
      return {
        tone: 'bad',
        words: `Not delivered: the connection to ${peer} was ${thread.closeReason?.startsWith('revoked') ? thread.closeReason : 'revoked'}`,
      };
    case 'role':
      return { tone: 'bad', words: `Not delivered: ${peer} does not let ${thread.localRole} ask ${thread.peerRole}` };
    case 'roles':
      return { tone: 'bad', words: `Not delivered: ${peer} did not recognise these roles` };
    case 'queue':
      return { tone: 'bad', words: `Not delivered: too much was waiting at ${peer}; ask again later` };
    case 'thread':
      return {
        tone: 'bad',
        words: `Not delivered: ${peer} closed this agent conversation; the next ask starts a new one`,
      };
    case 'closed':
      return { tone: 'bad', words: 'Not delivered: the agent conversation closed before it went out' };
    case 'denied':
      return {
        tone: 'neutral',
        words: text.deniedBy ? `Denied by ${text.deniedBy}: not sent` : 'Not sent: it was denied',
      };
    case 'declined':
      // It reached the peer; a person there turned it away before its agent saw it.
      return { tone: 'warn', words: `${peer} declined` };
    case 'withdrawn':
      return {
        tone: 'neutral',
        words: `Withdrawn${thread.withdrawn ? ` by ${thread.withdrawn.by}` : ''} before ${peer} confirmed it`,
      };
    default:
      return { tone: 'bad', words: `Not delivered${text.reason ? `: ${text.reason}` : ''}` };
  }
}

/**
 * Who let a held text through, in words, once it went on: the person who approved it, or
 * whose always-allow rule did. Nothing for a text that never waited, or one still held or failed.
 */
export function approvedWords(text: TextView): string | undefined {
  const by = text.approvedBy;
  if (!by || text.state === 'held' || text.state === 'failed') return undefined;
  return by.always ? `Always allowed by ${by.name}` : `Approved by ${by.name}`;
}

/**
 * The live state of one ask: held for approval, delivered → working → answered, or why
 * not, or closed. `canApprove`: the person may approve it where it is held.
 */
export function askState(
  text: TextView,
  texts: readonly TextView[],
  thread: ThreadSummary,
  connection: ConnectionSummary | undefined,
  isOwner: boolean,
  canApprove = false,
): AskState {
  const peer = thread.connection.name;
  if (text.state === 'failed') return notDelivered(text, thread, connection, isOwner);
  if (text.state === 'held')
    return canApprove
      ? { tone: 'warn', words: `Held for your approval before it goes to ${peer}`, fix: 'approve' }
      : { tone: 'warn', words: `Held: waiting for approval before it goes to ${peer}` };
  if (answeredAfter(text, texts)) return { tone: 'good', words: 'Answered' };
  const withdrawn = thread.withdrawn;
  if (withdrawn && withdrawn.seq >= text.seq)
    return {
      tone: 'neutral',
      words: withdrawn.told
        ? `Withdrawn by ${withdrawn.by}; ${peer} stopped working on it`
        : `Withdrawn by ${withdrawn.by}; ${peer} has not confirmed it yet`,
    };
  if (thread.status === 'closed')
    return { tone: 'neutral', words: `Closed${thread.closeReason ? `: ${thread.closeReason}` : ''}, with no answer` };
  const state = connectionState(connection);
  if (text.state === 'queued') {
    if (state === 'offline') return { tone: 'warn', words: `Waiting to go out: ${peer} is offline` };
    if (state === 'paused' && isOwner)
      return { tone: 'warn', words: `Waiting: you paused the connection to ${peer}`, fix: 'unpause' };
    return { tone: 'info', words: 'Sending…' };
  }
  if (text.state === 'sent') return { tone: 'info', words: `Sent; ${peer} has not confirmed it yet` };
  // The peer's turn on it ended with no answer: that stays so whatever happens after (a pause here brings nothing back).
  const ended = peerTurnOf(text, thread.peerTurn)?.state;
  if (ended === 'stopped') return { tone: 'warn', words: `Stopped by ${peer}; no answer will come` };
  if (ended === 'failed') return { tone: 'bad', words: `${peer}’s agent failed on it; no answer will come` };
  if (ended === 'ended') return { tone: 'neutral', words: `${peer}’s agent finished without answering` };
  // Delivered: the peer stored it. A pause here holds any answer back, whatever the peer does.
  if (state === 'paused')
    return isOwner
      ? {
          tone: 'warn',
          words: `Delivered; no answer can come while you pause the connection to ${peer}`,
          fix: 'unpause',
        }
      : { tone: 'warn', words: `Delivered; no answer can come while the connection to ${peer} is paused here` };
  // What the peer said of the turn that took it.
  switch (peerTurnOf(text, thread.peerTurn)?.state) {
    case 'working':
      return {
        tone: 'accent',
        words: `Working: ${peer}’s agent has it${state === 'offline' ? ` (${peer} is offline now)` : ''}`,
      };
    case 'stopped':
      return { tone: 'warn', words: `Stopped by ${peer}; no answer will come` };
    case 'failed':
      return { tone: 'bad', words: `${peer}’s agent failed on it; no answer will come` };
    case 'ended':
      return { tone: 'neutral', words: `${peer}’s agent finished without answering` };
    case 'relayed':
      return { tone: 'accent', words: `${peer} is waiting on ${waitingOnWords(thread.peerTurn?.waitingOn)}` };
    case undefined:
      break;
  }
  if (state === 'offline') return { tone: 'neutral', words: `Delivered; no answer yet, and ${peer} is offline` };
  return { tone: 'info', words: 'Delivered; no answer yet' };
}

/**
 * Whether a person may withdraw an agent conversation's ask here: one started here, open,
 * whose newest text is an ask of ours that went or waits to go, newer than any withdrawal.
 */
export function canWithdraw(thread: ThreadSummary): boolean {
  const last = thread.lastText;
  return (
    thread.startedBy === 'local' &&
    thread.status === 'open' &&
    last !== null &&
    last.direction === 'out' &&
    last.state !== 'failed' &&
    last.seq > (thread.withdrawn?.seq ?? 0) &&
    // Stopped, failed or ended there: nothing works on it any more.
    !['stopped', 'failed', 'ended'].includes(peerTurnOf(last, thread.peerTurn)?.state ?? '')
  );
}
