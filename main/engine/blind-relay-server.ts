// A blind relay (`parley serve --relay`): it joins two DHT peers whose routers both
// randomise ports, passing their already end-to-end encrypted UDX packets along. It sees
// which keys talk and how many bytes, never content: what travels is Noise over UDX, and
// inside that the pinned mutual TLS of the link. It listens under a key of its own,
// derived from the identity, so the address people add stays the same across restarts.
import { Server as RelayServer, type RelaySession } from 'blind-relay';
import DHT, { type DhtServer, type DhtStream, type KeyPair } from 'hyperdht';
import { relaySeed, type Identity } from './identity';

/** Relays at most this many peers at once; more are refused at the door. */
export const MAX_RELAY_SESSIONS = 256;

export function relayKeyPair(identity: Pick<Identity, 'key'>): KeyPair {
  return DHT.keyPair(relaySeed(identity));
}

export class BlindRelay {
  private constructor(
    private readonly relay: RelayServer,
    private readonly server: DhtServer,
    private readonly sessions: Set<DhtStream>,
    /** The relay's DHT public key, hex: what people add to their relays. */
    readonly key: string,
  ) {}

  /** Peers connected to the relay now. */
  get active(): number {
    return this.sessions.size;
  }

  /** Listens on `node` (the installation's own DHT node) under the relay's key. */
  static async start(node: DHT, identity: Identity, maxSessions = MAX_RELAY_SESSIONS): Promise<BlindRelay> {
    const keyPair = relayKeyPair(identity);
    const relay = new RelayServer({ createStream: (options) => node.createRawStream({ ...options, framed: true }) });
    const sessions = new Set<DhtStream>();
    const server = node.createServer({}, (stream) => {
      stream.on('error', () => stream.destroy());
      if (sessions.size >= maxSessions) {
        stream.destroy();
        return;
      }
      sessions.add(stream);
      stream.once('close', () => sessions.delete(stream));
      let session: RelaySession;
      try {
        session = relay.accept(stream, { id: stream.remotePublicKey });
      } catch {
        stream.destroy();
        return;
      }
      session.on('error', () => stream.destroy());
    });
    await server.listen(keyPair);
    return new BlindRelay(relay, server, sessions, keyPair.publicKey.toString('hex'));
  }

  async close(): Promise<void> {
    await this.relay.close().catch(() => undefined);
    await this.server.close().catch(() => undefined);
  }
}
