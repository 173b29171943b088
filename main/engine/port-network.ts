// Where links run when not over TLS on TCP: a network of frame ports the installation is
// handed (tests link installations in memory with one). Pinning stays the engine's: a
// dial resolves with the certificate the other end holds, and the engine checks it.
import type { FramePort } from './frame-port';
import type { Identity } from './identity';
import type { PeerCertificate } from './transport';

export interface PortListener {
  address: { host: string; port: number };
  close(): Promise<void>;
}

export interface PortNetwork {
  /** Listens at host:port (0 picks one); each dialler's port comes to `accept` with its certificate. */
  listen(
    identity: Identity,
    host: string,
    port: number,
    accept: (port: FramePort, peer: PeerCertificate) => void,
    revision: number,
  ): Promise<PortListener>;
  /** Dials host:port: the open port and the certificate the listener holds; rejects when nothing listens there. */
  dial(
    identity: Identity,
    address: string,
    revision: number,
    signal: AbortSignal,
  ): Promise<{ port: FramePort; peer: PeerCertificate }>;
}
