// One link to a peer, as a transport: frames over a FramePort (a TLS WebSocket, or an
// in-memory pair in tests), with explicit states. It knows nothing of connections or
// agent conversations; the engine decides what the hello means and what frames do.
//
//   awaiting-hello ──hello──▶ hello-received ──open()──▶ open
//          │                         │                     │
//          └──── close, timeout, protocol error ───────────┴──▶ closing ──▶ closed
//
// In `hello-received` the peer may already send more (its roles, a resend) before the
// engine has decided: those frames wait, in order, until `open()`. A frame that breaks
// the protocol closes the link with a code that says why. A frame of a revision the
// link did not agree to is never sent (wire.ts, version rules). From revision 3 the frames
// sent in one tick leave as one message (a commit's texts or acks), and a message of
// several frames is checked whole before any of them is taken.
import { log } from '../log';
import { HELLO_TIMEOUT_MS } from '../net/limits';
import type { FramePort } from './frame-port';
import type { PeerCertificate } from './transport';
import {
  BATCH_REVISION,
  CloseCode,
  decodeMessage,
  encodeFrame,
  encodeMessage,
  ProtocolError,
  revisionNeeded,
  type Frame,
  type HelloFrame,
} from './wire';

export type LinkState = 'awaiting-hello' | 'hello-received' | 'open' | 'closing' | 'closed';

const PING_EVERY_MS = 15_000;
/** Frames a peer may send between its hello and the link opening here (its roles, a resend). */
const MAX_EARLY_FRAMES = 10_000;
/** A peer that does not finish the closing handshake is cut off after this. */
const CLOSE_GRACE_MS = 2_000;
/**
 * A message of several frames stays under this many characters: at most three bytes
 * each in UTF-8, well below the peer's MAX_FRAME_BYTES. A longer frame goes alone.
 */
const MAX_BATCH_CHARS = 64 * 1024;

export class PeerLink {
  private current: LinkState = 'awaiting-hello';
  private theirHello: HelloFrame | null = null;
  private helloWaiters: Array<{ resolve: (hello: HelloFrame) => void; reject: (error: Error) => void }> = [];
  private failure: Error | null = null;
  /** Frames that came after the peer's hello, before `open()`. */
  private readonly early: Frame[] = [];
  private onFrame: ((frame: Frame) => void) | null = null;
  private readonly closeListeners: Array<(code: number, reason: string) => void> = [];
  private readonly helloTimer: NodeJS.Timeout;
  private pingTimer: NodeJS.Timeout | null = null;
  private alive = true;
  /** Frames sent this tick, encoded, to leave as one message (revision 3). */
  private pending: string[] = [];
  private pendingChars = 0;
  /** A frame of the message being read broke the protocol: the rest of it is not taken. */
  private broken = false;

  constructor(
    private readonly port: FramePort,
    /** The peer's certificate, pinned or about to be. */
    readonly peer: PeerCertificate,
    /** The fingerprint of the side that dialled: decides which link survives a race. */
    readonly dialledBy: string,
  ) {
    port.listen({
      message: (data, isBinary) => this.receive(data, isBinary),
      close: (code, reason) => this.closed(code, reason),
      pong: () => {
        this.alive = true;
      },
    });
    this.helloTimer = setTimeout(() => {
      this.fail(new ProtocolError(CloseCode.protocolError, 'the peer did not say hello in time'));
      this.close(CloseCode.protocolError, 'no hello');
    }, HELLO_TIMEOUT_MS);
    this.helloTimer.unref();
  }

  get state(): LinkState {
    return this.current;
  }

  /** The revision of protocol 2 both sides speak on this link. */
  get revision(): number {
    return this.port.revision;
  }

  /** The peer's hello: resolves once it came; rejects if the link ends first. */
  hello(): Promise<HelloFrame> {
    if (this.theirHello) return Promise.resolve(this.theirHello);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.helloWaiters.push({ resolve, reject }));
  }

  /** hello-received → open: frames go to `onFrame` from now on, the early ones first. */
  open(onFrame: (frame: Frame) => void): void {
    if (this.current !== 'hello-received') throw new Error(`a link cannot open from ${this.current}`);
    this.current = 'open';
    this.onFrame = onFrame;
    for (const frame of this.early.splice(0)) {
      if (this.current !== 'open') return;
      onFrame(frame);
    }
    this.pingTimer = setInterval(() => {
      if (!this.alive) {
        this.port.terminate();
        return;
      }
      this.alive = false;
      this.port.ping();
    }, PING_EVERY_MS);
    this.pingTimer.unref();
  }

  /** False when the frame did not go: the link is closing, or the peer did not agree to the frame's revision. */
  send(frame: Frame): boolean {
    if (this.current === 'closing' || this.current === 'closed') return false;
    if (revisionNeeded(frame) > this.port.revision) return false;
    const encoded = encodeFrame(frame);
    if (this.port.revision < BATCH_REVISION) return this.port.send(encoded);
    if (this.pendingChars + encoded.length > MAX_BATCH_CHARS && !this.flush()) return false;
    this.pending.push(encoded);
    this.pendingChars += encoded.length;
    if (this.pending.length === 1) process.nextTick(this.flushPending);
    return true;
  }

  /** Sends the frames waiting as one message; false when the port is no longer open. */
  private flush(): boolean {
    if (this.pending.length === 0) return true;
    const message = encodeMessage(this.pending);
    this.pending = [];
    this.pendingChars = 0;
    return this.port.send(message);
  }

  private readonly flushPending = (): void => {
    this.flush();
  };

  onClose(listener: (code: number, reason: string) => void): void {
    this.closeListeners.push(listener);
  }

  /** Starts closing; frames the peer sent before it saw the close still arrive. */
  close(code: number, reason: string): void {
    if (this.current === 'closing' || this.current === 'closed') return;
    // What was sent before the close goes before it.
    this.flush();
    this.current = 'closing';
    this.port.close(code, reason);
    setTimeout(() => this.port.terminate(), CLOSE_GRACE_MS).unref();
  }

  private receive(data: Buffer | string, isBinary: boolean): void {
    if (this.current === 'closed') return;
    let frames: Frame[];
    try {
      if (isBinary) throw new ProtocolError(CloseCode.protocolError, 'binary frames are not part of the protocol');
      frames = decodeMessage(data, this.port.revision);
    } catch (error) {
      const protocolError =
        error instanceof ProtocolError ? error : new ProtocolError(CloseCode.protocolError, 'bad frame');
      log.warn('closing a peer socket: protocol error', { reason: protocolError.message });
      this.fail(protocolError);
      this.close(protocolError.closeCode, protocolError.message);
      return;
    }
    this.broken = false;
    for (const frame of frames) {
      this.receiveFrame(frame);
      if (this.broken) return;
    }
  }

  private receiveFrame(frame: Frame): void {
    switch (this.current) {
      case 'awaiting-hello':
        if (frame.type !== 'hello') {
          this.protocolError(`expected hello, got ${frame.type}`);
          return;
        }
        clearTimeout(this.helloTimer);
        this.current = 'hello-received';
        this.theirHello = frame;
        for (const waiter of this.helloWaiters.splice(0)) waiter.resolve(frame);
        return;
      case 'hello-received':
        if (frame.type === 'hello') this.protocolError('hello after the handshake');
        else if (this.early.length >= MAX_EARLY_FRAMES) this.protocolError('too many frames before open');
        else this.early.push(frame);
        return;
      case 'open':
      case 'closing':
        if (frame.type === 'hello') this.protocolError('hello after the handshake');
        else this.onFrame?.(frame);
        return;
    }
  }

  private protocolError(message: string): void {
    this.broken = true;
    this.fail(new ProtocolError(CloseCode.protocolError, message));
    this.close(CloseCode.protocolError, message);
  }

  /** The hello will never come: whoever waits for it hears why. */
  private fail(error: Error): void {
    if (this.theirHello || this.failure) return;
    this.failure = error;
    for (const waiter of this.helloWaiters.splice(0)) waiter.reject(error);
  }

  private closed(code: number, reason: string): void {
    if (this.current === 'closed') return;
    this.current = 'closed';
    clearTimeout(this.helloTimer);
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.fail(new Error(reason ? `the peer closed the connection: ${reason}` : `the connection closed (${code})`));
    for (const listener of this.closeListeners) listener(code, reason);
  }
}
