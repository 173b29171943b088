// The renderer's one client of the app API (shared/api-contract.ts). Inside Electron it
// goes through the preload bridge (`window.parley`); in a browser tab served by
// `parley serve` it speaks JSON-RPC over a WebSocket. Either way every call is typed
// by the contract and every failure is an ApiError with a stable code.
import type { AppEvent, MethodName, ParamsOf, ParleyBridge, ResultOf } from '../../shared/api-contract';
import { apiUrlFor, BrowserTransport, takeTokenFromAddress } from './browser-transport';
import { toApiError } from './errors';

declare global {
  interface Window {
    /** The Electron preload bridge; absent in a plain browser tab. */
    parley?: ParleyBridge;
  }
}

export interface ApiClient extends ParleyBridge {
  /** Which way calls travel. */
  readonly transport: 'electron' | 'browser';
  /**
   * Whether the client can make signed-in calls right away. Electron always acts as the
   * installation's owner; a browser tab needs a token (from the address or a sign-in).
   */
  hasCredentials(): boolean;
}

function electronClient(bridge: ParleyBridge): ApiClient {
  return {
    transport: 'electron',
    hasCredentials: () => true,
    async invoke<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
      try {
        return await bridge.invoke(method, params);
      } catch (error) {
        throw toApiError(error);
      }
    },
    onEvent: (listener: (event: AppEvent) => void) => bridge.onEvent(listener),
  };
}

function browserClient(transport: BrowserTransport): ApiClient {
  return {
    transport: 'browser',
    hasCredentials: () => transport.hasToken(),
    async invoke<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
      try {
        return await transport.invoke(method, params);
      } catch (error) {
        throw toApiError(error);
      }
    },
    onEvent: (listener) => transport.onEvent(listener),
  };
}

/** Picks the transport for this page: the preload bridge if present, else the page's own /api. */
export function createClient(): ApiClient {
  if (window.parley) return electronClient(window.parley);
  const token = takeTokenFromAddress();
  return browserClient(new BrowserTransport({ url: apiUrlFor(window.location), token }));
}
