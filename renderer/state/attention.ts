// What waits on the person (attention.list): the items of "Waiting on you", the unread
// count of each conversation, task and agent conversation, and the browser's
// notifications of what is new. Read again on every `attention` event.
import { create } from 'zustand';
import type { AttentionItem, AttentionList, AttentionObject, NotificationPrefs } from '../../shared/attention';
import type { ParamsOf } from '../../shared/api-contract';
import { indexMarks, placeOf, unreadOf } from '../attention-facts';
import { askForNotifications, BrowserNotifier, notificationState, type NotificationState } from '../notifications';
import { call, isNotFound, messageOf } from './client';
import { useUi } from './ui';

type MarkTarget = ParamsOf<'attention.markRead'>;

interface AttentionState {
  list: AttentionList | null;
  error: string | null;
  /** Unread count by `kind:id`. */
  marks: ReadonlyMap<string, number>;
  notifications: NotificationState;
  /** Which kinds and connections notify (notifications.get); null until read. */
  prefs: NotificationPrefs | null;
  load: () => Promise<void>;
  /** Turns notifications of kinds or connections off or on (notifications.set). */
  setPrefs: (change: ParamsOf<'notifications.set'>) => Promise<void>;
  /** The person has read it (the page shows it, in view). */
  markRead: (target: MarkTarget) => Promise<void>;
  /** Asks the browser for permission to notify; from a click. */
  enableNotifications: () => Promise<void>;
}

/** Opens the view where the item's object is shown, with its agent conversations open. */
export function openItem(item: Pick<AttentionItem, 'object' | 'root'>): void {
  const place = placeOf(item);
  useUi.getState().navigate(place.view);
  if (place.expand.length > 0) useUi.getState().openThreads(place.expand);
}

/** Opens an object by itself (a desktop notification's click): an agent conversation's root is looked up. */
export async function openObject(object: AttentionObject): Promise<void> {
  const known = useAttention
    .getState()
    .list?.items.find((item) => item.object.kind === object.kind && item.object.id === object.id);
  if (known || object.kind !== 'thread') return openItem(known ?? { object, root: null });
  try {
    const { thread } = await call('threads.get', { id: object.id, textsLimit: 0 });
    openItem({ object, root: thread.root });
  } catch (error) {
    useUi.getState().toast(messageOf(error), 'error');
  }
}

const notifier = new BrowserNotifier(openItem, () => useAttention.getState().prefs);
const inFlight = new Set<string>();
let loading: Promise<void> | null = null;
let again = false;

export const useAttention = create<AttentionState>()((set, get) => ({
  list: null,
  error: null,
  marks: new Map(),
  notifications: notificationState(),
  prefs: null,

  load() {
    // One read at a time; a change meanwhile reads once more after it.
    if (loading) {
      again = true;
      return loading;
    }
    loading = (async () => {
      do {
        again = false;
        try {
          const [list, prefs] = await Promise.all([call('attention.list', {}), call('notifications.get', {})]);
          set({ list, prefs, marks: indexMarks(list.marks), error: null });
          notifier.update(list.items);
        } catch (error) {
          set({ error: messageOf(error) });
        }
      } while (again);
    })().finally(() => {
      loading = null;
    });
    return loading;
  },

  async markRead(target) {
    const key = 'id' in target ? `${target.kind}:${target.id}` : target.kind;
    if (inFlight.has(key)) return;
    inFlight.add(key);
    try {
      await call('attention.markRead', target);
      await get().load();
    } catch (error) {
      // It was deleted meanwhile, or is no longer ours to read: nothing left to mark.
      if (!isNotFound(error)) useUi.getState().toast(messageOf(error), 'error');
    } finally {
      inFlight.delete(key);
    }
  },

  async setPrefs(change) {
    set({ prefs: await call('notifications.set', change) });
  },

  async enableNotifications() {
    set({ notifications: await askForNotifications() });
  },
}));

export const selectAttention = (s: AttentionState) => s.list;
export const selectWaitingCount = (s: AttentionState) => s.list?.total ?? 0;
export const selectUnread = (object: AttentionObject) => (s: AttentionState) =>
  unreadOf(object, s.marks, s.list?.items ?? []);
/** The first unread message (or task log entry) of a conversation (or task), while any is unread. */
export const selectFirstUnread = (object: { kind: 'conversation' | 'task'; id: number }) => (s: AttentionState) =>
  s.list?.marks.find((mark) => mark.object.kind === object.kind && mark.object.id === object.id)?.firstContent;
