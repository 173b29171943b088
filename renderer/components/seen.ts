// Reading is seeing: an object shown while the page is in view counts as read, and is
// marked so (attention.markRead) whenever something unread is in it — when it opens, and
// again when more arrives while it is open. A page in a hidden tab marks nothing.
import { useEffect, useSyncExternalStore } from 'react';
import type { AttentionObject } from '../../shared/attention';
import { selectUnread, useAttention } from '../state/attention';

const subscribeVisibility = (onChange: () => void) => {
  document.addEventListener('visibilitychange', onChange);
  return () => document.removeEventListener('visibilitychange', onChange);
};

/** Whether the page is in view (its tab shown, its window not minimised). */
export function usePageVisible(): boolean {
  return useSyncExternalStore(
    subscribeVisibility,
    () => document.visibilityState === 'visible',
    () => true,
  );
}

/** Marks `object` read while it is shown and the page is in view; null marks nothing. */
export function useMarkSeen(object: AttentionObject | null): void {
  const kind = object?.kind;
  const id = object?.id;
  const unread = useAttention(selectUnread(object ?? { kind: 'conversation', id: 0 }));
  const visible = usePageVisible();
  useEffect(() => {
    if (kind === undefined || id === undefined || unread === 0 || !visible) return;
    void useAttention.getState().markRead({ kind, id });
  }, [kind, id, unread, visible]);
}
