// The decisions behind what waits on a person, as pure functions over plain rows: which
// kind of item new rows and attention events make, how events of one object gather into
// one item, the order of the list, and how far a person's floor may rise. ./attention.ts
// does the reading and writing around them.
import {
  attentionKey,
  attentionSections,
  type AttentionItem,
  type AttentionKind,
  type AttentionObject,
} from '../../shared/attention';
import type { AttentionEventRow, IncomingNewsRow, ReadFloor } from '../store/queries/attention';

/** The item an attention event belongs to. */
export const eventItemKind: Record<AttentionEventRow['kind'], AttentionKind> = {
  text_failed: 'not_delivered',
  turn_failed: 'agent_failed',
  peer_paused: 'peer_paused',
  peer_revoked: 'peer_revoked',
};

/**
 * The item new content of an object makes: a role's answer in a conversation, news on a
 * task, a peer's text in an agent conversation the peer started. Texts in the others
 * (an answer to an ask made from a conversation or task) come back to their root, which
 * says so itself: they mark their agent conversation unread and make no item.
 */
export function contentItemKind(
  object: { kind: 'conversation' | 'task' } | { kind: 'thread'; startedByPeer: boolean },
): AttentionKind | null {
  switch (object.kind) {
    case 'conversation':
      return 'answer';
    case 'task':
      return 'task_update';
    case 'thread':
      return object.startedByPeer ? 'peer_asked' : null;
  }
}

/**
 * Whose news a text that came in is: its agent conversation's root — the conversation or
 * task it answers for, or the agent conversation a peer started (its own texts, and the
 * answers to what was asked on its behalf). Opening the root reads it. None once the root
 * is gone: nobody waits for that answer any more.
 */
export function newsOf(
  text: Pick<IncomingNewsRow, 'root_kind' | 'root_id' | 'root_gone'>,
): { kind: 'conversation' | 'task' | 'thread'; id: number } | null {
  if (text.root_gone) return null;
  return { kind: text.root_kind, id: text.root_id };
}

/** The attention events of one item, gathered. */
export interface EventGroup {
  kind: AttentionKind;
  object: AttentionObject;
  count: number;
  first: number;
  last: number;
  at: string;
  /** The newest event's reason. */
  reason: string | null;
}

/** Gathers events (oldest first) into one group per object and kind of item. */
export function groupEvents(events: readonly AttentionEventRow[]): EventGroup[] {
  const groups = new Map<string, EventGroup>();
  for (const event of events) {
    const kind = eventItemKind[event.kind];
    const object: AttentionObject = { kind: event.object_kind, id: event.object_id };
    const key = attentionKey(kind, object);
    const group = groups.get(key);
    if (!group) {
      groups.set(key, {
        kind,
        object,
        count: 1,
        first: event.id,
        last: event.id,
        at: event.at,
        reason: event.reason,
      });
      continue;
    }
    group.count++;
    if (event.id > group.last) {
      group.last = event.id;
      group.at = event.at;
      group.reason = event.reason;
    }
    group.first = Math.min(group.first, event.id);
  }
  return [...groups.values()];
}

const sectionRank = (item: AttentionItem) => attentionSections.indexOf(item.section);

/** Waiting first, then answered, then done; newest first within each. */
export function orderItems(items: readonly AttentionItem[]): AttentionItem[] {
  return [...items].sort(
    (a, b) => sectionRank(a) - sectionRank(b) || (a.at < b.at ? 1 : a.at > b.at ? -1 : a.key.localeCompare(b.key)),
  );
}

/** The lowest unread id of each kind of row, among what the person reads; undefined where nothing is unread. */
export type FirstUnread = { [K in keyof ReadFloor]?: number };

/**
 * How far a person's floor rises: to just below the first row still unread, or to the
 * newest row where nothing is; never down. Everything under the floor is then read or
 * not theirs to read, so the next scan starts there.
 */
export function nextFloor(floor: ReadFloor, newest: ReadFloor, firstUnread: FirstUnread): ReadFloor {
  const rise = (key: keyof ReadFloor) => {
    const first = firstUnread[key];
    return Math.max(floor[key], first === undefined ? newest[key] : first - 1);
  };
  return {
    message_id: rise('message_id'),
    task_log_id: rise('task_log_id'),
    text_id: rise('text_id'),
    event_id: rise('event_id'),
  };
}
