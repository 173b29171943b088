// The DHT carrier: a HyperDHT node that listens under the installation's DHT key and
// dials peers by theirs. It only moves bytes; what travels over a stream is the same
// pinned mutual TLS as over TCP (./transport.ts), so a key that leads to someone else's
// certificate fails the pin like a wrong address does.
import { Duplex } from 'node:stream';
import DHT, { type ConnectOptions, type DhtServer, type DhtStream, type KeyPair } from 'hyperdht';
import { isLoopbackBootstrap, type DhtBootstrap } from '../net/dht-bootstrap';
import { BlindRelay } from './blind-relay-server';
import { carrierWrote } from './carrier-turn';
import { dhtSeed, type Identity } from './identity';

export interface CarriedPeer {
  /** The peer's DHT public key, hex. */
  key: string;
  /** Whom its place before authentication counts against: its UDP host, or its key when relayed. */
  gateKey: string;
  path: 'holepunched' | 'relayed';
  /** The blind relay's key (hex) the stream came through; null when not relayed. */
  relay: string | null;
}

export interface DhtCarrierOptions {
  identity: Identity;
  bootstrap: Exclude<DhtBootstrap, { kind: 'off' }>;
  /**
   * Decides, before any byte of it reaches TLS, whether a key may connect; `relay` is the
   * blind relay (hex key) it asks to be joined through, or null.
   */
  admit(key: string, host: string, relay: string | null): boolean;
  onStream(stream: Duplex, peer: CarriedPeer): void;
  /** Also run a blind relay for others, under its own key (`parley serve --relay`). */
  relay?: boolean;
  /**
   * False never holepunches, on either side, nor is dialled straight, so that a pair on
   * one machine must go through a relay as two randomising routers would (tests); default true.
   */
  holepunch?: boolean;
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
      carrierWrote();
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

/** A dial by key, as `DhtCarrier.connect` gives it. */
export interface DhtDial {
  stream: Duplex;
  path: () => CarriedPeer['path'];
  whenSilent: (ms: number, callback: () => void) => void;
}

/** Calls back once `raw` has been open `ms` with nothing received; never after a byte came or it closed. */
function whenSilent(raw: DhtStream, ms: number, callback: () => void): void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let heard = false;
  const stop = () => {
    heard = true;
    if (timer) clearTimeout(timer);
  };
  raw.once('open', () => {
    if (heard) return;
    timer = setTimeout(callback, ms);
    timer.unref();
  });
  raw.once('data', stop);
  raw.once('close', stop);
}

/** The installation's DHT key pair: derived, never stored. */
export function dhtKeyPair(identity: Pick<Identity, 'key'>): KeyPair {
  return DHT.keyPair(dhtSeed(identity));
}

/**
 * Who the stream is from and how it came. hyperdht does not mark a relayed stream, so the
 * relay is the one the dialler asked for (`relay`): it asks only once holepunching failed.
 */
export function describeStream(stream: DhtStream, relay: string | null): CarriedPeer {
  const key = stream.remotePublicKey.toString('hex');
  const host = stream.rawStream?.remoteHost;
  return {
    key,
    gateKey: relay || !host ? `key:${key}` : `udp:${host}`,
    path: relay ? 'relayed' : 'holepunched',
    relay,
  };
}

/** How long a probe waits for a relay to answer. */
export const RELAY_PROBE_MS = 5_000;

export class DhtCarrier {
  private constructor(
    private readonly node: DHT,
    private readonly server: DhtServer,
    private readonly keyPair: KeyPair,
    private readonly holepunch: boolean,
    /** Our own blind relay, when this installation serves as one. */
    readonly relay: BlindRelay | null,
  ) {}

  static async start(options: DhtCarrierOptions): Promise<DhtCarrier> {
    const keyPair = dhtKeyPair(options.identity);
    const { bootstrap } = options;
    const holepunch = options.holepunch ?? true;
    const node = new DHT({
      keyPair,
      ...(bootstrap.kind === 'nodes' ? { bootstrap: bootstrap.nodes } : {}),
      // A relay is there to be reached: as a persistent node it is dialled directly from the
      // start, where an ephemeral one is reached only by holepunching, which hyperdht paces
      // (one punch to a port-changing router per 20 s), so a relay just started joined no one.
      ...(options.relay ? { ephemeral: false } : {}),
      // A loopback network is reached from loopback only.
      ...(isLoopbackBootstrap(bootstrap) ? { host: '127.0.0.1' } : {}),
    });
    // Behind a router that changes ports on every connection nobody can dial this node
    // straight, whatever the DHT's reachability check finds on one machine: it never says
    // an address of its own, so a peer reaches it only through a relay.
    if (!holepunch) node.remoteAddress = () => null;
    /** The relay each admitted key asked for, until its stream opens. */
    const asked = new Map<string, string | null>();
    const server = node.createServer(
      {
        firewall: (remotePublicKey, payload, address) => {
          const key = remotePublicKey.toString('hex');
          const relay = payload?.relayThrough?.publicKey.toString('hex') ?? null;
          if (!options.admit(key, address.host, relay)) return true;
          asked.set(key, relay);
          return false;
        },
        ...(holepunch ? {} : { holepunch: false, shareLocalAddress: false }),
      },
      (stream) => {
        stream.on('error', () => stream.destroy());
        const key = stream.remotePublicKey.toString('hex');
        const relay = asked.get(key) ?? null;
        asked.delete(key);
        options.onStream(nodeStream(stream), describeStream(stream, relay));
      },
    );
    let relay: BlindRelay | null = null;
    try {
      await server.listen(keyPair);
      if (options.relay) relay = await BlindRelay.start(node, options.identity);
    } catch (error) {
      await node.destroy({ force: true });
      throw error;
    }
    return new DhtCarrier(node, server, keyPair, holepunch, relay);
  }

  /** Our DHT public key, hex: what invitations carry. */
  get publicKey(): string {
    return this.keyPair.publicKey.toString('hex');
  }

  /**
   * A stream to the peer with this key (hex); it opens, or errors when the peer cannot be
   * reached. `path` says how it went, once open; `whenSilent` calls back if it has been
   * open `ms` without a byte from the peer.
   */
  connect(key: string, relay: string | null = null): DhtDial {
    const options: ConnectOptions = { keyPair: this.keyPair };
    if (relay) options.relayThrough = Buffer.from(relay, 'hex');
    if (!this.holepunch) Object.assign(options, { holepunch: () => false, localConnection: false, fastOpen: false });
    const raw = this.node.connect(Buffer.from(key, 'hex'), options);
    return {
      stream: nodeStream(raw),
      path: () => describeStream(raw, relay).path,
      whenSilent: (ms, callback) => whenSilent(raw, ms, callback),
    };
  }

  /** Whether a blind relay answers at this key now (a stream to it opens within RELAY_PROBE_MS). */
  probe(key: string): Promise<boolean> {
    return new Promise((resolve) => {
      const raw = this.node.connect(Buffer.from(key, 'hex'), { keyPair: this.keyPair });
      const done = (answered: boolean) => {
        clearTimeout(timer);
        raw.destroy();
        resolve(answered);
      };
      const timer = setTimeout(() => done(false), RELAY_PROBE_MS);
      timer.unref();
      raw.once('open', () => done(true));
      raw.once('error', () => done(false));
      raw.once('close', () => done(false));
    });
  }

  async close(): Promise<void> {
    await this.relay?.close();
    await this.server.close().catch(() => undefined);
    await this.node.destroy({ force: true });
  }
}
