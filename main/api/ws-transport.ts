// The headless transport of the app API: JSON-RPC 2.0 over a WebSocket at /api.
// The first call on a socket must be `session.signIn`; events follow as
// notifications named "event". When the session ends (its person removed, its token
// replaced) the socket closes with SESSION_ENDED_CLOSE_CODE, once the answers to calls
// already under way are sent. Any message gets an answer or a close code, never
// an exception: garbage is a JSON-RPC error, a message over the cap closes with 1009,
// a broken frame with the WebSocket protocol's own code (1002, 1007).
import type http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  ApiError,
  isMethodName,
  SESSION_ENDED_CLOSE_CODE,
  type AppEvent,
  type ErrorCode,
} from '../../shared/api-contract';
import { log } from '../log';
import type { Ticket } from '../net/admission';
import { hostHeaderAllowed } from '../net/hosts';
import { API_PING_MS, SIGN_IN_TIMEOUT_MS } from '../net/limits';
import type { ApiSession, SessionRegistry } from './session';

/** What a socket needs of the installation it serves (an Installation is one). */
export interface ApiSocketHost {
  readonly sessions: Pick<SessionRegistry, 'forget'>;
  /** Calls one app API method as a session; throws ApiError. */
  call(session: ApiSession, method: string, params: unknown): Promise<unknown>;
  /** The events the session's person may see, while the session lasts. */
  subscribe(session: ApiSession, listener: (event: AppEvent) => void): () => void;
}

export const MAX_MESSAGE_BYTES = 1024 * 1024;
/** Answers and events a client leaves unread past this end its socket: it is not reading. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/** Close codes of the app API socket. */
export const ApiCloseCode = {
  goingAway: 1001,
  policy: 1008,
} as const;

/** JSON-RPC wants integer codes; the stable string code rides along in error.data.code. */
const rpcCodes: Record<ErrorCode, number> = {
  invalid: -32602,
  unauthenticated: -32001,
  forbidden: -32003,
  not_found: -32004,
  conflict: -32009,
  paused: -32010,
  queue_full: -32011,
  unavailable: -32013,
  revoked: -32014,
  budget: -32015,
  closed: -32016,
  not_exposed: -32017,
  disk_full: -32018,
  internal: -32603,
};

type Id = string | number | null;

function errorReply(id: Id, code: number, message: string, stable: ErrorCode) {
  return { jsonrpc: '2.0', id, error: { code, message, data: { code: stable } } };
}

export type ParsedMessage =
  { ok: true; id: Id; method: string; params: unknown } | { ok: false; reply: ReturnType<typeof errorReply> };

/** Reads one socket message as a JSON-RPC 2.0 request, or says which error to answer. */
export function parseRequest(data: Buffer, isBinary: boolean): ParsedMessage {
  if (isBinary) return { ok: false, reply: errorReply(null, -32700, 'binary messages are not JSON-RPC', 'invalid') };
  let request: unknown;
  try {
    request = JSON.parse(data.toString('utf8'));
  } catch {
    return { ok: false, reply: errorReply(null, -32700, 'not valid JSON', 'invalid') };
  }
  if (request === null || typeof request !== 'object' || Array.isArray(request))
    return { ok: false, reply: errorReply(null, -32600, 'not a JSON-RPC 2.0 request object', 'invalid') };
  const { jsonrpc, id, method, params } = request as Record<string, unknown>;
  const validId = id === undefined || id === null || typeof id === 'string' || typeof id === 'number';
  const replyId: Id = typeof id === 'string' || typeof id === 'number' ? id : null;
  if (jsonrpc !== '2.0' || typeof method !== 'string' || !validId)
    return { ok: false, reply: errorReply(replyId, -32600, 'not a JSON-RPC 2.0 request', 'invalid') };
  if (!isMethodName(method))
    return {
      ok: false,
      reply: errorReply(replyId, -32601, `unknown method "${method.slice(0, 100)}"`, 'invalid'),
    };
  return { ok: true, id: replyId, method, params };
}

export interface ApiSocketOptions {
  /** The address the server listens on, for the Host check (its port is read once it listens). */
  host: string;
  /** The connection's place among those not yet signed in; given back at sign-in. */
  ticketOf?: (socket: Socket) => Ticket | undefined;
}

export interface ApiSockets {
  /** Closes every socket with `code` and ends those that do not finish closing within `graceMs`. */
  closeAll(code: number, reason: string, graceMs?: number): Promise<void>;
}

export function attachApiSocket(
  server: http.Server,
  installation: ApiSocketHost,
  options: ApiSocketOptions = { host: '127.0.0.1' },
): ApiSockets {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES, perMessageDeflate: false });
  wss.on('error', (error) => log.warn('app API socket server error', { error: error.message }));
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    try {
      const refusal = upgradeRefusal(req, { host: options.host, port: (server.address() as AddressInfo).port });
      if (refusal) {
        socket.end(`HTTP/1.1 ${refusal}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
        return;
      }
      const ticket = options.ticketOf?.(socket as Socket);
      wss.handleUpgrade(req, socket, head, (ws) => serveSocket(ws, installation, ticket));
    } catch (error) {
      log.warn('refused an app API upgrade', { error: String(error) });
      socket.destroy();
    }
  });
  return {
    async closeAll(code, reason, graceMs = 500) {
      const clients = [...wss.clients];
      if (clients.length === 0) return;
      const closed = Promise.all(
        clients.map(
          (ws) =>
            new Promise<void>((resolve) =>
              ws.readyState === ws.CLOSED ? resolve() : ws.once('close', () => resolve()),
            ),
        ),
      );
      for (const ws of clients) ws.close(code, reason);
      const timer = setTimeout(() => {
        for (const ws of clients) ws.terminate();
      }, graceMs);
      await closed;
      clearTimeout(timer);
    },
  };
}

/** Why an upgrade is refused (an HTTP status line), or null when it may go on. */
export function upgradeRefusal(
  req: Pick<http.IncomingMessage, 'url' | 'headers'>,
  bind: { host: string; port: number },
): string | null {
  if (!hostHeaderAllowed(req.headers.host, bind)) return '421 Misdirected Request';
  let pathname: string;
  try {
    pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
  } catch {
    return '400 Bad Request';
  }
  if (pathname !== '/api') return '404 Not Found';
  // Browsers send Origin: only our own page may open the socket. Other clients send none.
  const origin = req.headers.origin;
  if (origin !== undefined && !sameOrigin(origin, req.headers.host!)) return '403 Forbidden';
  return null;
}

function sameOrigin(origin: string, host: string): boolean {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' && url.host === new URL(`http://${host}`).host;
  } catch {
    return false;
  }
}

function serveSocket(ws: WebSocket, installation: ApiSocketHost, ticket: Ticket | undefined): void {
  const session: ApiSession = { person: null };
  let unsubscribe: (() => void) | null = null;
  /** Calls whose answer is still to be sent, and why the socket is to close once they are. */
  let working = 0;
  let ending: string | null = null;
  const closeIfDone = () => {
    if (ending !== null && working === 0) ws.close(SESSION_ENDED_CLOSE_CODE, ending);
  };
  session.onEnd = (reason) => {
    unsubscribe?.();
    unsubscribe = null;
    ending = reason;
    closeIfDone();
  };
  let alive = true;
  let pinger: NodeJS.Timeout | null = null;
  const signInTimer = setTimeout(
    () => ws.close(ApiCloseCode.policy, `sign in within ${SIGN_IN_TIMEOUT_MS / 1000} s`),
    SIGN_IN_TIMEOUT_MS,
  );
  const send = (message: object) => {
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      ws.terminate();
      return;
    }
    ws.send(JSON.stringify(message));
  };
  const signedIn = () => {
    clearTimeout(signInTimer);
    ticket?.release();
    if (pinger) return;
    pinger = setInterval(() => {
      if (!alive) {
        ws.terminate();
        return;
      }
      alive = false;
      ws.ping();
    }, API_PING_MS);
    pinger.unref();
  };
  // The socket's protocol errors (bad UTF-8, reserved opcodes, oversize) close it with their code.
  ws.on('error', (error) => log.warn('app API socket error', { error: error.message }));
  ws.on('pong', () => {
    alive = true;
  });
  ws.on('close', () => {
    clearTimeout(signInTimer);
    if (pinger) clearInterval(pinger);
    ticket?.release();
    unsubscribe?.();
    installation.sessions.forget(session);
  });
  ws.on('message', (data: Buffer, isBinary) => {
    const request = parseRequest(data, isBinary);
    if (!request.ok) {
      send(request.reply);
      return;
    }
    const { id, method, params } = request;
    working++;
    installation
      .call(session, method, params)
      .then((result) => {
        if (method === 'session.signIn' && session.person) {
          signedIn();
          unsubscribe?.();
          unsubscribe = installation.subscribe(session, (event: AppEvent) =>
            send({ jsonrpc: '2.0', method: 'event', params: event }),
          );
        }
        send({ jsonrpc: '2.0', id, result });
      })
      .catch((error: unknown) => {
        const apiError = error instanceof ApiError ? error : new ApiError('internal', 'internal error');
        if (!(error instanceof ApiError)) log.error('api socket failure', { error: String(error) });
        send(errorReply(id, rpcCodes[apiError.code], apiError.message, apiError.code));
      })
      .catch((error: unknown) => log.error('could not answer on an app API socket', { error: String(error) }))
      .finally(() => {
        working--;
        closeIfDone();
      });
  });
}
