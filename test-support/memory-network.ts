// Installations linked in memory: a PortNetwork whose links are pairs of in-memory frame
// ports (engine/frame-port.ts), so tests run the engine's whole protocol — hello,
// pinning, texts, acks, pause, revoke — without TLS or sockets. Each listener gets a
// made-up port on its host; a dial to an address nobody holds is refused as TCP would be.
import { memoryFramePorts } from '../main/engine/frame-port';
import type { PortNetwork } from '../main/engine/port-network';
import type { PeerCertificate } from '../main/engine/transport';
import type { InstallationOptions } from '../main/installation';

type Accept = (port: ReturnType<typeof memoryFramePorts>[0], peer: PeerCertificate) => void;

export interface MemoryNetwork extends PortNetwork {
  /** Installation options that link over this network (and join no DHT). */
  options(): Partial<InstallationOptions>;
}

export function memoryNetwork(): MemoryNetwork {
  const listeners = new Map<string, { peer: PeerCertificate; accept: Accept; revision: number }>();
  let nextPort = 40_000;
  const network: MemoryNetwork = {
    options: () => ({ peerPorts: network }),
    listen(identity, host, port, accept, revision) {
      const bound = port === 0 ? nextPort++ : port;
      const key = `${host.includes(':') ? `[${host}]` : host}:${bound}`;
      if (listeners.has(key))
        return Promise.reject(Object.assign(new Error(`listen EADDRINUSE ${key}`), { code: 'EADDRINUSE' }));
      listeners.set(key, { peer: { fingerprint: identity.fingerprint, pem: identity.cert }, accept, revision });
      return Promise.resolve({
        address: { host, port: bound },
        close: () => {
          listeners.delete(key);
          return Promise.resolve();
        },
      });
    },
    dial(identity, address, revision, signal) {
      const listener = listeners.get(address);
      if (!listener) return Promise.reject(new Error(`connect ECONNREFUSED ${address}`));
      if (signal.aborted) return Promise.reject(new Error('cancelled: another path won'));
      // Both ends speak the newer revision both know, as the WebSocket subprotocol agrees it.
      const [ours, theirs] = memoryFramePorts(Math.min(revision, listener.revision));
      listener.accept(theirs, { fingerprint: identity.fingerprint, pem: identity.cert });
      return Promise.resolve({ port: ours, peer: listener.peer });
    },
  };
  return network;
}
