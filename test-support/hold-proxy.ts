// A TCP proxy on loopback for fault tests: it forwards bytes between whoever dials it and
// a target, and can hold one direction — what was written stays in the proxy, neither
// delivered nor lost, as a frame that is "on the wire" — and release it later. TLS passes
// through untouched (the proxy never reads the bytes), so both installations still pin
// each other's certificates. When either end of a pair goes away the other is ended, and
// what was held for the end that went is dropped, as a dead host's socket buffers are.
import net from 'node:net';

/** `toTarget`: from the dialler to the target; `toDialler`: the way back. */
export type Direction = 'toTarget' | 'toDialler';

interface Pair {
  dialler: net.Socket;
  target: net.Socket;
  held: Record<Direction, Buffer[]>;
  /** The end cut off alone: the other still stands, as if its peer had vanished without a word. */
  severed: 'dialler' | 'target' | null;
}

export class HoldProxy {
  private readonly pairs = new Set<Pair>();
  private readonly holding: Record<Direction, boolean> = { toTarget: false, toDialler: false };
  private refusing = false;
  private count = 0;
  private readonly waiters: Array<() => void> = [];

  private constructor(
    private readonly server: net.Server,
    /** host:port to dial instead of the target. */
    readonly address: string,
  ) {}

  /** Listens on 127.0.0.1 (a free port) and forwards every connection to `target` (host:port). */
  static async start(target: string): Promise<HoldProxy> {
    const at = target.lastIndexOf(':');
    const host = target.slice(0, at).replace(/^\[|\]$/g, '');
    const port = Number(target.slice(at + 1));
    let proxy: HoldProxy | null = null;
    const server = net.createServer((dialler) => proxy?.accept(dialler, host, port));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port: bound } = server.address() as net.AddressInfo;
    proxy = new HoldProxy(server, `127.0.0.1:${bound}`);
    return proxy;
  }

  /** Bytes going `direction` stay here from now on, on every connection, new ones too. */
  hold(direction: Direction): void {
    this.holding[direction] = true;
  }

  /** What was held going `direction` is delivered, in order, and bytes flow again. */
  release(direction: Direction): void {
    this.holding[direction] = false;
    for (const pair of this.pairs) {
      const to = direction === 'toTarget' ? pair.target : pair.dialler;
      if (pair.severed !== null && pair[pair.severed] === to) continue;
      const held = pair.held[direction].splice(0);
      // Its sender finished meanwhile: what it held goes no further, as after a crash.
      if (!to.writableEnded) for (const chunk of held) to.write(chunk);
    }
  }

  /** While on, a new connection is reset at once, as by a host that is down; open ones stay. */
  refuse(on: boolean): void {
    this.refusing = on;
  }

  /** Bytes held going `direction`, on connections still open. */
  heldBytes(direction: Direction): number {
    let n = 0;
    for (const pair of this.pairs) for (const chunk of pair.held[direction]) n += chunk.length;
    return n;
  }

  /** Connections accepted and forwarded since the start, closed ones included. */
  get accepted(): number {
    return this.count;
  }

  /** Connections open through the proxy now. */
  get connections(): number {
    return this.pairs.size;
  }

  /** Resolves once `check` holds, re-checked whenever bytes move or a connection opens or closes. */
  async waitFor(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(remaining, 500));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Ends every connection at once (both ends see a reset), dropping what was held. */
  cut(): void {
    for (const pair of [...this.pairs]) {
      pair.dialler.resetAndDestroy();
      pair.target.resetAndDestroy();
    }
  }

  /**
   * Resets only the `side` end of every connection: that side sees its link die, while
   * the other sees nothing at all (no FIN, no reset) and still gets what was held for it
   * once released — as when one end of a path fails and the other does not notice yet.
   */
  sever(side: 'dialler' | 'target'): void {
    for (const pair of this.pairs) {
      pair.severed = side;
      pair.held[side === 'target' ? 'toTarget' : 'toDialler'].length = 0;
      pair[side].resetAndDestroy();
    }
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(dialler: net.Socket, host: string, port: number): void {
    if (this.refusing) {
      dialler.resetAndDestroy();
      return;
    }
    this.count++;
    const target = net.connect({ host, port });
    const pair: Pair = { dialler, target, held: { toTarget: [], toDialler: [] }, severed: null };
    this.pairs.add(pair);
    this.changed();
    const severed = (socket: net.Socket) => pair.severed !== null && pair[pair.severed] === socket;
    const forward = (from: net.Socket, to: net.Socket, direction: Direction) => {
      from.on('data', (chunk: Buffer) => {
        // Written into a severed end: lost, as into a path that no longer leads anywhere.
        if (severed(to)) return;
        if (this.holding[direction]) pair.held[direction].push(chunk);
        else to.write(chunk);
        this.changed();
      });
    };
    forward(dialler, target, 'toTarget');
    forward(target, dialler, 'toDialler');
    // An end that finished writing: the other side hears it once what came before went.
    dialler.on('end', () => severed(dialler) || target.end());
    target.on('end', () => severed(target) || dialler.end());
    // One end gone: the other is ended too, and nothing held for either is delivered later.
    const gone = (socket: net.Socket) => {
      if (severed(socket)) return;
      if (!this.pairs.delete(pair)) return;
      pair.held.toTarget.length = 0;
      pair.held.toDialler.length = 0;
      dialler.destroy();
      target.destroy();
      this.changed();
    };
    for (const socket of [dialler, target]) {
      socket.on('error', () => gone(socket));
      socket.on('close', () => gone(socket));
    }
  }

  private changed(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}
