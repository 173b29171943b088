// The headless transport of the app API: JSON-RPC 2.0 over a WebSocket at /api.
// The first call on a socket must be `session.signIn`; events follow as
// notifications named "event". When the session ends (its person removed, its token
// replaced) the socket closes with SESSION_ENDED_CLOSE_CODE, once the answers to calls
// already under way are sent.
import type http from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  ApiError,
  isMethodName,
  SESSION_ENDED_CLOSE_CODE,
  type AppEvent,
  type ErrorCode,
} from '../../shared/api-contract';
import type { Installation } from '../installation';
import { log } from '../log';
import type { ApiSession } from './session';

const MAX_MESSAGE_BYTES = 1024 * 1024;

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

export function attachApiSocket(server: http.Server, installation: Installation): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const origin = req.headers.origin;
    // Browsers send Origin: only our own page may open the socket.
    if (url.pathname !== '/api' || (origin !== undefined && new URL(origin).host !== req.headers.host)) {
      socket.write('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveSocket(ws, installation));
  });
  return wss;
}

function serveSocket(ws: WebSocket, installation: Installation): void {
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
  const send = (message: object) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  };
  ws.on('close', () => {
    unsubscribe?.();
    installation.sessions.forget(session);
  });
  ws.on('message', (data, isBinary) => {
    working++;
    void (async () => {
      let request: { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
      try {
        if (isBinary) throw new Error('binary');
        request = JSON.parse((data as Buffer).toString('utf8')) as typeof request;
      } catch {
        send(errorReply(null, -32700, 'not valid JSON', 'invalid'));
        return;
      }
      const id = typeof request.id === 'string' || typeof request.id === 'number' ? request.id : null;
      if (
        request === null ||
        typeof request !== 'object' ||
        request.jsonrpc !== '2.0' ||
        typeof request.method !== 'string'
      ) {
        send(errorReply(id, -32600, 'not a JSON-RPC 2.0 request', 'invalid'));
        return;
      }
      if (!isMethodName(request.method)) {
        send(errorReply(id, -32601, `unknown method "${request.method}"`, 'invalid'));
        return;
      }
      try {
        const result = await installation.call(session, request.method, request.params);
        if (request.method === 'session.signIn' && session.person) {
          unsubscribe?.();
          unsubscribe = installation.subscribe(session, (event: AppEvent) =>
            send({ jsonrpc: '2.0', method: 'event', params: event }),
          );
        }
        send({ jsonrpc: '2.0', id, result });
      } catch (error) {
        const apiError = error instanceof ApiError ? error : new ApiError('internal', 'internal error');
        if (!(error instanceof ApiError)) log.error('api socket failure', { error: String(error) });
        send(errorReply(id, rpcCodes[apiError.code], apiError.message, apiError.code));
      }
    })().finally(() => {
      working--;
      closeIfDone();
    });
  });
}
