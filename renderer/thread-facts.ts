// What the window says about agent conversations, derived from what the app API returns:
// whether a stop dropped an incoming text (the API names the turn that took it), how many texts wait
// for the agent, how each text is labelled and how an orphaned group is titled. The
// connection's state is in connection-facts.ts, an ask's in ask-facts.ts. Pure functions,
// tested by tables (thread-facts.test.ts).
import type { PeerTurn, TextView, ThreadSummary, TurnSummary } from '../shared/domain';
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
