// The one application window and the hardening around it: an isolated, sandboxed
// renderer that can load only our own file:// page, cannot navigate or open windows,
// and is granted no permission but writing to the clipboard.
import { BrowserWindow, nativeTheme, shell, type Session } from 'electron';
import { pathToFileURL } from 'node:url';

/** What the packaged page may load: only its own files, no eval, no remote code. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export interface WindowPaths {
  /** dist/renderer/index.html */
  indexHtml: string;
  /** dist/electron/preload.cjs */
  preload: string;
}

/** The renderer page's URL without fragment or query, to compare frames against. */
export function rendererUrl(paths: WindowPaths): string {
  return pathToFileURL(paths.indexHtml).href;
}

export function isRendererUrl(url: string, expected: string): boolean {
  try {
    const parsed = new URL(url);
    parsed.hash = '';
    parsed.search = '';
    return parsed.protocol === 'file:' && parsed.href === expected;
  } catch {
    return false;
  }
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

/** Session-wide protections; call once, before the first window. */
export function hardenSession(session: Session): void {
  session.setPermissionRequestHandler((_webContents, permission, callback) =>
    callback(ALLOWED_PERMISSIONS.has(permission)),
  );
  session.setPermissionCheckHandler((_webContents, permission) => ALLOWED_PERMISSIONS.has(permission));
  session.webRequest.onHeadersReceived((details, callback) => {
    callback({
      responseHeaders: {
        ...details.responseHeaders,
        'Content-Security-Policy': [CONTENT_SECURITY_POLICY],
      },
    });
  });
}

export function createMainWindow(paths: WindowPaths): BrowserWindow {
  const win = new BrowserWindow({
    width: 1280,
    height: 800,
    minWidth: 720,
    minHeight: 480,
    title: 'Parley',
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

  win.once('ready-to-show', () => win.show());
  void win.loadFile(paths.indexHtml);
  return win;
}
