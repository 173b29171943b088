// Mutual TLS between installations, with no certificate authority: each side pins
// the other's certificate by its SHA-256 fingerprint. The listener asks for the
// dialler's certificate and hands the socket on with its fingerprint; the engine
// decides whether that fingerprint is a known peer or someone accepting an invitation.
import { createHash, X509Certificate } from 'node:crypto';
import type http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import WebSocket, { WebSocketServer } from 'ws';
import { answerClientError, httpTimeouts } from '../net/http-guards';
import { log } from '../log';
import { ConnectionGate, type Ticket } from '../net/admission';
import { KEEP_ALIVE_TIMEOUT_MS, TLS_HANDSHAKE_TIMEOUT_MS } from '../net/limits';
import type { Identity } from './identity';
import { chooseSubprotocol, MAX_FRAME_BYTES, offeredSubprotocols, PROTOCOL_REVISION, WS_PATH } from './wire';

export interface PeerCertificate {
  fingerprint: string;
  pem: string;
}

function certificateOf(socket: tls.TLSSocket): PeerCertificate | null {
  const cert = socket.getPeerCertificate(false);
  if (!cert || !cert.raw || cert.raw.length === 0) return null;
  return {
    fingerprint: createHash('sha256').update(cert.raw).digest('hex'),
    pem: new X509Certificate(cert.raw).toString(),
  };
}

export class FingerprintMismatch extends Error {
  constructor(expected: string, got: string) {
    super(`the peer presented certificate ${got.slice(0, 16)}…, not the pinned ${expected.slice(0, 16)}…`);
    this.name = 'FingerprintMismatch';
  }
}

export interface PeerListener {
  address: { host: string; port: number };
  /**
   * Takes a stream from another carrier (the DHT) as if it were a TCP connection: the same
   * TLS, WebSocket and hello follow. `gateKey` is whom its place before authentication
   * counts against (null: a known peer's, which holds none); `carrier` is what carrierOf
   * gives back for the TLS socket.
   */
  carry(stream: Duplex, gateKey: string | null, carrier: Carrier): void;
  /** Whether a carried stream counted against `gateKey` would get a place now. */
  hasRoom(gateKey: string): boolean;
  close(): Promise<void>;
}

/** How a link's bytes travel, when not by a TCP connection of its own. */
export interface Carrier {
  kind: 'dht';
  /** The peer's DHT public key, hex (Noise proved the peer holds it). */
  remoteKey: string;
  path: 'holepunched' | 'relayed';
  /** The blind relay (hex key) it came through, when relayed. */
  relay: string | null;
}

const carriers = new WeakMap<tls.TLSSocket, Carrier>();

/** The carrier under a peer's TLS socket; undefined for a TCP connection. */
export function carrierOf(socket: tls.TLSSocket): Carrier | undefined {
  return carriers.get(socket);
}

/** The place each not-yet-authenticated peer socket holds, given back once its hello is accepted. */
const pendingTickets = new WeakMap<WebSocket, Ticket>();

/** The engine accepted this peer's hello: its connection no longer counts as unauthenticated. */
export function peerAuthenticated(ws: WebSocket): void {
  pendingTickets.get(ws)?.release();
}

/**
 * Listens for peers; `onPeer` gets every socket whose dialler showed a certificate.
 * Until the engine calls `peerAuthenticated`, a connection counts against the caps on
 * unauthenticated connections (../net/limits), from its first byte: over them it is
 * closed at once, and each step (TLS handshake, upgrade request, hello) has a few seconds.
 */
export async function listenForPeers(
  identity: Identity,
  host: string,
  port: number,
  /** `socket` is the TLS socket under `ws` (the link corks it to send a burst of frames at once). */
  onPeer: (ws: WebSocket, peer: PeerCertificate, socket: tls.TLSSocket) => void,
  /** The newest revision of protocol 2 to agree to (tests stand in for an older release with it). */
  revision = PROTOCOL_REVISION,
): Promise<PeerListener> {
  const gate = new ConnectionGate();
  /** The DHT's strangers have a gate of their own, counted by UDP host (or key when relayed). */
  const carriedGate = new ConnectionGate();
  const carriedTickets = new WeakMap<tls.TLSSocket, Ticket>();
  /** Tickets by the remote end of the TCP connection, until its TLS socket exists. */
  const byRemote = new Map<string, Ticket>();
  const server = https.createServer({
    key: identity.key,
    cert: identity.cert,
    requestCert: true,
    // Self-signed on both sides: the chain is not checked, the fingerprint is.
    rejectUnauthorized: false,
    minVersion: 'TLSv1.3',
    handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS,
    ...httpTimeouts,
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  /** Every TCP connection, so closing does not wait for handshakes that may never finish. */
  const sockets = new Set<Socket>();
  server.on('connection', (raw: Socket) => {
    raw.on('error', () => raw.destroy());
    sockets.add(raw);
    raw.once('close', () => sockets.delete(raw));
    const ticket = gate.admit(raw.remoteAddress);
    if (!ticket) {
      raw.destroy();
      return;
    }
    const key = `${raw.remoteAddress}|${raw.remotePort}`;
    byRemote.set(key, ticket);
    raw.once('close', () => {
      ticket.release();
      if (byRemote.get(key) === ticket) byRemote.delete(key);
    });
  });
  server.on('secureConnection', (socket: tls.TLSSocket) => {
    socket.on('error', () => socket.destroy());
  });
  server.on('request', (_req, res) => {
    res.on('error', () => {});
    res.writeHead(426, { 'content-type': 'text/plain', connection: 'close' }).end('Parley peers speak WebSocket\n');
  });
  server.on('clientError', answerClientError);
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME_BYTES,
    perMessageDeflate: false,
    // The revision of protocol 2 the link speaks (a dialler from before revisions offers none).
    handleProtocols: (offered) => chooseSubprotocol(offered, revision),
  });
  wss.on('error', (error) => log.warn('peer socket server error', { error: error.message }));
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    try {
      const peer = certificateOf(socket as tls.TLSSocket);
      if (req.url !== WS_PATH || !peer) {
        socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      const tlsSocket = socket as tls.TLSSocket;
      const ticket =
        carriedTickets.get(tlsSocket) ?? byRemote.get(`${tlsSocket.remoteAddress}|${tlsSocket.remotePort}`);
      wss.handleUpgrade(req, socket, head, (ws) => {
        // Until the link is set up, its errors are only logged (the link listens from then on).
        ws.on('error', (error) => log.warn('peer socket error', { error: error.message }));
        if (ticket) pendingTickets.set(ws, ticket);
        onPeer(ws, peer, tlsSocket);
      });
    } catch (error) {
      log.warn('refused a peer upgrade', { error: String(error) });
      socket.destroy();
    }
  });
  // Handshake failures from strangers are theirs to worry about.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (error) => log.error('the peer listener failed', { error: error.message }));
  const bound = server.address() as { port: number };
  const secureContext = tls.createSecureContext({ key: identity.key, cert: identity.cert, minVersion: 'TLSv1.3' });
  /** Carried TLS sockets, so closing ends them too. */
  const carried = new Set<tls.TLSSocket>();
  return {
    address: { host, port: bound.port },
    hasRoom: (gateKey) => carriedGate.hasRoom(gateKey),
    carry(stream, gateKey, carrier) {
      stream.on('error', () => stream.destroy());
      const ticket = gateKey === null ? { release() {} } : carriedGate.admit(gateKey);
      if (!ticket) {
        stream.destroy();
        return;
      }
      // The server side of TLS over the stream, with the listener's key and the same rules;
      // once through, the HTTPS server takes the socket as it takes one of its own.
      const socket = new tls.TLSSocket(stream, {
        isServer: true,
        secureContext,
        requestCert: true,
        rejectUnauthorized: false,
        server,
      });
      carriers.set(socket, carrier);
      carriedTickets.set(socket, ticket);
      carried.add(socket);
      const timer = setTimeout(() => socket.destroy(), TLS_HANDSHAKE_TIMEOUT_MS);
      timer.unref();
      socket.on('error', () => socket.destroy());
      socket.once('close', () => {
        clearTimeout(timer);
        ticket.release();
        carried.delete(socket);
        stream.destroy();
      });
      stream.once('close', () => socket.destroy());
      socket.once('secure', () => {
        clearTimeout(timer);
        server.emit('secureConnection', socket);
      });
    },
    async close() {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const client of wss.clients) client.terminate();
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      for (const socket of carried) socket.destroy();
      await stopped;
    },
  };
}

/**
 * Dials a peer at host:port, refusing (before any WebSocket byte is sent) unless its
 * certificate has the pinned fingerprint. Resolves with the open socket. It offers the
 * revisions of protocol 2 up to `revision`; null offers none, as Parley did before
 * revisions (tests stand in for such a peer with it).
 */
export function dialPeer(
  identity: Identity,
  address: string,
  expectedFingerprint: string,
  options: {
    timeoutMs?: number;
    revision?: number | null;
    /** A stream from another carrier (the DHT) to speak TLS over, instead of dialling `address`. */
    stream?: Duplex;
    signal?: AbortSignal;
  } = {},
): Promise<{ ws: WebSocket; peer: PeerCertificate; socket: tls.TLSSocket }> {
  const { timeoutMs = 10_000, revision = PROTOCOL_REVISION, stream, signal } = options;
  return new Promise((resolve, reject) => {
    let peer: PeerCertificate | null = null;
    let tlsSocket: tls.TLSSocket | null = null;
    const ws = new WebSocket(`wss://${address}${WS_PATH}`, revision === null ? [] : offeredSubprotocols(revision), {
      key: identity.key,
      cert: identity.cert,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.3',
      maxPayload: MAX_FRAME_BYTES,
      handshakeTimeout: timeoutMs,
      perMessageDeflate: false,
      createConnection: (options: tls.ConnectionOptions) => {
        const socket = tls.connect(stream ? { ...options, socket: stream } : options);
        if (stream) {
          stream.once('error', (error) => socket.destroy(error));
          stream.once('close', () => socket.destroy());
          socket.once('close', () => stream.destroy());
        }
        tlsSocket = socket;
        socket.once('secureConnect', () => {
          peer = certificateOf(socket);
          if (!peer || peer.fingerprint !== expectedFingerprint) {
            socket.destroy(new FingerprintMismatch(expectedFingerprint, peer?.fingerprint ?? 'none'));
          }
        });
        return socket;
      },
    } as WebSocket.ClientOptions);
    ws.once('open', () => {
      if (peer && tlsSocket && peer.fingerprint === expectedFingerprint) resolve({ ws, peer, socket: tlsSocket });
      else {
        ws.terminate();
        reject(new FingerprintMismatch(expectedFingerprint, peer?.fingerprint ?? 'none'));
      }
    });
    ws.once('error', (error) => reject(error));
    // A hard limit of its own: the request's timeout counts only idle time on the socket.
    const deadline = setTimeout(() => {
      ws.terminate();
      reject(new Error('Opening handshake has timed out'));
    }, timeoutMs);
    deadline.unref();
    ws.once('open', () => clearTimeout(deadline));
    ws.once('close', () => clearTimeout(deadline));
    // Cancelled while on its way (another path won): nothing more is sent. Once open, the socket is the caller's.
    const abort = () => {
      ws.terminate();
      reject(new Error('cancelled: another path won'));
    };
    if (signal?.aborted) abort();
    else signal?.addEventListener('abort', abort, { once: true });
    ws.once('open', () => signal?.removeEventListener('abort', abort));
    ws.once('close', () => signal?.removeEventListener('abort', abort));
    ws.once('unexpected-response', (_req, res) => {
      reject(new Error(`the peer answered HTTP ${res.statusCode} instead of opening a connection`));
      ws.terminate();
    });
  });
}
