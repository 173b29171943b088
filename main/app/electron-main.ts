// The Electron entry. It stays thin: one instance per data folder, the installation
// opened through the same composition as `parley serve` (main/installation.ts, with the
// peer settings remembered in its database), one window wired to it over IPC, and what
// only a desktop app has: the app:// page protocol, the menu, system notifications,
// the badge, parley:// links, and role secrets sealed with the OS keychain.
//
// Options (mostly for tests and running two installations side by side):
//   --data=DIR   data folder instead of the platform's user-data folder (or PARLEY_DATA)
//   --name=NAME  the installation's display name when it is first created (or PARLEY_NAME)
import { app, dialog, session, type BrowserWindow } from 'electron';
import { existsSync } from 'node:fs';
import type { AttentionObject } from '../../shared/attention';
import path from 'node:path';
import { openInstallation, type Installation } from '../installation';
import { log } from '../log';
import { showCount } from './badge';
import { sendToRenderer, wireIpc } from './ipc';
import { InvitationLinks } from './links';
import { installMenu } from './menu';
import { showNotifications } from './notifications';
import { PAGE_URL } from './page-protocol';
import { keychainSecretBox } from './secret-box';
import { AttentionCount } from './unread-count';
import { createMainWindow, hardenSession, registerPageScheme, titleWithCount, type WindowPaths } from './window';

// Before ready, as Electron requires.
registerPageScheme();

const dataOverride = app.commandLine.getSwitchValue('data') || process.env.PARLEY_DATA || '';
if (dataOverride) app.setPath('userData', path.resolve(dataOverride));
const name = app.commandLine.getSwitchValue('name') || process.env.PARLEY_NAME || undefined;

// The app's root is where package.json sits (the repo, or app.asar when packaged).
const paths: WindowPaths = {
  rendererDir: path.join(app.getAppPath(), 'dist', 'renderer'),
  preload: path.join(app.getAppPath(), 'dist', 'electron', 'preload.cjs'),
};

/** In development the SQLite addon built for Electron by scripts/electron-native.mjs; packaged apps bring their own. */
function electronSqlite(): string | undefined {
  if (app.isPackaged) return undefined;
  const built = path.join(
    app.getAppPath(),
    '.electron-native',
    'node_modules',
    'better-sqlite3',
    'build',
    'Release',
    'better_sqlite3.node',
  );
  return existsSync(built) ? built : undefined;
}

let installation: Installation | null = null;
let win: BrowserWindow | null = null;
let unwire: (() => void) | null = null;
let waiting: AttentionCount | null = null;
const stops: Array<() => void> = [];
let closing = false;
/** A parley:// link that arrived before the installation was open. */
let pendingLink: string | null = null;
/** Invitation links waiting for the window's page to offer them in the accept dialog. */
const links = new InvitationLinks();

function showWindow(): BrowserWindow | null {
  if (!installation) return null;
  if (win && !win.isDestroyed()) {
    if (win.isMinimized()) win.restore();
    win.focus();
    return win;
  }
  const current = createMainWindow(paths);
  win = current;
  current.setTitle(titleWithCount(waiting?.count ?? 0));
  links.attach(current);
  unwire = wireIpc(installation, current, PAGE_URL, {
    onRendererListening: () => links.rendererListening(),
  });
  current.on('closed', () => {
    unwire?.();
    unwire = null;
    if (win === current) win = null;
  });
  return current;
}

/** parley:// links (invitations) arrive here; the window offers them in its accept dialog. */
function handleLink(link: string): void {
  if (!installation) {
    pendingLink = link;
    return;
  }
  if (!links.open(link)) log.warn('ignored a parley link that is not an invitation', { length: link.length });
  showWindow();
}

function openSettings(): void {
  const current = showWindow();
  if (current) sendToRenderer(current, { type: 'show', view: 'settings' });
}

/** A notification was clicked: the window comes forward and its page opens what it was about. */
function openObject(object: AttentionObject): void {
  const current = showWindow();
  if (current) sendToRenderer(current, { type: 'open', object });
}

async function start(): Promise<void> {
  await app.whenReady();
  if (process.platform === 'win32') app.setAppUserModelId('app.parley.desktop');
  hardenSession(session.defaultSession, paths);
  installMenu({ openSettings });
  try {
    installation = await openInstallation({
      dataDir: app.getPath('userData'),
      name,
      nativeBinding: electronSqlite(),
      peers: { kind: 'remembered' },
      secrets: keychainSecretBox(),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log.error('could not open the installation', { dataDir: app.getPath('userData'), error: message });
    dialog.showErrorBox('Parley could not start', `${message}\n\nData folder: ${app.getPath('userData')}`);
    app.exit(1);
    return;
  }
  log.info('installation open', {
    dataDir: installation.dataDir,
    name: installation.name,
    peers: installation.network.status().listening,
  });
  waiting = new AttentionCount(installation, installation.owner());
  stops.push(
    showNotifications(installation, () => win, openObject),
    showCount(waiting, () => win),
  );
  showWindow();
  const link = pendingLink ?? process.argv.find((arg) => arg.startsWith('parley://'));
  pendingLink = null;
  if (link) handleLink(link);
}

if (!app.requestSingleInstanceLock()) {
  // Another Parley already uses this data folder: it gets focused by 'second-instance'.
  app.quit();
} else {
  if (app.isPackaged) app.setAsDefaultProtocolClient('parley');

  app.on('second-instance', (_event, argv) => {
    const link = argv.find((arg) => arg.startsWith('parley://'));
    if (link) handleLink(link);
    else showWindow();
  });
  app.on('open-url', (event, url) => {
    event.preventDefault();
    handleLink(url);
  });
  app.on('web-contents-created', (_event, contents) => {
    contents.on('will-attach-webview', (attach) => attach.preventDefault());
  });
  app.on('activate', () => showWindow());
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  app.on('will-quit', (event) => {
    // Close the store and stop agents before the process ends.
    if (closing || !installation) return;
    event.preventDefault();
    closing = true;
    const current = installation;
    for (const stop of stops.splice(0)) stop();
    waiting?.close();
    current
      .close()
      .catch((error: unknown) => log.error('closing the installation failed', { error: String(error) }))
      .finally(() => {
        installation = null;
        app.quit();
      });
  });

  start().catch((error: unknown) => {
    log.error('Parley failed to start', { error: error instanceof Error ? error.stack : String(error) });
    app.exit(1);
  });
}
