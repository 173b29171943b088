// Mutual TLS between installations, with no certificate authority: each side pins
// the other's certificate by its SHA-256 fingerprint. The listener asks for the
// dialler's certificate and hands the socket on with its fingerprint; the engine
// decides whether that fingerprint is a known peer or someone accepting an invitation.
import { createHash, X509Certificate } from 'node:crypto';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import WebSocket, { WebSocketServer } from 'ws';
import type { Identity } from './identity';
import { MAX_FRAME_BYTES, WS_PATH } from './wire';

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
  close(): Promise<void>;
}

/** Listens for peers; `onPeer` gets every socket whose dialler showed a certificate. */
export async function listenForPeers(
  identity: Identity,
  host: string,
  port: number,
  /** `socket` is the TLS socket under `ws` (the link corks it to send a burst of frames at once). */
  onPeer: (ws: WebSocket, peer: PeerCertificate, socket: tls.TLSSocket) => void,
): Promise<PeerListener> {
  const server = https.createServer({
    key: identity.key,
    cert: identity.cert,
    requestCert: true,
    // Self-signed on both sides: the chain is not checked, the fingerprint is.
    rejectUnauthorized: false,
    minVersion: 'TLSv1.3',
  });
  server.on('request', (_req, res) =>
    res.writeHead(426, { 'content-type': 'text/plain' }).end('Parley peers speak WebSocket\n'),
  );
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  server.on('upgrade', (req, socket: Duplex, head) => {
    const peer = certificateOf(socket as tls.TLSSocket);
    if (req.url !== WS_PATH || !peer) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => onPeer(ws, peer, socket as tls.TLSSocket));
  });
  // Handshake failures from strangers are theirs to worry about.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = server.address() as { port: number };
  return {
    address: { host, port: bound.port },
    async close() {
      for (const client of wss.clients) client.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Dials a peer at host:port, refusing (before any WebSocket byte is sent) unless its
 * certificate has the pinned fingerprint. Resolves with the open socket.
 */
export function dialPeer(
  identity: Identity,
  address: string,
  expectedFingerprint: string,
  timeoutMs = 10_000,
): Promise<{ ws: WebSocket; peer: PeerCertificate; socket: tls.TLSSocket }> {
  return new Promise((resolve, reject) => {
    let peer: PeerCertificate | null = null;
    let tlsSocket: tls.TLSSocket | null = null;
    const ws = new WebSocket(`wss://${address}${WS_PATH}`, {
      key: identity.key,
      cert: identity.cert,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.3',
      maxPayload: MAX_FRAME_BYTES,
      handshakeTimeout: timeoutMs,
      perMessageDeflate: false,
      createConnection: (options: tls.ConnectionOptions) => {
        const socket = tls.connect(options);
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
    ws.once('unexpected-response', (_req, res) => {
      reject(new Error(`the peer answered HTTP ${res.statusCode} instead of opening a connection`));
      ws.terminate();
    });
  });
}
