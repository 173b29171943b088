// The Electron entry. It stays thin: one instance per data folder, open the
// installation (engine + store, main/installation.ts), show one window and wire it to
// the installation over IPC. Everything else lives outside main/app/.
//
// Options (mostly for tests and running two installations side by side):
//   --data=DIR   data folder instead of the platform's user-data folder (or PARLEY_DATA)
//   --name=NAME  the installation's display name when it is first created (or PARLEY_NAME)
import { app, dialog, session, type BrowserWindow } from 'electron';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { openInstallation, type Installation } from '../installation';
import { log } from '../log';
import { wireIpc } from './ipc';
import { InvitationLinks } from './links';
import { installMenu } from './menu';
import { notifyAnswers } from './notifications';
import { createMainWindow, hardenSession, rendererUrl, type WindowPaths } from './window';

const dataOverride = app.commandLine.getSwitchValue('data') || process.env.PARLEY_DATA || '';
if (dataOverride) app.setPath('userData', path.resolve(dataOverride));
const name = app.commandLine.getSwitchValue('name') || process.env.PARLEY_NAME || undefined;

// The app's root is where package.json sits (the repo, or app.asar when packaged).
const paths: WindowPaths = {
  indexHtml: path.join(app.getAppPath(), 'dist', 'renderer', 'index.html'),
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
let closing = false;
/** A parley:// link that arrived before the installation was open. */
let pendingLink: string | null = null;
/** Invitation links waiting for the window's page to offer them in the accept dialog. */
const links = new InvitationLinks();

function showWindow(): void {
  if (!installation) return;
  if (win && !win.isDestroyed()) {
    if (win.isMinimized()) win.restore();
    win.focus();
    return;
  }
  const current = createMainWindow(paths);
  win = current;
  links.attach(current);
  unwire = wireIpc(installation, current, rendererUrl(paths), {
    onRendererListening: () => links.rendererListening(),
  });
  current.on('closed', () => {
    unwire?.();
    unwire = null;
    if (win === current) win = null;
  });
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

async function start(): Promise<void> {
  await app.whenReady();
  hardenSession(session.defaultSession);
  installMenu();
  try {
    installation = await openInstallation({ dataDir: app.getPath('userData'), name, nativeBinding: electronSqlite() });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log.error('could not open the installation', { dataDir: app.getPath('userData'), error: message });
    dialog.showErrorBox('Parley could not start', `${message}\n\nData folder: ${app.getPath('userData')}`);
    app.exit(1);
    return;
  }
  log.info('installation open', { dataDir: installation.dataDir, name: installation.name });
  notifyAnswers(installation, () => win);
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
