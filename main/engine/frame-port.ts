// What a peer link runs over: something that carries one frame's text per message,
// closes with a code, and answers pings. Over TLS it is a `ws` WebSocket; in tests it
// can be an in-memory pair, so the link's handshake and states are tested without
// sockets as well as over real ones.
import type { TLSSocket } from 'node:tls';
import type WebSocket from 'ws';
import { log } from '../log';
import { closeReason, PROTOCOL_REVISION, revisionOf } from './wire';

export interface FramePortEvents {
  message(data: Buffer | string, isBinary: boolean): void;
  close(code: number, reason: string): void;
  pong(): void;
}

export interface FramePort {
  /** The revision of protocol 2 both ends agreed to when the port opened (see wire.ts). */
  readonly revision: number;
  /** Sends one frame's text; false when the port is no longer open. */
  send(data: string): boolean;
  /** Starts the closing handshake with a code and a reason people can read. */
  close(code: number, reason: string): void;
  /** Ends it at once (a peer that does not finish the closing handshake). */
  terminate(): void;
  ping(): void;
  /** Set once, by the link that owns the port. */
  listen(events: FramePortEvents): void;
}

/** A WebSocket over TLS as a frame port. */
export function wsFramePort(ws: WebSocket, socket: TLSSocket): FramePort {
  let corked = false;
  return {
    // The subprotocol the listener chose, as both ends see it.
    revision: revisionOf(ws.protocol),
    send(data) {
      if (ws.readyState !== ws.OPEN) return false;
      // Frames sent in the same tick (a group commit's texts or acks) leave in one
      // write: one syscall and TLS record instead of one each, and the peer reads the
      // burst at once, so it commits it as one batch rather than the first frame alone.
      if (!corked) {
        corked = true;
        socket.cork();
        process.nextTick(() => {
          corked = false;
          socket.uncork();
        });
      }
      ws.send(data);
      return true;
    },
    close(code, reason) {
      ws.close(code, closeReason(reason));
    },
    terminate() {
      ws.terminate();
    },
    ping() {
      ws.ping();
    },
    listen(events) {
      ws.on('message', (data: Buffer, isBinary) => events.message(data, isBinary));
      ws.on('close', (code, reason) => events.close(code, reason.toString()));
      ws.on('error', (error) => log.warn('peer socket error', { error: error.message }));
      ws.on('pong', () => events.pong());
    },
  };
}

/**
 * Two connected in-memory ports that agreed to `revision`. Messages arrive in order, each
 * in a later turn of the event loop (as from a socket); a close reaches both sides with
 * its code and reason.
 */
export function memoryFramePorts(revision = PROTOCOL_REVISION): [FramePort, FramePort] {
  type End = { events: FramePortEvents | null; early: Array<() => void>; open: boolean };
  const ends: [End, End] = [
    { events: null, early: [], open: true },
    { events: null, early: [], open: true },
  ];
  const deliver = (to: End, fn: (events: FramePortEvents) => void) => {
    setImmediate(() => {
      if (to.events) fn(to.events);
      else to.early.push(() => fn(to.events!));
    });
  };
  const port = (self: End, other: End): FramePort => {
    const shut = (code: number, reason: string) => {
      if (!self.open) return;
      self.open = false;
      other.open = false;
      deliver(self, (events) => events.close(code, reason));
      deliver(other, (events) => events.close(code, reason));
    };
    return {
      revision,
      send(data) {
        if (!self.open) return false;
        deliver(other, (events) => events.message(data, false));
        return true;
      },
      close: (code, reason) => shut(code, closeReason(reason)),
      terminate: () => shut(1006, ''),
      ping() {
        if (self.open) deliver(self, (events) => events.pong());
      },
      listen(events) {
        self.events = events;
        for (const fn of self.early.splice(0)) fn();
      },
    };
  };
  return [port(ends[0], ends[1]), port(ends[1], ends[0])];
}
