// parley:// invitation links opened from the system (a click in a mail, `open-url` on
// macOS, a second instance's argv on Windows and Linux). The window's renderer offers
// each one in the accept dialog: it gets `{type: 'invitation', link}` on the event
// channel once it listens for events, so a link that arrives while the window loads
// is held until then.
import type { BrowserWindow } from 'electron';
import type { InvitationLinkEvent } from '../../shared/api-contract';
import { sendToRenderer } from './ipc';

const MAX_LINK_LENGTH = 4000;

/** Whether a string looks like an invitation link worth showing (main still checks it on accept). */
export function isInvitationLink(value: string): boolean {
  return value.length <= MAX_LINK_LENGTH && /^parley:\/\/[^\s]+$/i.test(value);
}

export class InvitationLinks {
  private pending: string[] = [];
  private win: BrowserWindow | null = null;
  private listening = false;

  /** A new window: nothing is delivered until its renderer listens. */
  attach(win: BrowserWindow): void {
    this.win = win;
    this.listening = false;
    // A reload drops the renderer's listeners; it says so again when it listens.
    win.webContents.on('did-start-loading', () => {
      if (this.win === win) this.listening = false;
    });
    win.on('closed', () => {
      if (this.win === win) {
        this.win = null;
        this.listening = false;
      }
    });
  }

  /** The renderer subscribed to events. */
  rendererListening(): void {
    this.listening = true;
    this.flush();
  }

  /** Returns false for something that is not an invitation link. */
  open(link: string): boolean {
    if (!isInvitationLink(link)) return false;
    this.pending = [...this.pending.filter((l) => l !== link), link].slice(-5);
    this.flush();
    return true;
  }

  private flush(): void {
    const win = this.win;
    if (!this.listening || !win || win.isDestroyed()) return;
    for (const link of this.pending) {
      const event: InvitationLinkEvent = { type: 'invitation', link };
      sendToRenderer(win, event);
    }
    this.pending = [];
  }
}
