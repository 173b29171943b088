// System notifications for the owner's notices (main/notices.ts: a role answered in one
// of their conversations) while the window is not in front; a click brings it forward.
import { Notification, type BrowserWindow } from 'electron';
import type { Installation } from '../installation';

/** Starts showing; returns a function that stops it. */
export function showNotices(installation: Installation, window: () => BrowserWindow | null): () => void {
  if (!Notification.isSupported()) return () => undefined;
  return installation.subscribe({ person: installation.owner() }, (event) => {
    if (event.type !== 'notice') return;
    const win = window();
    if (win && !win.isDestroyed() && win.isFocused()) return;
    const notification = new Notification({ title: event.notice.title, body: event.notice.body });
    notification.on('click', () => {
      const current = window();
      if (current && !current.isDestroyed()) {
        if (current.isMinimized()) current.restore();
        current.focus();
      }
    });
    notification.show();
  });
}
