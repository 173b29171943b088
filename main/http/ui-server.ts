// The HTTP server of `parley serve`: the built UI and the app API socket on one port.
// It answers only Host headers naming an address it listens on, holds connections
// that have not signed in for a few seconds and a limited number of them (../net/limits),
// and turns every error of a connection into an HTTP answer or a closed socket.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { attachApiSocket, type ApiSockets } from '../api/ws-transport';
import type { Installation } from '../installation';
import { log } from '../log';
import { ConnectionGate, type Ticket } from '../net/admission';
import { hostHeaderAllowed } from '../net/hosts';
import { KEEP_ALIVE_TIMEOUT_MS } from '../net/limits';
import { answerClientError, httpTimeouts } from '../net/http-guards';
import { securityHeaders, serveStatic } from './static-files';

export interface UiServer {
  port: number;
  /** Closes the app API sockets with `code`, then every connection, and stops listening. */
  close(code: number, reason: string): Promise<void>;
}

export async function startUiServer(
  installation: Installation,
  options: { host: string; port: number; root: string },
): Promise<UiServer> {
  const gate = new ConnectionGate();
  const tickets = new WeakMap<Socket, Ticket>();
  const server = http.createServer(httpTimeouts);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on('connection', (socket: Socket) => {
    const ticket = gate.admit(socket.remoteAddress);
    if (!ticket) {
      socket.destroy();
      return;
    }
    tickets.set(socket, ticket);
    socket.once('close', () => ticket.release());
  });
  server.on('clientError', answerClientError);
  server.on('request', (req, res) => {
    res.on('error', () => {});
    try {
      if (!hostHeaderAllowed(req.headers.host, { host: options.host, port: (server.address() as AddressInfo).port })) {
        res
          .writeHead(421, { 'content-type': 'text/plain; charset=utf-8', connection: 'close', ...securityHeaders })
          .end('This Parley answers only at the address it listens on.\n');
        return;
      }
      serveStatic(options.root, req, res);
    } catch (error) {
      log.error('serving a page failed', { error: String(error) });
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end();
    }
  });
  const sockets: ApiSockets = attachApiSocket(server, installation, {
    host: options.host,
    ticketOf: (socket) => tickets.get(socket),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (error) => log.error('the UI server failed', { error: error.message }));
  return {
    port: (server.address() as AddressInfo).port,
    async close(code, reason) {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      await sockets.closeAll(code, reason);
      server.closeAllConnections();
      await stopped;
    },
  };
}
