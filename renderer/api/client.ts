// The renderer's one client of the app API (shared/api-contract.ts). Inside Electron it
// goes through the preload bridge (`window.parley`); in a browser tab served by
// `parley serve` it speaks JSON-RPC over a WebSocket. Either way every call is typed
// by the contract and every failure is an ApiError with a stable code.
import type { AppEvent, MethodName, ParamsOf, ParleyBridge, ResultOf } from '../../shared/api-contract';
import { apiUrlFor, BrowserTransport, takeTokenFromAddress, type LinkState } from './browser-transport';
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
  /** Whether the token this page started with came in its address (a sign-in link). */
  readonly tokenFromLink: boolean;
  /** Whether calls and events get through; the Electron bridge always does. */
  linkState(): LinkState;
  onLinkState(listener: (state: LinkState) => void): () => void;
  /** After the link was lost: try again now. */
  reconnect(): void;
}

export type { LinkState };

const alwaysConnected: LinkState = { status: 'connected', retryAt: null };

function electronClient(bridge: ParleyBridge): ApiClient {
  return {
    transport: 'electron',
    hasCredentials: () => true,
    tokenFromLink: false,
    linkState: () => alwaysConnected,
    onLinkState: () => () => undefined,
    reconnect: () => undefined,
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

function browserClient(transport: BrowserTransport, tokenFromLink: boolean): ApiClient {
  return {
    transport: 'browser',
    hasCredentials: () => transport.hasToken(),
    tokenFromLink,
    linkState: () => transport.linkState(),
    onLinkState: (listener) => transport.onLinkState(listener),
    reconnect: () => transport.reconnect(),
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
  const fromLink = new URLSearchParams(window.location.hash.replace(/^#/, '')).has('token');
  const token = takeTokenFromAddress();
  return browserClient(new BrowserTransport({ url: apiUrlFor(window.location), token }), fromLink);
}
