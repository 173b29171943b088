// The application menu: the standard roles, so the usual shortcuts (undo, copy, paste,
// select all, close, quit, zoom, full screen, minimise) work as on every other app of
// the platform, and Settings… where each platform puts it (the app menu on macOS, File
// elsewhere) on Cmd/Ctrl+,. Reload and developer tools only in unpackaged builds.
import { app, Menu, type MenuItemConstructorOptions } from 'electron';

export interface MenuActions {
  openSettings(): void;
}

export function menuTemplate(actions: MenuActions, platform = process.platform): MenuItemConstructorOptions[] {
  const isMac = platform === 'darwin';
  const settings: MenuItemConstructorOptions = {
    label: 'Settings…',
    accelerator: 'CmdOrCtrl+,',
    click: () => actions.openSettings(),
  };
  const view: MenuItemConstructorOptions[] = [
    { role: 'resetZoom' },
    { role: 'zoomIn' },
    { role: 'zoomOut' },
    { type: 'separator' },
    { role: 'togglefullscreen' },
  ];
  if (!app.isPackaged) view.unshift({ role: 'reload' }, { role: 'toggleDevTools' }, { type: 'separator' });

  const appMenu: MenuItemConstructorOptions = {
    label: app.getName(),
    submenu: [
      { role: 'about' },
      { type: 'separator' },
      settings,
      { type: 'separator' },
      { role: 'services' },
      { type: 'separator' },
      { role: 'hide' },
      { role: 'hideOthers' },
      { role: 'unhide' },
      { type: 'separator' },
      { role: 'quit' },
    ],
  };
  const file: MenuItemConstructorOptions = {
    label: 'File',
    submenu: isMac ? [{ role: 'close' }] : [settings, { type: 'separator' }, { role: 'close' }, { role: 'quit' }],
  };
  return [
    ...(isMac ? [appMenu] : []),
    file,
    { role: 'editMenu' },
    { label: 'View', submenu: view },
    { role: 'windowMenu' },
  ];
}

export function installMenu(actions: MenuActions): void {
  Menu.setApplicationMenu(Menu.buildFromTemplate(menuTemplate(actions)));
}
