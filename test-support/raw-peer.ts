// A peer driven by hand: a real, paired identity whose frames a test writes itself,
// so it can hold back an ack, reject late, or say something a real peer would not.
import { randomBytes } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type WebSocket from 'ws';
import type { Identity } from '../main/engine/identity';
import { dialPeer } from '../main/engine/transport';
import type { Frame } from '../main/engine/wire';
import { openPeer } from './network';

/** A raw protocol client: sends frames, collects what comes back. */
export class RawPeer {
  readonly frames: Frame[] = [];
  /** WebSocket messages received (a message of revision 3 may carry several frames). */
  messages = 0;
  closed: { code: number; reason: string } | null = null;
  private waiters: Array<() => void> = [];

  constructor(
    readonly ws: WebSocket,
    private readonly socket: TLSSocket,
  ) {
    ws.on('message', (data: Buffer) => {
      // From revision 3 one message may carry several frames, as an array.
      const message = JSON.parse(data.toString('utf8')) as Frame | Frame[];
      this.frames.push(...(Array.isArray(message) ? message : [message]));
      this.messages++;
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
    ws.on('error', () => {});
  }

  /**
   * Dials `address` as `identity` and says hello (unless `hello` is null), offering the
   * revisions of protocol 2 up to `revision` (null: none, as Parley before revisions).
   */
  static async dial(
    identity: Identity,
    address: string,
    fingerprint: string,
    hello: object | null = { type: 'hello', protocol: 2, name: 'mallory', address: null },
    options: { revision?: number | null } = {},
  ): Promise<RawPeer> {
    const { ws, socket } = await dialPeer(identity, address, fingerprint, options);
    const raw = new RawPeer(ws, socket);
    if (hello) raw.send(hello);
    return raw;
  }

  private wake() {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  send(frame: object | string): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Sends the frames in one write, so the other side reads them at once. */
  sendTogether(frames: object[]): void {
    this.socket.cork();
    for (const frame of frames) this.send(frame);
    this.socket.uncork();
  }

  /** Resolves with the first frame (from `from` on) that matches. */
  async next<T extends Frame['type']>(
    type: T,
    match: (f: Extract<Frame, { type: T }>) => boolean = () => true,
    from = 0,
    timeoutMs = 15_000,
  ) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.slice(from).find((f) => f.type === type && match(f as Extract<Frame, { type: T }>));
      if (found) return found as Extract<Frame, { type: T }>;
      if (this.closed) throw new Error(`closed (${this.closed.code} ${this.closed.reason}) before a ${type} frame`);
      if (Date.now() > deadline) throw new Error(`no ${type} frame`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 500);
      });
    }
  }

  async closedWith(): Promise<{ code: number; reason: string }> {
    while (!this.closed) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return this.closed;
  }

  /**
   * A barrier: sends a text the other side must refuse at once (to a role that does not
   * exist) and waits for the refusal. Frames are handled in order, so everything this
   * peer sent before has been handled, and everything the other side sent before the
   * refusal has arrived.
   */
  async roundTrip(): Promise<void> {
    const thread = newThreadId();
    this.send({ type: 'text', thread, seq: 1, from: 'barrier', to: 'no-such-role', body: 'barrier' });
    await this.next('reject', (f) => f.thread === thread);
  }

  close(): void {
    this.ws.terminate();
  }
}

export const newThreadId = () => randomBytes(16).toString('base64url');

/**
 * A paired identity for a hand-driven peer: a real installation named `name` makes
 * `roles` (scripted), accepts `code` exposing `exposes`, waits until it is online with
 * the inviter's roles, and closes, its folders removed: only the identity, in memory, is
 * left. From then on the test speaks for it with RawPeer.
 */
export async function standInIdentity(
  name: string,
  code: string,
  options: { roles?: string[]; exposes?: string[] } = {},
): Promise<{ identity: Identity; fingerprint: string }> {
  const stand = await openPeer(name);
  for (const role of options.roles ?? [])
    await stand.owner('roles.create', { name: role, agent: { adapter: 'scripted' } });
  await stand.owner('connections.accept', { code, roles: options.exposes ?? [] });
  await stand.waitFor(async () => {
    const [connection] = await stand.owner('connections.list', {});
    return connection?.online && connection.peerRoles.length > 0;
  }, `${name} to be online with the inviter’s roles`);
  const identity = stand.installation.identity;
  await stand.close();
  return { identity, fingerprint: identity.fingerprint };
}
