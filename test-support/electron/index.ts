// A stand-in for the `electron` module, so that the built desktop main process
// (dist/electron/main.js) runs under plain Node where Electron's binary cannot be had.
// ./hooks.ts resolves `electron` here for a process started with
// `node --import dist/testing/electron/register.js dist/electron/main.js`.
//
// It implements what the app uses, with Electron's documented behaviour where a test
// could notice (event order, preventable events, which calls need the app ready), and
// says in each file what it fakes. A test drives it through ./control.ts.
import { app } from './app';
import { startControl } from './control';
import { dialog, Menu, nativeTheme, Notification, shell } from './desktop-ui';
import { ipcMain } from './ipc-main';
import { safeStorage } from './safe-storage';
import { protocol, session } from './session';
import { BrowserWindow } from './windows';

startControl();

export { app, BrowserWindow, dialog, ipcMain, Menu, nativeTheme, Notification, protocol, safeStorage, session, shell };

export default {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  nativeTheme,
  Notification,
  protocol,
  safeStorage,
  session,
  shell,
};
