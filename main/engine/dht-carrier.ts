// The DHT carrier: a HyperDHT node that listens under the installation's DHT key and
// dials peers by theirs. It only moves bytes; what travels over a stream is the same
// pinned mutual TLS as over TCP (./transport.ts), so a key that leads to someone else's
// certificate fails the pin like a wrong address does.
import { Duplex } from 'node:stream';
import DHT, { type DhtServer, type DhtStream, type KeyPair } from 'hyperdht';
import { isLoopbackBootstrap, type DhtBootstrap } from '../net/dht-bootstrap';
import { dhtSeed, type Identity } from './identity';

export interface CarriedPeer {
  /** The peer's DHT public key, hex. */
  key: string;
  /** Whom its place before authentication counts against: its UDP host, or its key when relayed. */
  gateKey: string;
  path: 'holepunched' | 'relayed';
}

export interface DhtCarrierOptions {
  identity: Identity;
  bootstrap: Exclude<DhtBootstrap, { kind: 'off' }>;
  /** Decides, before any byte of it reaches TLS, whether a key may connect. */
  admit(key: string, host: string): boolean;
  onStream(stream: Duplex, peer: CarriedPeer): void;
}

/**
 * A Node stream over HyperDHT's (a streamx stream): Node's TLS over the streamx stream
 * itself never finishes its handshake on the server side, over this it does.
 */
export function nodeStream(raw: DhtStream): Duplex {
  const duplex = new Duplex({
    read() {
      raw.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      if (raw.write(chunk)) callback();
      else raw.once('drain', () => callback());
    },
    final(callback) {
      raw.end();
      callback();
    },
    destroy(error, callback) {
      raw.destroy();
      callback(error);
    },
  });
  raw.on('data', (chunk: Buffer) => {
    if (!duplex.push(chunk)) raw.pause();
  });
  raw.on('end', () => duplex.push(null));
  raw.on('error', (error: Error) => duplex.destroy(error));
  raw.on('close', () => duplex.destroy());
  return duplex;
}

/** The installation's DHT key pair: derived, never stored. */
export function dhtKeyPair(identity: Pick<Identity, 'key'>): KeyPair {
  return DHT.keyPair(dhtSeed(identity));
}

export function describeStream(stream: DhtStream): CarriedPeer {
  const key = stream.remotePublicKey.toString('hex');
  const relayed = Boolean(stream.relay);
  const host = stream.rawStream?.remoteHost;
  return { key, gateKey: relayed || !host ? `key:${key}` : `udp:${host}`, path: relayed ? 'relayed' : 'holepunched' };
}

export class DhtCarrier {
  private constructor(
    private readonly node: DHT,
    private readonly server: DhtServer,
    private readonly keyPair: KeyPair,
  ) {}

  static async start(options: DhtCarrierOptions): Promise<DhtCarrier> {
    const keyPair = dhtKeyPair(options.identity);
    const { bootstrap } = options;
    const node = new DHT({
      keyPair,
      ...(bootstrap.kind === 'nodes' ? { bootstrap: bootstrap.nodes } : {}),
      // A loopback network is reached from loopback only.
      ...(isLoopbackBootstrap(bootstrap) ? { host: '127.0.0.1' } : {}),
    });
    const server = node.createServer(
      {
        firewall: (remotePublicKey, _payload, address) => !options.admit(remotePublicKey.toString('hex'), address.host),
      },
      (stream) => {
        stream.on('error', () => stream.destroy());
        options.onStream(nodeStream(stream), describeStream(stream));
      },
    );
    try {
      await server.listen(keyPair);
    } catch (error) {
      await node.destroy({ force: true });
      throw error;
    }
    return new DhtCarrier(node, server, keyPair);
  }

  /** Our DHT public key, hex: what invitations carry. */
  get publicKey(): string {
    return this.keyPair.publicKey.toString('hex');
  }

  /**
   * A stream to the peer with this key (hex); it opens, or errors when the peer cannot be
   * reached. `path` says how it went, once open.
   */
  connect(key: string): { stream: Duplex; path: () => CarriedPeer['path'] } {
    const raw = this.node.connect(Buffer.from(key, 'hex'), { keyPair: this.keyPair });
    return { stream: nodeStream(raw), path: () => describeStream(raw).path };
  }

  async close(): Promise<void> {
    await this.server.close().catch(() => undefined);
    await this.node.destroy({ force: true });
  }
}
