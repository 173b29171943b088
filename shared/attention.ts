// What waits on a person (DESIGN §11.10): the items of `attention.list`, the unread
// marks on what they read, and what a notification says about an item. Plain data and
// pure functions, shared by main (the desktop app's notifications and title) and the page
// (its list, its marks, the browser's notifications and the tab's title).
import type { ContextKind } from './domain';

/**
 * Waiting on you: it needs a person (a decision, a failure to look at, a peer that
 * paused or revoked). Answered: a role answered you. Done: work finished that you may
 * want to look at (a task's news, a question a peer's role asked one of yours).
 */
export type AttentionSection = 'waiting' | 'answered' | 'done';

export const attentionSections: readonly AttentionSection[] = ['waiting', 'answered', 'done'];

export type AttentionKind =
  /** An outgoing text held for a person's approval. */
  | 'held'
  /** A peer's text held for a person's approval before the agent takes it. */
  | 'held_in'
  /** An agent asks permission to use a tool. */
  | 'permission'
  /** Outgoing texts of an agent conversation that were not delivered (refused by the peer, or failed here). */
  | 'not_delivered'
  /** An agent's turn failed. */
  | 'agent_failed'
  /** The peer paused the connection (its refusals say so). Owners only. */
  | 'peer_paused'
  /** The peer revoked the connection. Owners only. */
  | 'peer_revoked'
  /** A role answered in the person's conversation. */
  | 'answer'
  /** News on a task: its agent's output or report, someone else's comment. */
  | 'task_update'
  /** A peer's role wrote in an agent conversation the peer started. */
  | 'peer_asked';

export const sectionOf: Record<AttentionKind, AttentionSection> = {
  held: 'waiting',
  held_in: 'waiting',
  permission: 'waiting',
  not_delivered: 'waiting',
  agent_failed: 'waiting',
  peer_paused: 'waiting',
  peer_revoked: 'waiting',
  answer: 'answered',
  task_update: 'done',
  peer_asked: 'done',
};

export type AttentionObjectKind = 'conversation' | 'task' | 'thread' | 'connection';

/** What opening an item shows. */
export interface AttentionObject {
  kind: AttentionObjectKind;
  id: number;
}

export interface AttentionItem {
  /** Stable per object and kind, e.g. `not_delivered:thread:12`. */
  key: string;
  kind: AttentionKind;
  section: AttentionSection;
  object: AttentionObject;
  /** How many new things it holds (texts not delivered, messages, entries); 1 for one decision. */
  count: number;
  /** Changes whenever something new joins the item: a notification is due when it does. */
  stamp: string;
  /** When the newest of them happened (ISO time). */
  at: string;
  /** The connection's name (PEER of PEER/ROLE), when a peer is involved. */
  peer: string | null;
  /** The peer's role (ROLE of PEER/ROLE). */
  peerRole: string | null;
  /** The role here. */
  role: string | null;
  /** For an agent conversation, its root: where the page shows it. */
  root: { kind: ContextKind; id: number; gone: boolean } | null;
  /** What it is about, inside the app: a task's title, the conversation's role, the agent conversation's peer. */
  title: string;
  /** Why, in a few words: a failure's reason (paused, role, …) or the agent's error. */
  reason: string | null;
  /** For a decision (held, held_in, permission): the approval, which the list offers to decide in place. */
  approvalId?: number;
}

/** The unread count of one object the person reads. */
export interface UnreadMark {
  object: { kind: 'conversation' | 'task' | 'thread'; id: number };
  count: number;
  /**
   * The first unread message (a conversation) or log entry (a task) by id: where the page
   * draws its "New" line. Absent when only other news is unread (an answer that came back, a failure).
   */
  firstContent?: number;
  /** Agent conversations a peer started, and those asked on their behalf: they show under "Started by peers". */
  peerStarted: boolean;
}

export interface AttentionList {
  /** Newest first within each section, waiting first; at most the limit asked for. */
  items: AttentionItem[];
  /** All items, however many were left out. */
  total: number;
  marks: UnreadMark[];
}

export const attentionKey = (kind: AttentionKind, object: AttentionObject): string =>
  `${kind}:${object.kind}:${object.id}`;

export const WINDOW_TITLE = 'Parley';

/** The window's (or tab's) title with what waits, as messaging apps show it. */
export function titleWithCount(count: number): string {
  return count > 0 ? `${WINDOW_TITLE} (${count})` : WINDOW_TITLE;
}

export const sectionTitle: Record<AttentionSection, string> = {
  waiting: 'Waiting on you',
  answered: 'Answered',
  done: 'Done',
};

const address = (item: AttentionItem): string | null =>
  item.peer && item.peerRole ? `${item.peer}/${item.peerRole}` : item.peer;

/**
 * What a notification says. It names the peer and the roles only — never a text, a
 * message, a task's title or an error, which a locked screen or a shared desk would show.
 */
export function notificationFor(item: AttentionItem): { title: string; body: string } {
  const peer = address(item);
  const role = item.role ?? 'A role';
  const body = ((): string => {
    switch (item.kind) {
      case 'held':
        return peer ? `${role} wants to send to ${peer}` : `${role} wants to send a text`;
      case 'held_in':
        return `${peer ?? 'A peer'} wrote to ${role}: approve it first`;
      case 'permission':
        return `${role} asks for permission`;
      case 'not_delivered':
        return peer ? `Not delivered to ${peer}` : 'A text was not delivered';
      case 'agent_failed':
        return peer ? `${role} failed, with ${peer}` : `${role} failed`;
      case 'peer_paused':
        return `${item.peer ?? 'A peer'} paused the connection`;
      case 'peer_revoked':
        return `${item.peer ?? 'A peer'} revoked the connection`;
      case 'answer':
        // A peer's answer that no role of ours has reported yet names the peer.
        return `${peer ?? role} answered`;
      case 'task_update':
        return `${role} on a task`;
      case 'peer_asked':
        return peer ? `${peer} asked ${role}` : `A peer asked ${role}`;
    }
  })();
  return { title: sectionTitle[item.section], body };
}

/**
 * The items that are news since `notified` (key → the stamp last notified): new ones,
 * and ones that gained something. Records them in `notified`.
 */
export function freshItems(notified: Map<string, string>, items: readonly AttentionItem[]): AttentionItem[] {
  const fresh: AttentionItem[] = [];
  for (const item of items) {
    if (notified.get(item.key) === item.stamp) continue;
    notified.set(item.key, item.stamp);
    fresh.push(item);
  }
  return fresh;
}

/**
 * Which notifications a person gets: per kind of what waits on them, and per connection
 * (anything about that peer). What is not listed as off notifies.
 */
export interface NotificationPrefs {
  kinds: Array<{ kind: AttentionKind; notify: boolean }>;
  connections: Array<{ id: number; name: string; notify: boolean }>;
}

/** The kinds a person may turn notifications off for, in the order Settings lists them. */
export const attentionKinds = Object.keys(sectionOf) as AttentionKind[];

/**
 * Whether an item that is news raises a notification for a person with these
 * preferences: not when its kind is off, nor when it is about a connection that is off.
 */
export function wantsNotification(prefs: NotificationPrefs | null, item: AttentionItem): boolean {
  if (!prefs) return true;
  if (prefs.kinds.some((entry) => entry.kind === item.kind && !entry.notify)) return false;
  return !(item.peer !== null && prefs.connections.some((entry) => entry.name === item.peer && !entry.notify));
}
