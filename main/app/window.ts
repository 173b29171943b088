// The one application window and the hardening around it: an isolated, sandboxed
// renderer that shows only our page from app://parley/ (./page-protocol.ts), cannot
// navigate or open windows, and is granted no permission but writing to the clipboard.
import { BrowserWindow, nativeTheme, protocol, shell, type Session } from 'electron';
import { titleWithCount, WINDOW_TITLE } from '../../shared/attention';
import { PAGE_SCHEME, PAGE_URL, pageHandler } from './page-protocol';

export interface WindowPaths {
  /** dist/renderer/ */
  rendererDir: string;
  /** dist/electron/preload.cjs */
  preload: string;
}

/**
 * app:// is a standard, secure scheme: the page has an origin of its own (so 'self' in
 * its CSP means its own files) and counts as a secure context. Call before app is ready.
 */
export function registerPageScheme(): void {
  protocol.registerSchemesAsPrivileged([
    { scheme: PAGE_SCHEME, privileges: { standard: true, secure: true, codeCache: true } },
  ]);
}

function openInBrowser(url: string): void {
  try {
    const { protocol } = new URL(url);
    if (protocol === 'https:' || protocol === 'http:') void shell.openExternal(url);
  } catch {
    // not a URL: ignore
  }
}

/** The one permission the page gets: writing to the clipboard (the Copy buttons for codes and tokens). */
const ALLOWED_PERMISSIONS = new Set(['clipboard-sanitized-write']);

/** Session-wide protections and the page's protocol; call once, after ready and before the first window. */
export function hardenSession(session: Session, paths: WindowPaths): void {
  session.setPermissionRequestHandler((_webContents, permission, callback) =>
    callback(ALLOWED_PERMISSIONS.has(permission)),
  );
  session.setPermissionCheckHandler((_webContents, permission) => ALLOWED_PERMISSIONS.has(permission));
  session.protocol.handle(PAGE_SCHEME, pageHandler(paths.rendererDir));
}

export { titleWithCount, WINDOW_TITLE };

export function createMainWindow(paths: WindowPaths): BrowserWindow {
  const win = new BrowserWindow({
    width: 1280,
    height: 800,
    minWidth: 720,
    minHeight: 480,
    title: WINDOW_TITLE,
    show: false,
    // The page's own background (renderer/styles.css), so no flash while it loads.
    backgroundColor: nativeTheme.shouldUseDarkColors ? '#101217' : '#f5f6f8',
    webPreferences: {
      preload: paths.preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: true,
    },
  });

  const { webContents } = win;
  // The page never navigates: links to the web open in the system browser.
  webContents.on('will-navigate', (event, url) => {
    event.preventDefault();
    openInBrowser(url);
  });
  webContents.on('will-redirect', (event) => event.preventDefault());
  webContents.on('will-attach-webview', (event) => event.preventDefault());
  webContents.setWindowOpenHandler(({ url }) => {
    openInBrowser(url);
    return { action: 'deny' };
  });
  // The title is ours (it carries the unread count), not the page's <title>.
  win.on('page-title-updated', (event) => event.preventDefault());

  win.once('ready-to-show', () => win.show());
  void win.loadURL(PAGE_URL);
  return win;
}
