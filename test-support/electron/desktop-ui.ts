// The stand-in's menus, notifications, dialogs, shell and theme. What it fakes: nothing
// is drawn or opened — menus are kept as built, notifications and error boxes are
// recorded and reported to the test, and shell.openExternal only notes the URL.
import { EventEmitter } from 'node:events';
import { preventable, push, records } from './state';

export interface MenuItemOptions {
  role?: string;
  label?: string;
  accelerator?: string;
  type?: string;
  click?: (...args: unknown[]) => void;
  submenu?: MenuItemOptions[] | Menu;
  [key: string]: unknown;
}

export class Menu {
  private static current: Menu | null = null;
  static buildFromTemplate(template: MenuItemOptions[]): Menu {
    return new Menu(template);
  }
  static setApplicationMenu(menu: Menu | null): void {
    Menu.current = menu;
  }
  static getApplicationMenu(): Menu | null {
    return Menu.current;
  }
  constructor(readonly items: MenuItemOptions[] = []) {}
}

/**
 * Kept as made: every option the app gave (so a test can see it says no more than it
 * should), whether it was shown, clicked or closed.
 */
export class Notification extends EventEmitter {
  static isSupported(): boolean {
    return true;
  }
  private readonly index: number;
  constructor(readonly options: { title?: string; body?: string; [option: string]: unknown } = {}) {
    super();
    this.index = records.notifications.length;
    records.notifications.push({
      title: options.title ?? '',
      body: options.body ?? '',
      options: JSON.parse(JSON.stringify(options)) as Record<string, unknown>,
      shown: false,
      clicked: false,
      closed: false,
    });
    shownNotifications.set(this.index, this);
  }
  show(): void {
    const record = records.notifications[this.index]!;
    record.shown = true;
    this.emit('show');
    push({ push: 'notification', index: this.index, title: record.title, body: record.body, options: record.options });
  }
  /** What a click on it does: Electron emits 'click' on the notification. */
  click(): void {
    records.notifications[this.index]!.clicked = true;
    this.emit('click', preventable());
  }
  close(): void {
    records.notifications[this.index]!.closed = true;
    this.emit('close', preventable());
  }
}

export const shownNotifications = new Map<number, Notification>();

export const dialog = {
  showErrorBox(title: string, content: string): void {
    records.errorBoxes.push({ title, content });
    process.stderr.write(`[error box] ${title}: ${content}\n`);
    push({ push: 'error-box', title, content });
  },
  showMessageBox(): Promise<{ response: number; checkboxChecked: boolean }> {
    return Promise.resolve({ response: 0, checkboxChecked: false });
  },
};

export const shell = {
  openExternal(url: string): Promise<void> {
    records.openedExternally.push(url);
    return Promise.resolve();
  },
};

class NativeTheme extends EventEmitter {
  shouldUseDarkColors = false;
  themeSource: 'system' | 'light' | 'dark' = 'system';
}
export const nativeTheme = new NativeTheme();
