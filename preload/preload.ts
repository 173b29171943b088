// The preload bridge: exposes `window.parley` ({invoke, onEvent}, the ParleyBridge of
// shared/api-contract.ts) and nothing else. It runs sandboxed, where only `electron`
// can be required, so it imports nothing from shared/ but types and the channel names
// (a file without imports, bundled in).
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import type { AppEvent, ErrorCode, MethodName, ParamsOf, ParleyBridge, ResultOf } from '../shared/api-contract';
import { EVENT_CHANNEL, INVOKE_CHANNEL, LISTENING_CHANNEL } from '../shared/ipc-channels';

type InvokeEnvelope = { ok: true; result: unknown } | { ok: false; error: { code: ErrorCode; message: string } };

/**
 * A failed call rejects with a plain `{name, code, message}` object, not an Error: the
 * context bridge copies only the message of an Error into the page, and the code
 * would be lost. The renderer's client turns it back into an ApiError.
 */
interface BridgedError {
  name: 'ApiError';
  code: ErrorCode;
  message: string;
}

const bridge: ParleyBridge = {
  async invoke<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    if (typeof method !== 'string') {
      const error: BridgedError = { name: 'ApiError', code: 'invalid', message: 'method must be a string' };
      throw error; // eslint-disable-line @typescript-eslint/only-throw-error -- see BridgedError
    }
    const envelope = (await ipcRenderer.invoke(INVOKE_CHANNEL, method, params ?? {})) as InvokeEnvelope;
    if (envelope.ok) return envelope.result as ResultOf<M>;
    const error: BridgedError = { name: 'ApiError', code: envelope.error.code, message: envelope.error.message };
    throw error; // eslint-disable-line @typescript-eslint/only-throw-error -- see BridgedError
  },
  onEvent(listener: (event: AppEvent) => void): () => void {
    const forward = (_event: IpcRendererEvent, appEvent: AppEvent) => listener(appEvent);
    ipcRenderer.on(EVENT_CHANNEL, forward);
    // Main holds back what it has for the page (a parley:// link) until someone listens.
    ipcRenderer.send(LISTENING_CHANNEL);
    return () => {
      ipcRenderer.removeListener(EVENT_CHANNEL, forward);
    };
  },
};

contextBridge.exposeInMainWorld('parley', bridge);
