// The part of hyperdht (which ships no types) that the DHT carrier uses.
declare module 'hyperdht' {
  import type { Duplex } from 'node:stream';

  export interface KeyPair {
    publicKey: Buffer;
    secretKey: Buffer;
  }

  export interface HostPort {
    host: string;
    port: number;
  }

  /** An encrypted stream to one peer (a NoiseSecretStream). */
  export interface DhtStream extends Duplex {
    remotePublicKey: Buffer;
    publicKey: Buffer;
    rawStream: { remoteHost: string; remotePort: number } | null;
    relay?: unknown;
  }

  export interface DhtServer {
    listen(keyPair: KeyPair): Promise<void>;
    close(): Promise<void>;
    address(): { host: string | null; port: number; publicKey: Buffer } | null;
  }

  /** What the dialler's handshake says; `relayThrough` names the blind relay it asks to be joined through. */
  export interface HandshakePayload {
    relayThrough?: { publicKey: Buffer; token: Buffer } | null;
  }

  export interface ServerOptions {
    /** True rejects the connection (before any of its bytes reach us). */
    firewall?: (remotePublicKey: Buffer, payload: HandshakePayload, address: HostPort) => boolean;
    holepunch?: boolean | ((...args: unknown[]) => boolean);
    shareLocalAddress?: boolean;
  }

  export interface ConnectOptions {
    keyPair?: KeyPair;
    /** A blind relay's key: join through it when holepunching does not (hyperdht still tries to upgrade). */
    relayThrough?: Buffer | null;
    holepunch?: (...args: unknown[]) => boolean;
    localConnection?: boolean;
    fastOpen?: boolean;
  }

  /** A raw UDX stream, which a blind relay hands each pair it joins. */
  export interface RawStream {
    destroy(): void;
  }

  export interface DhtOptions {
    bootstrap?: (string | HostPort)[];
    keyPair?: KeyPair;
    host?: string;
    port?: number;
    ephemeral?: boolean;
    firewalled?: boolean;
  }

  export default class DHT {
    constructor(options?: DhtOptions);
    static keyPair(seed?: Buffer): KeyPair;
    static bootstrapper(port: number, host: string, options?: DhtOptions): DHT;
    readonly defaultKeyPair: KeyPair;
    readonly destroyed: boolean;
    createServer(options?: ServerOptions, onConnection?: (stream: DhtStream) => void): DhtServer;
    connect(remotePublicKey: Buffer, options?: ConnectOptions): DhtStream;
    createRawStream(options?: Record<string, unknown>): RawStream;
    fullyBootstrapped(): Promise<void>;
    ready(): Promise<void>;
    address(): { host: string; port: number };
    /** The address others can dial this node at directly, or null when it is firewalled. */
    remoteAddress: () => HostPort | null;
    destroy(options?: { force?: boolean }): Promise<void>;
  }
}

declare module '@hyperswarm/testnet' {
  import type DHT from 'hyperdht';
  import type { DhtOptions, HostPort } from 'hyperdht';

  export interface Testnet {
    nodes: DHT[];
    bootstrap: HostPort[];
    createNode(options?: DhtOptions): DHT;
    destroy(): Promise<void>;
  }

  export default function createTestnet(size?: number, options?: { host?: string; port?: number }): Promise<Testnet>;
}

declare module 'blind-relay' {
  import type { DhtStream, RawStream } from 'hyperdht';
  import type { EventEmitter } from 'node:events';

  export interface RelaySession extends EventEmitter {
    destroy(): void;
  }

  export class Server {
    constructor(options: { createStream(options: Record<string, unknown>): RawStream });
    accept(stream: DhtStream, options: { id: Buffer }): RelaySession;
    close(): Promise<void>;
  }
}
