// The browser's notifications of what waits on the person, in the page `parley serve`
// serves (the desktop app shows its own, from main). Permission is asked for when the
// person clicks for it, never on load; a notification shows only while the tab is
// hidden, and names the peer and the roles only (shared/attention.ts says what).
import {
  freshItems,
  notificationFor,
  wantsNotification,
  type AttentionItem,
  type NotificationPrefs,
} from '../shared/attention';

export type NotificationState = 'unsupported' | 'default' | 'granted' | 'denied';

/** In the desktop app the page has a preload bridge, and main notifies. */
const inDesktopApp = () => typeof window !== 'undefined' && 'parley' in window;

export function notificationState(): NotificationState {
  if (inDesktopApp() || typeof Notification === 'undefined') return 'unsupported';
  return Notification.permission;
}

/** Asks the browser for permission: call it from the person's click. */
export async function askForNotifications(): Promise<NotificationState> {
  if (notificationState() === 'unsupported') return 'unsupported';
  return Notification.requestPermission();
}

/** At most this many notifications for one change; the list has the rest. */
const AT_ONCE = 3;

export class BrowserNotifier {
  private readonly notified = new Map<string, string>();
  private started = false;

  constructor(
    private readonly open: (item: AttentionItem) => void,
    /** The person's preferences (notifications.get), null until read: then everything notifies. */
    private readonly prefs: () => NotificationPrefs | null = () => null,
  ) {}

  /** The list as it is now: what is news since the last one shows, if the tab is hidden. */
  update(items: readonly AttentionItem[]): void {
    const prefs = this.prefs();
    const fresh = freshItems(this.notified, items).filter((item) => wantsNotification(prefs, item));
    // What waited when the page loaded is not news.
    const first = !this.started;
    this.started = true;
    if (first || fresh.length === 0) return;
    if (document.visibilityState !== 'hidden' || notificationState() !== 'granted') return;
    for (const item of fresh.slice(0, AT_ONCE)) {
      const { title, body } = notificationFor(item);
      const notification = new Notification(title, { body, tag: item.key });
      notification.onclick = () => {
        window.focus();
        this.open(item);
        notification.close();
      };
    }
  }
}
