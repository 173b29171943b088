// The stand-in's BrowserWindow and its webContents. What it fakes: no renderer runs —
// the test is the page (it calls the IPC handlers with the window's webContents and
// frame as the sender), so neither the preload nor React is executed here. Loading a
// URL does go through the app's own protocol handler, so a page that would not load
// (or would come without its headers) fails here as it would in Electron.
import { EventEmitter } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { app } from './app';
import { protocolHandler } from './session';
import { preventable, push } from './state';

export class WebFrame {
  constructor(public url = '') {}
}

type WindowOpenHandler = (details: { url: string; frameName: string; features: string; disposition: string }) => {
  action: 'allow' | 'deny';
};

let nextId = 1;
const windows = new Map<number, BrowserWindow>();

export interface LoadedPage {
  url: string;
  status: number;
  headers: Record<string, string>;
}

export class WebContents extends EventEmitter {
  readonly id: number;
  readonly mainFrame = new WebFrame();
  windowOpenHandler: WindowOpenHandler | null = null;
  loaded: LoadedPage | null = null;
  private destroyed = false;

  constructor(
    readonly owner: BrowserWindow,
    readonly webPreferences: Record<string, unknown>,
  ) {
    super();
    this.id = owner.id;
  }

  getURL(): string {
    return this.mainFrame.url;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  markDestroyed(): void {
    this.destroyed = true;
    this.emit('destroyed');
  }
  isLoading(): boolean {
    return false;
  }

  setWindowOpenHandler(handler: WindowOpenHandler): void {
    this.windowOpenHandler = handler;
  }

  send(channel: string, ...args: unknown[]): void {
    if (this.destroyed) throw new Error('Object has been destroyed');
    // Electron copies arguments with the structured clone algorithm; JSON is close enough for app events.
    push({ push: 'renderer', windowId: this.id, channel, args: JSON.parse(JSON.stringify(args)) as unknown[] });
  }

  async loadURL(url: string): Promise<void> {
    this.emit('did-start-loading');
    const response = await fetchThroughApp(url);
    if (!response || !response.ok) {
      this.emit('did-fail-load', preventable(), -6, 'ERR_FILE_NOT_FOUND', url, true);
      throw new Error(`ERR_FILE_NOT_FOUND (-6) loading '${url}'`);
    }
    const html = await response.text();
    this.loaded = { url, status: response.status, headers: Object.fromEntries(response.headers.entries()) };
    this.mainFrame.url = url;
    this.emit('dom-ready');
    const title = /<title>([^<]*)<\/title>/i.exec(html)?.[1];
    if (title !== undefined) this.owner.pageTitleUpdated(title);
    this.emit('did-finish-load');
    this.owner.emit('ready-to-show');
    push({ push: 'window-loaded', windowId: this.id, url });
  }

  loadFile(file: string): Promise<void> {
    return this.loadURL(pathToFileURL(file).href);
  }
}

/** A URL as the window would get it: through a registered scheme handler, or from disk for file://. */
export async function fetchThroughApp(url: string): Promise<Response | null> {
  const scheme = new URL(url).protocol.slice(0, -1);
  const handler = protocolHandler(scheme);
  if (handler) return handler(new Request(url));
  if (scheme === 'file') {
    const file = fileURLToPath(url);
    return existsSync(file) ? new Response(readFileSync(file)) : new Response(null, { status: 404 });
  }
  return null; // no network in the stand-in
}

export class BrowserWindow extends EventEmitter {
  static getAllWindows(): BrowserWindow[] {
    return [...windows.values()];
  }
  static getFocusedWindow(): BrowserWindow | null {
    return [...windows.values()].find((w) => w.focused) ?? null;
  }
  static fromId(id: number): BrowserWindow | null {
    return windows.get(id) ?? null;
  }

  readonly id = nextId++;
  readonly webContents: WebContents;
  readonly options: Record<string, unknown>;
  private title: string;
  private visible: boolean;
  focused = false;
  private minimized = false;
  private destroyed = false;

  constructor(options: Record<string, unknown> = {}) {
    super();
    if (!app.isReady()) throw new Error('Cannot create BrowserWindow before app is ready');
    this.options = options;
    this.title = typeof options.title === 'string' ? options.title : app.getName();
    this.visible = options.show !== false;
    this.webContents = new WebContents(this, (options.webPreferences as Record<string, unknown>) ?? {});
    windows.set(this.id, this);
    app.emit('web-contents-created', preventable(), this.webContents);
  }

  loadURL(url: string): Promise<void> {
    return this.webContents.loadURL(url);
  }
  loadFile(file: string): Promise<void> {
    return this.webContents.loadFile(file);
  }

  /** The page set its <title>: Electron takes it for the window unless a listener prevents it. */
  pageTitleUpdated(title: string): void {
    const event = preventable();
    this.emit('page-title-updated', event, title, true);
    if (!event.defaultPrevented) this.setTitle(title);
  }
  setTitle(title: string): void {
    this.title = title;
    push({ push: 'title', windowId: this.id, title });
  }
  getTitle(): string {
    return this.title;
  }

  /** Electron's show() also gives the window focus. */
  show(): void {
    this.visible = true;
    this.emit('show');
    this.focus();
  }
  hide(): void {
    this.visible = false;
    this.blur();
    this.emit('hide');
  }
  isVisible(): boolean {
    return this.visible;
  }
  focus(): void {
    if (this.focused) return;
    this.focused = true;
    this.minimized = false;
    this.emit('focus');
  }
  blur(): void {
    if (!this.focused) return;
    this.focused = false;
    this.emit('blur');
  }
  isFocused(): boolean {
    return this.focused;
  }
  minimize(): void {
    this.minimized = true;
    this.blur();
  }
  isMinimized(): boolean {
    return this.minimized;
  }
  restore(): void {
    this.minimized = false;
  }
  flashFrame(_flag: boolean): void {}
  isDestroyed(): boolean {
    return this.destroyed;
  }

  /** 'close' can be prevented; then 'closed', and 'window-all-closed' when it was the last one (outside quit). */
  close(): void {
    if (this.destroyed) return;
    const event = preventable();
    this.emit('close', event);
    if (event.defaultPrevented) return;
    this.destroy();
  }
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.focused = false;
    windows.delete(this.id);
    this.emit('closed');
    this.webContents.markDestroyed();
    if (windows.size === 0 && !app.isQuitting) {
      if (app.listenerCount('window-all-closed') > 0) app.emit('window-all-closed');
      else app.quit();
    }
  }
}

app.windows = {
  closeAll() {
    for (const win of [...windows.values()]) win.close();
    return windows.size === 0;
  },
};
