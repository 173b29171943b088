// The app API in a plain browser tab (served by `parley serve`): JSON-RPC 2.0 over one
// WebSocket at /api of the page's own origin. The first call on every socket is
// `session.signIn {token}`; the token comes from the address fragment (#token=…),
// is kept in sessionStorage for this tab only, and is removed from the address bar.
import { ApiError, SESSION_ENDED_CLOSE_CODE } from '../../shared/api-errors';
import {
  type AppEvent,
  type MethodName,
  type ParamsOf,
  type ParleyBridge,
  type ResultOf,
} from '../../shared/api-contract';
import { isErrorCode } from './errors';

const TOKEN_KEY = 'parley.token';

/** The subset of the WebSocket API this transport uses (browsers' and the `ws` package's). */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open' | 'error', listener: () => void): void;
  addEventListener(type: 'close', listener: (event: { code?: number; reason?: string }) => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
}
export type SocketFactory = (url: string) => SocketLike;

type TokenStore = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

/**
 * Whether the page can talk to Parley: `connected`; `lost` after a signed-in socket
 * dropped, while it tries again (`retryAt` is when, null while it tries); `signed-out`
 * when the token stopped working.
 */
export interface LinkState {
  status: 'connecting' | 'connected' | 'lost' | 'signed-out';
  retryAt: number | null;
}

export interface BrowserTransportOptions {
  /** The API address, e.g. `ws://127.0.0.1:4500/api`. */
  url: string;
  /** A sign-in token, if one is known. */
  token: string | null;
  /** Where the token is kept for the tab (default sessionStorage); null keeps it in memory only. */
  storage?: TokenStore | null;
  openSocket?: SocketFactory;
  /** Delay before re-opening a dropped socket that still has event listeners; doubles up to 30 s. */
  reconnectDelayMs?: number;
}

interface RpcError {
  code?: unknown;
  message?: unknown;
  data?: { code?: unknown } | null;
}
interface RpcMessage {
  jsonrpc?: unknown;
  id?: unknown;
  result?: unknown;
  error?: RpcError;
  method?: unknown;
  params?: unknown;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: ApiError): void;
}

/** The API address of the page's own origin. */
export function apiUrlFor(location: Pick<Location, 'protocol' | 'host'>): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/api`;
}

function safeStorage(): TokenStore | null {
  try {
    return window.sessionStorage;
  } catch {
    return null; // storage disabled: keep the token in memory
  }
}

/**
 * Takes `#token=…` out of the address bar (keeping any other fragment parameters) and
 * remembers it for the tab. Returns the token from the address, or the one remembered.
 */
export function takeTokenFromAddress(
  location: Pick<Location, 'hash' | 'pathname' | 'search'> = window.location,
  history: Pick<History, 'replaceState' | 'state'> = window.history,
  storage: TokenStore | null = safeStorage(),
): string | null {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ''));
  const fromAddress = fragment.get('token');
  if (fromAddress) {
    fragment.delete('token');
    const rest = fragment.toString();
    history.replaceState(history.state, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`);
    try {
      storage?.setItem(TOKEN_KEY, fromAddress);
    } catch {
      // quota or privacy mode: the token still works for this page load
    }
    return fromAddress;
  }
  try {
    return storage?.getItem(TOKEN_KEY) ?? null;
  } catch {
    return null;
  }
}

function errorFromRpc(error: RpcError): ApiError {
  const message = typeof error.message === 'string' ? error.message : 'The Parley API returned an error.';
  const code = error.data?.code;
  if (isErrorCode(code)) return new ApiError(code, message);
  switch (error.code) {
    case -32700: // parse error
    case -32600: // invalid request
    case -32602: // invalid params
      return new ApiError('invalid', message);
    case -32601: // method not found
      return new ApiError('not_found', message);
    default:
      return new ApiError('internal', message);
  }
}

/** One open socket with its in-flight requests. */
class Connection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closedError: ApiError | null = null;
  /** Why the server ended the session, when it closed the socket for that reason. */
  ended: string | null = null;

  constructor(
    private readonly socket: SocketLike,
    private readonly onEvent: (event: AppEvent) => void,
    private readonly onClose: (connection: Connection) => void,
  ) {
    socket.addEventListener('message', (message) => this.receive(message.data));
    socket.addEventListener('close', (event) => {
      if (event?.code === SESSION_ENDED_CLOSE_CODE) this.ended = event.reason || 'your session ended';
      this.closed();
    });
  }

  call(method: string, params: unknown): Promise<unknown> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      try {
        this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      } catch (error) {
        this.pending.delete(id);
        reject(new ApiError('unavailable', `Could not send to Parley: ${String(error)}`));
      }
    });
  }

  close(): void {
    this.socket.close(1000, 'client closed');
    this.closed();
  }

  private receive(data: unknown): void {
    if (typeof data !== 'string') return;
    let message: RpcMessage;
    try {
      message = JSON.parse(data) as RpcMessage;
    } catch {
      return; // not JSON: nothing we can answer
    }
    if (typeof message !== 'object' || message === null || message.jsonrpc !== '2.0') return;
    if (message.method === 'event') {
      if (typeof message.params === 'object' && message.params !== null) this.onEvent(message.params as AppEvent);
      return;
    }
    if (typeof message.id !== 'number') return;
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    if (message.error) pending.reject(errorFromRpc(message.error));
    else pending.resolve(message.result);
  }

  private closed(): void {
    if (this.closedError) return;
    this.closedError = new ApiError('unavailable', 'The connection to Parley was closed.');
    for (const pending of this.pending.values()) pending.reject(this.closedError);
    this.pending.clear();
    this.onClose(this);
  }
}

function defaultSocketFactory(url: string): SocketLike {
  return new WebSocket(url);
}

export class BrowserTransport implements ParleyBridge {
  private token: string | null;
  private readonly url: string;
  private readonly storage: TokenStore | null;
  private readonly openSocket: SocketFactory;
  private readonly listeners = new Set<(event: AppEvent) => void>();
  private readonly baseDelay: number;
  private reconnectDelay: number;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  /** Bumped by every new attempt and by disconnect(); a stale attempt closes its socket. */
  private generation = 0;
  /** The signed-in socket calls go to, while it is being opened or once it is open. */
  private connection: Promise<Connection> | null = null;
  /** The open, signed-in socket, to notice when it drops. */
  private current: Connection | null = null;
  private link: LinkState = { status: 'connecting', retryAt: null };
  private readonly linkListeners = new Set<(state: LinkState) => void>();

  constructor(options: BrowserTransportOptions) {
    this.url = options.url;
    this.token = options.token;
    this.storage = options.storage === undefined ? safeStorage() : options.storage;
    this.openSocket = options.openSocket ?? defaultSocketFactory;
    this.baseDelay = options.reconnectDelayMs ?? 500;
    this.reconnectDelay = this.baseDelay;
  }

  /** Whether a sign-in token is known (from the address, the tab's storage, or a sign-in). */
  hasToken(): boolean {
    return this.token !== null;
  }

  async invoke<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    if (method === 'session.signIn') {
      // A sign-in replaces the socket: the server binds one person to one socket.
      const { token } = params as ParamsOf<'session.signIn'>;
      this.disconnect();
      this.remember(token);
      const { signIn } = await this.start(token);
      return signIn as ResultOf<M>;
    }
    const connection = await this.ready();
    return (await connection.call(method, params)) as ResultOf<M>;
  }

  onEvent(listener: (event: AppEvent) => void): () => void {
    this.listeners.add(listener);
    // Events flow only on a signed-in socket: open one if we can.
    if (this.token !== null) this.ready().catch(() => this.scheduleReconnect());
    return () => {
      this.listeners.delete(listener);
    };
  }

  linkState(): LinkState {
    return this.link;
  }

  onLinkState(listener: (state: LinkState) => void): () => void {
    this.linkListeners.add(listener);
    return () => {
      this.linkListeners.delete(listener);
    };
  }

  /** After a drop: tries again now rather than when the backoff says, and starts the backoff anew. */
  reconnect(): void {
    if (this.current || this.token === null) return;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.reconnectDelay = this.baseDelay;
    this.setLink({ status: 'lost', retryAt: null });
    this.ready().catch(() => this.scheduleReconnect());
  }

  /** Closes the socket; the next call opens a new one. */
  disconnect(): void {
    this.generation++;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.connection = null;
    const current = this.current;
    this.current = null;
    current?.close();
  }

  private ready(): Promise<Connection> {
    if (this.connection) return this.connection;
    if (this.token === null) {
      return Promise.reject(
        new ApiError('unauthenticated', 'Not signed in: open the address `parley serve` printed, or paste a token.'),
      );
    }
    this.start(this.token).catch(() => undefined); // its failure reaches callers through this.connection
    return this.connection ?? Promise.reject(new ApiError('unavailable', 'Not connected.'));
  }

  private start(token: string): Promise<{ connection: Connection; signIn: unknown }> {
    const generation = ++this.generation;
    const attempt = this.establish(token, generation);
    const connection = attempt.then((result) => result.connection);
    this.connection = connection;
    connection.catch(() => {
      if (this.generation === generation) this.connection = null;
    });
    return attempt;
  }

  private async establish(token: string, generation: number): Promise<{ connection: Connection; signIn: unknown }> {
    const socket = await this.open();
    const connection = new Connection(
      socket,
      (event) => this.emit(event),
      (closed) => this.dropped(closed),
    );
    let signIn: unknown;
    try {
      signIn = await connection.call('session.signIn', { token });
    } catch (error) {
      connection.close();
      if (error instanceof ApiError && (error.code === 'unauthenticated' || error.code === 'invalid')) {
        if (this.token === token) {
          this.forget();
          this.setLink({ status: 'signed-out', retryAt: null });
        }
      }
      throw error;
    }
    if (generation !== this.generation) {
      connection.close();
      throw new ApiError('unavailable', 'A newer sign-in replaced this connection.');
    }
    this.current = connection;
    this.reconnectDelay = this.baseDelay;
    this.setLink({ status: 'connected', retryAt: null });
    return { connection, signIn };
  }

  private open(): Promise<SocketLike> {
    return new Promise<SocketLike>((resolve, reject) => {
      let socket: SocketLike;
      try {
        socket = this.openSocket(this.url);
      } catch (error) {
        reject(new ApiError('unavailable', `Cannot reach Parley at ${this.url}: ${String(error)}`));
        return;
      }
      let settled = false;
      socket.addEventListener('open', () => {
        settled = true;
        resolve(socket);
      });
      const fail = () => {
        if (settled) return;
        settled = true;
        reject(new ApiError('unavailable', `Cannot reach Parley at ${this.url}.`));
      };
      socket.addEventListener('error', fail);
      socket.addEventListener('close', fail);
    });
  }

  private dropped(connection: Connection): void {
    if (this.current !== connection) return;
    this.current = null;
    this.connection = null;
    if (connection.ended !== null) {
      // Removed, or the token was replaced: it will not sign in again, so say so instead of retrying.
      this.forget();
      this.emit({ type: 'sessionEnded', reason: connection.ended });
      this.setLink({ status: 'signed-out', retryAt: null });
      return;
    }
    this.setLink({ status: 'lost', retryAt: null });
    this.scheduleReconnect();
  }

  /** Re-opens a dropped socket while someone listens for events, backing off up to 30 s. */
  private scheduleReconnect(): void {
    if (this.listeners.size === 0 || this.token === null || this.reconnectTimer) return;
    const delay = this.reconnectDelay;
    this.reconnectDelay = Math.min(this.reconnectDelay * 2, 30_000);
    if (this.link.status !== 'connecting') this.setLink({ status: 'lost', retryAt: Date.now() + delay });
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.link.status === 'lost') this.setLink({ status: 'lost', retryAt: null });
      this.ready().catch(() => this.scheduleReconnect());
    }, delay);
  }

  private setLink(state: LinkState): void {
    if (state.status === this.link.status && state.retryAt === this.link.retryAt) return;
    this.link = state;
    for (const listener of this.linkListeners) {
      try {
        listener(state);
      } catch (error) {
        console.error('Parley link listener failed', error);
      }
    }
  }

  private emit(event: AppEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        console.error('Parley event listener failed', error);
      }
    }
  }

  private remember(token: string): void {
    this.token = token;
    try {
      this.storage?.setItem(TOKEN_KEY, token);
    } catch {
      // not fatal: the token lives in memory for this page
    }
  }

  private forget(): void {
    this.token = null;
    try {
      this.storage?.removeItem(TOKEN_KEY);
    } catch {
      // nothing to clean up
    }
  }
}
