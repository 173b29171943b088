// System notifications of what waits on the owner (main/attention/) while the window is
// not in front: each new item, or one that gained something, once, unless the owner
// turned its kind or its connection off (notifications.set). A notification names
// the peer and the roles only (shared/attention.ts says what it says), never a text. A
// click brings the window forward and asks its page to open what it was about.
import { Notification, type BrowserWindow } from 'electron';
import { freshItems, notificationFor, wantsNotification, type AttentionObject } from '../../shared/attention';
import { notificationPrefsOf } from '../api/remember-handlers';
import type { Installation } from '../installation';

/** At most this many notifications for one change; the list has the rest. */
const AT_ONCE = 3;

/** Starts showing; returns a function that stops it. */
export function showNotifications(
  installation: Installation,
  window: () => BrowserWindow | null,
  open: (object: AttentionObject) => void,
): () => void {
  if (!Notification.isSupported()) return () => undefined;
  const owner = installation.owner();
  const notified = new Map<string, string>();
  // What waits already at start is not news.
  freshItems(notified, installation.attention.list(owner, 500).items);
  return installation.subscribe({ person: owner }, (event) => {
    if (event.type !== 'changed' || event.kind !== 'attention') return;
    // What the owner turned off in Settings is still news (it is marked as notified), only silent.
    const prefs = notificationPrefsOf(installation.db, owner.id);
    const fresh = freshItems(notified, installation.attention.list(owner, 500).items).filter((item) =>
      wantsNotification(prefs, item),
    );
    const win = window();
    if (fresh.length === 0 || (win && !win.isDestroyed() && win.isFocused())) return;
    for (const item of fresh.slice(0, AT_ONCE)) {
      const notification = new Notification(notificationFor(item));
      notification.on('click', () => open(item.object));
      notification.show();
    }
  });
}
