// The only place that uses ipcMain: one channel that carries app API calls from the
// window's preload to the installation, one that pushes events back, and one on which
// the preload says the page listens for events (so links held for it can be sent). The
// window acts as the installation's owner.
import { ipcMain, type BrowserWindow, type IpcMainEvent, type IpcMainInvokeEvent } from 'electron';
import { ApiError, errorCodes, type AppEvent, type ErrorCode } from '../../shared/api-contract';
import { EVENT_CHANNEL, INVOKE_CHANNEL, LISTENING_CHANNEL } from '../../shared/ipc-channels';
import type { Installation } from '../installation';
import { log } from '../log';
import { isPageUrl } from './page-protocol';

export interface WireOptions {
  /** The page subscribed to events (after every load). */
  onRendererListening?: () => void;
}

/** Sends an event to the window's page. */
export function sendToRenderer(win: BrowserWindow, event: AppEvent): void {
  if (!win.isDestroyed()) win.webContents.send(EVENT_CHANNEL, event);
}

export type InvokeEnvelope = { ok: true; result: unknown } | { ok: false; error: { code: ErrorCode; message: string } };

function failure(code: ErrorCode, message: string): InvokeEnvelope {
  return { ok: false, error: { code, message } };
}

function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (errorCodes as readonly string[]).includes(value);
}

/** Only the main frame of our window, showing our own page (app://parley/index.html), may call the API. */
function isTrustedSender(event: IpcMainInvokeEvent | IpcMainEvent, win: BrowserWindow, pageUrl: string): boolean {
  if (win.isDestroyed() || event.sender !== win.webContents) return false;
  const frame = event.senderFrame;
  if (!frame || frame !== win.webContents.mainFrame) return false;
  return isPageUrl(frame.url, pageUrl);
}

/** Wires the window to the installation; returns a function that unwires it. */
export function wireIpc(
  installation: Installation,
  win: BrowserWindow,
  pageUrl: string,
  options: WireOptions = {},
): () => void {
  const session = installation.ownerSession();
  ipcMain.handle(INVOKE_CHANNEL, async (event, method: unknown, params: unknown): Promise<InvokeEnvelope> => {
    if (!isTrustedSender(event, win, pageUrl)) {
      log.warn('app API call refused from an unexpected frame', { url: event.senderFrame?.url ?? null });
      return failure('forbidden', 'This page may not use the Parley API.');
    }
    if (typeof method !== 'string' || method.length === 0 || method.length > 100) {
      return failure('invalid', 'method must be a method name');
    }
    try {
      const result = await installation.call(session, method, params ?? {});
      return { ok: true, result };
    } catch (error) {
      if (error instanceof ApiError || (error instanceof Error && isErrorCode((error as { code?: unknown }).code))) {
        return failure((error as ApiError).code, error.message);
      }
      log.error('app API call failed', { method, error: error instanceof Error ? error.stack : String(error) });
      return failure('internal', 'Something went wrong inside Parley; the log has the details.');
    }
  });

  const unsubscribe = installation.subscribe(session, (event: AppEvent) => sendToRenderer(win, event));

  const listening = (event: IpcMainEvent) => {
    if (isTrustedSender(event, win, pageUrl)) options.onRendererListening?.();
  };
  ipcMain.on(LISTENING_CHANNEL, listening);

  return () => {
    ipcMain.removeHandler(INVOKE_CHANNEL);
    ipcMain.removeListener(LISTENING_CHANNEL, listening);
    unsubscribe();
    installation.sessions.forget(session);
  };
}
