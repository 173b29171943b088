// One live WebSocket to a peer, after TLS: the hello exchange, then frames. States
// are explicit; a protocol violation closes the socket with a code that says why.
import type { TLSSocket } from 'node:tls';
import type WebSocket from 'ws';
import { log } from '../log';
import {
  CloseCode,
  closeReason,
  decodeFrame,
  encodeFrame,
  ProtocolError,
  type AckFrame,
  type Frame,
  type HelloFrame,
} from './wire';
import type { PeerCertificate } from './transport';

export type LinkState = 'handshake' | 'open' | 'closed';

/** A text on the wire: its seq, and its row so its ack can update it by id. */
export interface InFlight {
  seq: number;
  textId: number;
}

const HELLO_TIMEOUT_MS = 10_000;
const PING_EVERY_MS = 15_000;
/** Frames a peer may send between its hello and the link opening here (its roles, a resend). */
const MAX_EARLY_FRAMES = 10_000;

export class PeerLink {
  state: LinkState = 'handshake';
  /** Set once the connection row exists (at once for known peers, after pairing otherwise). */
  connectionId: number | null;
  /** Per thread row id, the text on the wire waiting for its ack. */
  readonly inFlight = new Map<number, InFlight>();
  /**
   * Acks read since the group commit that records them was queued; null once it ran or
   * another frame came in after them (acks never pass a frame that came before them).
   */
  acks: AckFrame[] | null = null;
  private helloWaiter: { resolve: (hello: HelloFrame) => void; reject: (error: Error) => void } | null = null;
  private onFrame: ((frame: Frame) => void) | null = null;
  private readonly closeListeners: Array<(code: number, reason: string) => void> = [];
  private pingTimer: NodeJS.Timeout | null = null;
  private alive = true;
  private corked = false;
  /** Frames that came after the peer's hello, before `open()`: the peer may send them at once. */
  private early: Frame[] | null = null;

  constructor(
    readonly ws: WebSocket,
    /** The TLS socket under `ws`. */
    private readonly socket: TLSSocket,
    readonly peer: PeerCertificate,
    /** The fingerprint of the side that dialled: decides which link survives a race. */
    readonly dialledBy: string,
    connectionId: number | null,
  ) {
    this.connectionId = connectionId;
    ws.on('message', (data: Buffer, isBinary) => this.receive(data, isBinary));
    ws.on('close', (code, reason) => this.closed(code, reason.toString()));
    ws.on('error', (error) => log.warn('peer socket error', { error: error.message }));
    ws.on('pong', () => {
      this.alive = true;
    });
  }

  /** Waits for the peer's hello (the first frame it may send). */
  hello(): Promise<HelloFrame> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error('the peer did not say hello in time'));
        this.close(CloseCode.protocolError, 'no hello');
      }, HELLO_TIMEOUT_MS);
      this.helloWaiter = {
        resolve: (hello) => {
          clearTimeout(timer);
          resolve(hello);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
    });
  }

  /** Switches to the open state: frames go to `onFrame` from now on. */
  open(onFrame: (frame: Frame) => void): void {
    this.state = 'open';
    this.onFrame = onFrame;
    const early = this.early;
    this.early = null;
    for (const frame of early ?? []) onFrame(frame);
    this.pingTimer = setInterval(() => {
      if (!this.alive) {
        this.ws.terminate();
        return;
      }
      this.alive = false;
      this.ws.ping();
    }, PING_EVERY_MS);
    this.pingTimer.unref();
  }

  send(frame: Frame): boolean {
    if (this.state === 'closed' || this.ws.readyState !== this.ws.OPEN) return false;
    // Frames sent in the same tick (a group commit's texts or acks) leave in one write:
    // one syscall and TLS record run instead of one each, and the peer reads the burst
    // at once, so it commits it as one batch rather than the first frame alone and the
    // rest after (wire benchmark, issue 3).
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    this.ws.send(encodeFrame(frame));
    return true;
  }

  onClose(listener: (code: number, reason: string) => void): void {
    this.closeListeners.push(listener);
  }

  close(code: number, reason: string): void {
    if (this.state === 'closed') return;
    this.ws.close(code, closeReason(reason));
    // A peer that does not finish the closing handshake is cut off.
    setTimeout(() => this.ws.terminate(), 2_000).unref();
  }

  private receive(data: Buffer, isBinary: boolean): void {
    if (this.state === 'closed') return;
    let frame: Frame;
    try {
      if (isBinary) throw new ProtocolError(CloseCode.protocolError, 'binary frames are not part of the protocol');
      frame = decodeFrame(data);
    } catch (error) {
      const protocolError =
        error instanceof ProtocolError ? error : new ProtocolError(CloseCode.protocolError, 'bad frame');
      log.warn('closing a peer socket: protocol error', { reason: protocolError.message });
      this.helloWaiter?.reject(protocolError);
      this.close(protocolError.closeCode, protocolError.message);
      return;
    }
    if (this.state === 'handshake') {
      if (this.early) {
        // The hello came; what follows it waits for the link to open.
        if (frame.type === 'hello') this.close(CloseCode.protocolError, 'hello after the handshake');
        else if (this.early.length >= MAX_EARLY_FRAMES)
          this.close(CloseCode.protocolError, 'too many frames before open');
        else this.early.push(frame);
        return;
      }
      if (frame.type !== 'hello') {
        this.helloWaiter?.reject(new ProtocolError(CloseCode.protocolError, `expected hello, got ${frame.type}`));
        this.close(CloseCode.protocolError, `expected hello, got ${frame.type}`);
        return;
      }
      const waiter = this.helloWaiter;
      this.helloWaiter = null;
      this.early = [];
      waiter?.resolve(frame);
      return;
    }
    if (frame.type === 'hello') {
      this.close(CloseCode.protocolError, 'hello after the handshake');
      return;
    }
    this.onFrame?.(frame);
  }

  private closed(code: number, reason: string): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.helloWaiter?.reject(
      new Error(reason ? `the peer closed the connection: ${reason}` : `the connection closed (${code})`),
    );
    this.helloWaiter = null;
    for (const listener of this.closeListeners) listener(code, reason);
  }
}
