// The unread count on the dock (macOS) or launcher (Linux desktops that show badges)
// and in the window title, following a CountSource.
import { app, type BrowserWindow } from 'electron';
import type { CountSource } from './unread-count';
import { titleWithCount } from './window';

/** Shows the count now and on every change; returns a function that stops following it. */
export function showCount(source: CountSource, window: () => BrowserWindow | null): () => void {
  const apply = (count: number) => {
    app.setBadgeCount(count);
    const win = window();
    if (win && !win.isDestroyed()) win.setTitle(titleWithCount(count));
  };
  apply(source.count);
  return source.subscribe(apply);
}
