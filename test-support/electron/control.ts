// The stand-in's side of the test's channel: each request does what a person, the
// operating system or the window's page would do (call the IPC handler as the page,
// ask for a permission, click a notification, open a link, quit) and answers with what
// the app did. Only present when the test spawned the process with an IPC channel.
import { app } from './app';
import type {
  ControlCall,
  ControlReply,
  ControlRequest,
  FetchResult,
  MenuItemSnapshot,
  StandInSnapshot,
} from './control-protocol';
import { Menu, shownNotifications, type MenuItemOptions } from './desktop-ui';
import { ipcMain } from './ipc-main';
import { handledSchemes, privilegedSchemes, standInSession } from './session';
import { preventable, records } from './state';
import { BrowserWindow, fetchThroughApp, WebFrame } from './windows';

function windowOf(id: number): BrowserWindow {
  const win = BrowserWindow.fromId(id);
  if (!win) throw new Error(`no window ${id}`);
  return win;
}

/** The IPC event Electron hands main for a message from `frame` of the window's page. */
function senderEvent(win: BrowserWindow, frame: 'main' | 'subframe') {
  const senderFrame = frame === 'main' ? win.webContents.mainFrame : new WebFrame(win.webContents.mainFrame.url);
  return { sender: win.webContents, senderFrame, processId: 1, frameId: frame === 'main' ? 1 : 2 };
}

function snapshotMenu(items: MenuItemOptions[]): MenuItemSnapshot[] {
  return items.map((item) => {
    const submenu = item.submenu instanceof Menu ? item.submenu.items : item.submenu;
    return {
      ...(item.role !== undefined && { role: item.role }),
      ...(item.label !== undefined && { label: item.label }),
      ...(item.accelerator !== undefined && { accelerator: item.accelerator }),
      ...(item.type !== undefined && { type: item.type }),
      clickable: typeof item.click === 'function',
      ...(submenu && { submenu: snapshotMenu(submenu) }),
    };
  });
}

function snapshot(): StandInSnapshot {
  const session = standInSession();
  return {
    ready: app.isReady(),
    windows: BrowserWindow.getAllWindows().map((win) => ({
      id: win.id,
      title: win.getTitle(),
      url: win.webContents.getURL(),
      visible: win.isVisible(),
      focused: win.isFocused(),
      destroyed: win.isDestroyed(),
      options: JSON.parse(JSON.stringify(win.options)) as Record<string, unknown>,
      hasWindowOpenHandler: win.webContents.windowOpenHandler !== null,
      listeners: Object.fromEntries(
        ['will-navigate', 'will-redirect', 'will-attach-webview', 'did-start-loading'].map((name) => [
          name,
          win.webContents.listenerCount(name),
        ]),
      ),
    })),
    session: {
      permissionRequestHandler: session.permissionRequestHandler !== null,
      permissionCheckHandler: session.permissionCheckHandler !== null,
      headerListeners: session.headerListeners.length,
    },
    privilegedSchemes: privilegedSchemes.map((s) => ({ scheme: s.scheme, privileges: s.privileges ?? {} })),
    handledSchemes: handledSchemes(),
    menu: Menu.getApplicationMenu() ? snapshotMenu(Menu.getApplicationMenu()!.items) : null,
    badgeCount: records.badgeCount,
    notifications: records.notifications,
    errorBoxes: records.errorBoxes,
    openedExternally: records.openedExternally,
    defaultProtocolClients: records.defaultProtocolClients,
    singleInstanceLock: app.hasSingleInstanceLock(),
    ipcHandlers: ipcMain.channels(),
  };
}

function findMenuItem(items: MenuItemOptions[], path: string[]): MenuItemOptions {
  const [head, ...rest] = path;
  const item = items.find((i) => i.label === head || i.role === head);
  if (!item) throw new Error(`no menu item "${head}"`);
  if (rest.length === 0) return item;
  const submenu = item.submenu instanceof Menu ? item.submenu.items : (item.submenu ?? []);
  return findMenuItem(submenu, rest);
}

async function handle(request: ControlRequest): Promise<unknown> {
  switch (request.op) {
    case 'invoke': {
      const win = windowOf(request.windowId);
      const event = senderEvent(win, request.frame);
      return ipcMain.invoke(request.channel, event, request.args);
    }
    case 'send': {
      const win = windowOf(request.windowId);
      ipcMain.emit(request.channel, senderEvent(win, request.frame), ...request.args);
      return null;
    }
    case 'inspect':
      return snapshot();
    case 'permission': {
      const session = standInSession();
      const contents = BrowserWindow.getAllWindows()[0]?.webContents ?? null;
      return request.check === 'request'
        ? session.request(contents, request.permission)
        : session.check(contents, request.permission, contents?.getURL() ?? '');
    }
    case 'navigate': {
      const win = windowOf(request.windowId);
      const event = preventable({ url: request.url, isMainFrame: true, frame: win.webContents.mainFrame });
      const opened = records.openedExternally.length;
      win.webContents.emit(request.event, event, request.url);
      return { prevented: event.defaultPrevented, openedExternally: records.openedExternally.slice(opened) };
    }
    case 'open-window': {
      const win = windowOf(request.windowId);
      const opened = records.openedExternally.length;
      const handler = win.webContents.windowOpenHandler;
      const result = handler
        ? handler({ url: request.url, frameName: '', features: '', disposition: 'new-window' })
        : { action: 'allow' as const };
      return { action: result.action, openedExternally: records.openedExternally.slice(opened) };
    }
    case 'fetch': {
      const response = await fetchThroughApp(request.url);
      if (!response) throw new Error(`nothing handles ${request.url}`);
      const result: FetchResult = {
        status: response.status,
        headers: Object.fromEntries(response.headers.entries()),
        base64: Buffer.from(await response.arrayBuffer()).toString('base64'),
      };
      return result;
    }
    case 'app-event':
      app.emit('open-url', preventable(), request.url);
      return null;
    case 'focus': {
      const win = windowOf(request.windowId);
      if (request.focused) win.focus();
      else win.blur();
      return null;
    }
    case 'close-window':
      windowOf(request.windowId).close();
      return null;
    case 'click-notification': {
      const notification = shownNotifications.get(request.index);
      if (!notification) throw new Error(`no notification ${request.index}`);
      notification.click();
      return null;
    }
    case 'menu-click': {
      const menu = Menu.getApplicationMenu();
      if (!menu) throw new Error('no application menu');
      const item = findMenuItem(menu.items, request.path);
      if (typeof item.click !== 'function') throw new Error(`menu item "${request.path.join(' > ')}" has no click`);
      item.click(item, BrowserWindow.getFocusedWindow() ?? undefined, {});
      return null;
    }
    case 'quit':
      // Answered first: the process may end inside quit().
      setImmediate(() => app.quit());
      return null;
  }
}

export function startControl(): void {
  if (!process.send) return;
  process.on('message', (message: ControlCall) => {
    const reply = (answer: ControlReply) => {
      if (process.connected) process.send!(answer);
    };
    handle(message.request).then(
      (result) => reply({ id: message.id, ok: true, result: result ?? null }),
      (error: unknown) =>
        reply({ id: message.id, ok: false, error: error instanceof Error ? error.message : String(error) }),
    );
  });
  // The test went away: quit as if the person had.
  process.on('disconnect', () => app.quit());
}
