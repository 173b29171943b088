// What a test and the stand-in `electron` module say to each other over the Node IPC
// channel of the desktop main process they run (test-support/desktop-process.ts is
// the test's side, ./control.ts the stand-in's). Types only.

/** Which frame of the window's page a call comes from: its main frame, or a frame inside it (to be refused). */
export type FrameChoice = 'main' | 'subframe';

export type ControlRequest =
  | { op: 'invoke'; windowId: number; frame: FrameChoice; channel: string; args: unknown[] }
  | { op: 'send'; windowId: number; frame: FrameChoice; channel: string; args: unknown[] }
  | { op: 'inspect' }
  | { op: 'permission'; check: 'request' | 'check'; permission: string }
  | { op: 'navigate'; windowId: number; event: 'will-navigate' | 'will-redirect'; url: string }
  | { op: 'open-window'; windowId: number; url: string }
  | { op: 'fetch'; url: string }
  | { op: 'app-event'; name: 'open-url'; url: string }
  | { op: 'focus'; windowId: number; focused: boolean }
  | { op: 'close-window'; windowId: number }
  | { op: 'click-notification'; index: number }
  | { op: 'menu-click'; path: string[] }
  | { op: 'quit' };

export interface ControlCall {
  id: number;
  request: ControlRequest;
}

export type ControlReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

/** Things the stand-in reports as they happen. */
export type ControlPush =
  | { push: 'window-loaded'; windowId: number; url: string }
  | { push: 'renderer'; windowId: number; channel: string; args: unknown[] }
  | { push: 'notification'; index: number; title: string; body: string; options: Record<string, unknown> }
  | { push: 'badge'; count: number }
  | { push: 'title'; windowId: number; title: string }
  | { push: 'error-box'; title: string; content: string };

export type ControlMessage = ControlReply | ControlPush;

export interface MenuItemSnapshot {
  role?: string;
  label?: string;
  accelerator?: string;
  type?: string;
  clickable: boolean;
  submenu?: MenuItemSnapshot[];
}

export interface WindowSnapshot {
  id: number;
  title: string;
  url: string;
  visible: boolean;
  focused: boolean;
  destroyed: boolean;
  options: Record<string, unknown>;
  hasWindowOpenHandler: boolean;
  listeners: Record<string, number>;
}

export interface StandInSnapshot {
  ready: boolean;
  windows: WindowSnapshot[];
  session: { permissionRequestHandler: boolean; permissionCheckHandler: boolean; headerListeners: number };
  privilegedSchemes: Array<{ scheme: string; privileges: Record<string, boolean> }>;
  handledSchemes: string[];
  menu: MenuItemSnapshot[] | null;
  badgeCount: number;
  notifications: Array<{
    title: string;
    body: string;
    options: Record<string, unknown>;
    shown: boolean;
    clicked: boolean;
    closed: boolean;
  }>;
  errorBoxes: Array<{ title: string; content: string }>;
  openedExternally: string[];
  defaultProtocolClients: string[];
  singleInstanceLock: boolean;
  ipcHandlers: string[];
}

export interface FetchResult {
  status: number;
  headers: Record<string, string>;
  /** The body, base64 (binary-safe over the JSON channel). */
  base64: string;
}
