// What every Parley HTTP server shares: short waits for slow or silent clients, and an
// answer (then a closed connection) for a request that could not be read.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { HEADERS_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS, REQUEST_TIMEOUT_MS, TIMEOUT_CHECK_MS } from './limits';

/** HTTP status lines for the errors Node's parser reports on a connection. */
function clientErrorStatus(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return '431 Request Header Fields Too Large';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return '408 Request Timeout';
    default:
      return '400 Bad Request';
  }
}

/** The server options every Parley HTTP server shares: short waits for slow or silent clients. */
export const httpTimeouts = {
  headersTimeout: HEADERS_TIMEOUT_MS,
  requestTimeout: REQUEST_TIMEOUT_MS,
  keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
  connectionsCheckingInterval: TIMEOUT_CHECK_MS,
} satisfies http.ServerOptions;

/** Answers a connection whose request could not be read, then closes it. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(`HTTP/1.1 ${clientErrorStatus(error)}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  // A client that does not close its side is not waited for.
  setTimeout(() => socket.destroy(), 1_000).unref();
}
