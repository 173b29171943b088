// Bytes on a socket, for tests of what servers do with input no well-behaved client
// sends: a raw HTTP request, a hand-made WebSocket handshake and frames with any
// opcode, bits or length.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import type tls from 'node:tls';

export function connectTcp(port: number, options: { host?: string; localAddress?: string } = {}): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: options.host ?? '127.0.0.1', localAddress: options.localAddress });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Resolves when the socket is closed by either side; never rejects. What it reads is dropped. */
export function closed(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) resolve();
    else {
      socket.once('close', () => resolve());
      // A paused socket never sees the other side's end.
      if (socket.listenerCount('data') === 0) socket.resume();
    }
  });
}

/**
 * Writes `request` as it is and collects the answer until the server closes the socket
 * (or `idleMs` pass without more bytes, for servers that keep it open).
 */
export async function rawExchange(
  port: number,
  request: Buffer | string,
  options: { idleMs?: number; socketPath?: string } = {},
): Promise<string> {
  const socket = options.socketPath
    ? await new Promise<net.Socket>((resolve, reject) => {
        const s = net.connect(options.socketPath!);
        s.once('connect', () => resolve(s));
        s.once('error', reject);
      })
    : await connectTcp(port);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | null = null;
    const done = () => {
      if (timer) clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    const idle = () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(done, options.idleMs ?? 3_000);
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      idle();
    });
    socket.on('error', () => {});
    socket.on('close', done);
    socket.write(request);
    idle();
  });
}

/** The status code of an HTTP answer, or null when there was none. */
export function statusOf(response: string): number | null {
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(response);
  return match ? Number(match[1]) : null;
}

export interface WsFrameOptions {
  opcode: number;
  payload?: Buffer | string;
  fin?: boolean;
  /** The three reserved bits, 0–7. */
  rsv?: number;
  /** Clients must mask; false sends the payload as it is. */
  mask?: boolean;
  /** A length to announce instead of the payload's. */
  declaredLength?: number;
}

/** One WebSocket frame as a client would write it (RFC 6455 §5.2). */
export function wsFrame(options: WsFrameOptions): Buffer {
  const payload = Buffer.isBuffer(options.payload) ? options.payload : Buffer.from(options.payload ?? '', 'utf8');
  const length = options.declaredLength ?? payload.length;
  const mask = options.mask ?? true;
  const head: number[] = [((options.fin ?? true) ? 0x80 : 0) | ((options.rsv ?? 0) << 4) | (options.opcode & 0x0f)];
  const maskBit = mask ? 0x80 : 0;
  let extended = Buffer.alloc(0);
  if (length < 126) head.push(maskBit | length);
  else if (length < 65536) {
    head.push(maskBit | 126);
    extended = Buffer.alloc(2);
    extended.writeUInt16BE(length);
  } else {
    head.push(maskBit | 127);
    extended = Buffer.alloc(8);
    extended.writeBigUInt64BE(BigInt(length));
  }
  if (!mask) return Buffer.concat([Buffer.from(head), extended, payload]);
  const key = randomBytes(4);
  const masked = Buffer.from(payload);
  for (let i = 0; i < masked.length; i++) masked[i]! ^= key[i % 4]!;
  return Buffer.concat([Buffer.from(head), extended, key, masked]);
}

export interface ServerFrame {
  opcode: number;
  payload: Buffer;
}

/** A WebSocket opened by hand on a raw socket: write any bytes, read the server's frames. */
export class RawWebSocket {
  readonly frames: ServerFrame[] = [];
  ended = false;
  private buffer: Buffer;
  private readonly waiters: Array<() => void> = [];

  constructor(
    readonly socket: net.Socket | tls.TLSSocket,
    leftover: Buffer,
  ) {
    this.buffer = leftover;
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      this.ended = true;
      this.wake();
    });
    this.parse();
  }

  /**
   * Opens one with a hand-written handshake; `headers` add to (or, set to null, remove)
   * the usual ones. Resolves with the socket and the server's status line.
   */
  static async open(
    socket: net.Socket | tls.TLSSocket,
    path: string,
    host: string,
    headers: Record<string, string | null> = {},
  ): Promise<{ ws: RawWebSocket | null; status: number | null; response: string }> {
    const all: Record<string, string | null> = {
      Host: host,
      Upgrade: 'websocket',
      Connection: 'Upgrade',
      'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
      'Sec-WebSocket-Version': '13',
      ...headers,
    };
    const lines = Object.entries(all)
      .filter((entry): entry is [string, string] => entry[1] !== null)
      .map(([name, value]) => `${name}: ${value}`);
    socket.write(`GET ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
    const { head, rest } = await readHead(socket);
    const status = statusOf(head);
    if (status !== 101) {
      socket.destroy();
      return { ws: null, status, response: head };
    }
    return { ws: new RawWebSocket(socket, rest), status, response: head };
  }

  send(frame: Buffer): void {
    if (!this.socket.destroyed) this.socket.write(frame);
  }

  /** The code of the server's close frame; null when the socket ended without one. */
  async closeCode(): Promise<number | null> {
    for (;;) {
      const close = this.frames.find((f) => f.opcode === 8);
      if (close) return close.payload.length >= 2 ? close.payload.readUInt16BE(0) : 1005;
      if (this.ended) return null;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Resolves with the next text frame's payload, or null once the socket ended. */
  async nextText(from = 0): Promise<string | null> {
    for (;;) {
      const text = this.frames.slice(from).find((f) => f.opcode === 1);
      if (text) return text.payload.toString('utf8');
      if (this.ended || this.frames.some((f) => f.opcode === 8)) return null;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  destroy(): void {
    this.socket.destroy();
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  private parse(): void {
    for (;;) {
      const buf = this.buffer;
      if (buf.length < 2) break;
      let length = buf[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buf.length < 4) break;
        length = buf.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buf.length < 10) break;
        length = Number(buf.readBigUInt64BE(2));
        offset = 10;
      }
      if (buf.length < offset + length) break;
      this.frames.push({ opcode: buf[0]! & 0x0f, payload: buf.subarray(offset, offset + length) });
      this.buffer = buf.subarray(offset + length);
    }
    this.wake();
  }
}

/** Reads an HTTP response head; resolves with it and whatever bytes came after it. */
function readHead(socket: net.Socket | tls.TLSSocket): Promise<{ head: string; rest: Buffer }> {
  return new Promise((resolve) => {
    let buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      cleanup();
      resolve({ head: buffer.subarray(0, end).toString('latin1'), rest: buffer.subarray(end + 4) });
    };
    const onEnd = () => {
      cleanup();
      resolve({ head: buffer.toString('latin1'), rest: Buffer.alloc(0) });
    };
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('close', onEnd);
    };
    socket.on('data', onData);
    socket.on('close', onEnd);
    socket.on('error', () => {});
  });
}

/** A small seeded generator, so a fuzz run that fails can be repeated with its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
