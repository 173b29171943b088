// Where peers' dials arrive: TLS on TCP, or a port network's listener in tests, held
// alike as a PeerListener. What comes in goes to `accepted` for its handshake.
import type { EngineOptions } from './engine-core';
import { wsFramePort, type FramePort } from './frame-port';
import type { PortListener } from './port-network';
import { PROTOCOL_REVISION } from './wire';
import {
  carrierOf,
  listenForPeers,
  peerAuthenticated,
  type Carrier,
  type PeerCertificate,
  type PeerListener,
} from './transport';

/**
 * What came in besides a TCP connection of its own (`carrier`), and, for a stranger,
 * what gives back the place it held once its hello is accepted (`authenticated`).
 */
export interface Arrival {
  carrier?: Carrier;
  authenticated?: () => void;
}

/** Listens on host:port (0 picks a free port). */
export async function listenForLinks(
  { identity, revision, ports }: Pick<EngineOptions, 'identity' | 'revision' | 'ports'>,
  host: string,
  port: number,
  accepted: (port: FramePort, peer: PeerCertificate, arrival?: Arrival) => void,
): Promise<PeerListener> {
  return ports
    ? portListener(
        await ports.listen(identity, host, port, (p, peer) => accepted(p, peer), revision ?? PROTOCOL_REVISION),
      )
    : await listenForPeers(
        identity,
        host,
        port,
        (ws, peer, socket) =>
          accepted(wsFramePort(ws, socket), peer, {
            carrier: carrierOf(socket),
            authenticated: () => peerAuthenticated(ws),
          }),
        revision,
      );
}

/** A port network's listener as the engine holds a listener: it carries no DHT streams. */
function portListener(listener: PortListener): PeerListener {
  return {
    address: listener.address,
    carry: (stream) => stream.destroy(),
    hasRoom: () => false,
    close: () => listener.close(),
  };
}
