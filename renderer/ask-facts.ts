// Where each ask shows in the chat (under the line of the turn that made it, as stored) and
// what state it is in, in words with the fix a person can apply. Pure functions, tested by tables.
import type { AskRef, ConnectionSummary, Message, TextView, ThreadSummary } from '../shared/domain';
import { connectionState } from './connection-facts';
import { answeredAfter, peerTurnOf, waitingOnWords, type FactTone } from './thread-facts';

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
