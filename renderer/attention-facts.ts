// What the window says about what waits on the person, as pure functions: where an item
// opens, the line that describes it, and the unread counts of the sidebar and the cards.
import type { AttentionItem, AttentionObject, UnreadMark } from '../shared/attention';
import type { View } from './state/ui';

/** Where an item is shown: the view, and the agent conversations to open there (outermost first). */
export interface Place {
  view: View;
  expand: number[];
}

/** The view that shows an item's object, and the cards to open in it. */
export function placeOf(item: Pick<AttentionItem, 'object' | 'root'>): Place {
  const { object, root } = item;
  switch (object.kind) {
    case 'conversation':
      return { view: { kind: 'conversation', id: object.id }, expand: [] };
    case 'task':
      return { view: { kind: 'tasks', id: object.id }, expand: [] };
    case 'connection':
      return { view: { kind: 'settings', tab: 'connections' }, expand: [] };
    case 'thread': {
      if (!root || root.gone) return { view: { kind: 'orphaned' }, expand: [object.id] };
      if (root.kind === 'conversation') return { view: { kind: 'conversation', id: root.id }, expand: [object.id] };
      if (root.kind === 'task') return { view: { kind: 'tasks', id: root.id }, expand: [object.id] };
      // One the peer started is its own root; one asked on its behalf sits inside it.
      return { view: { kind: 'peer' }, expand: root.id === object.id ? [object.id] : [root.id, object.id] };
    }
  }
}

/** A text failure's reason, in a few words. */
const notDeliveredWhy: Record<string, string> = {
  paused: 'the connection is paused',
  thread: 'the peer closed this agent conversation',
  roles: 'the roles did not match',
  role: 'the peer does not let this role be addressed',
  queue: 'too much was waiting at the peer',
  revoke: 'the connection was revoked',
  revoked: 'the connection was revoked',
  closed: 'the agent conversation was closed',
};

const address = (item: AttentionItem) => (item.peerRole ? `${item.peer}/${item.peerRole}` : (item.peer ?? ''));
const times = (n: number, one: string, many: string) => (n === 1 ? one : `${n} ${many}`);

/** What an item says in the list: a headline, and a line of detail. */
export function describeItem(item: AttentionItem): { headline: string; detail: string } {
  switch (item.kind) {
    case 'held':
      return { headline: `${item.role ?? 'A role'} wants to send to ${address(item)}`, detail: 'Held for approval' };
    case 'held_in':
      return {
        headline: `${address(item) || 'A peer'} wrote to ${item.role ?? 'a role'}`,
        detail: 'Held for approval before the agent takes it',
      };
    case 'permission':
      return { headline: `${item.role ?? 'A role'} asks for permission`, detail: item.title };
    case 'not_delivered':
      return {
        headline: `${times(item.count, 'A text', 'texts')} not delivered to ${address(item)}`,
        detail: `${item.role} · ${notDeliveredWhy[item.reason ?? ''] ?? item.reason ?? 'no reason was given'}`,
      };
    case 'agent_failed':
      return {
        headline: item.peer ? `${item.role} failed, with ${address(item)}` : `${item.role} failed`,
        detail:
          item.object.kind === 'task' ? `Task: ${item.title}` : (item.reason ?? 'The agent stopped with an error'),
      };
    case 'peer_paused':
      return {
        headline: `${item.peer} paused the connection`,
        detail: 'Their roles refuse what yours send until they unpause it',
      };
    case 'peer_revoked':
      return { headline: `${item.peer} revoked the connection`, detail: 'For good: nothing goes either way any more' };
    case 'answer':
      // Named for the peer when its answer came back and no role of ours reported it yet.
      return item.peer
        ? { headline: `${address(item)} answered`, detail: `To ${item.role} · ${item.count.toLocaleString()} new` }
        : { headline: `${item.role} answered`, detail: times(item.count, 'A new message', 'new messages') };
    case 'task_update':
      return { headline: item.title, detail: `${item.role} · ${times(item.count, 'news', 'new entries')}` };
    case 'peer_asked':
      return {
        headline: `${address(item)} asked ${item.role}`,
        detail: times(item.count, 'A new text', 'new texts'),
      };
  }
}

const markKey = (object: { kind: string; id: number }) => `${object.kind}:${object.id}`;

/** The marks by object, for quick look-ups. */
export function indexMarks(marks: readonly UnreadMark[]): Map<string, number> {
  return new Map(marks.map((mark) => [markKey(mark.object), mark.count]));
}

/** How much is unread in an object; a connection's news counts as its items. */
export function unreadOf(
  object: AttentionObject,
  marks: ReadonlyMap<string, number>,
  items: readonly AttentionItem[],
): number {
  if (object.kind !== 'connection') return marks.get(markKey(object)) ?? 0;
  return items.filter((item) => item.object.kind === 'connection' && item.object.id === object.id).length;
}

/** The sidebar's counts: tasks with news, and agent conversations under "Started by peers" with news. */
export function sidebarCounts(marks: readonly UnreadMark[]): { tasks: number; peerStarted: number } {
  let tasks = 0;
  let peerStarted = 0;
  for (const mark of marks) {
    if (mark.object.kind === 'task') tasks++;
    else if (mark.object.kind === 'thread' && mark.peerStarted) peerStarted++;
  }
  return { tasks, peerStarted };
}

/** "3 unread", for the accessible name of a count. */
export const unreadLabel = (n: number) => `${n.toLocaleString()} unread`;
