// Links to peers: listening, dialling with backoff, the handshake on every new link,
// and one open link per connection. Both sides dial whenever they are not connected;
// when two links meet, both keep the one dialled by the smaller installation ID.
// How a dial races a peer's paths (address, DHT, relays) is reach.ts; when the next dial
// comes, redial.ts; where dials arrive, link-listener.ts; what links tell us of where a
// peer is reached, peer-whereabouts.ts.
import type { ConnectionSummary } from '../../shared/domain';
import { log } from '../log';
import type { DhtBootstrap } from '../net/dht-bootstrap';
import { isStorageFailure } from '../store/storage-errors';
import { relayKeys } from '../store/queries/relays';
import {
  connectionByDhtKey,
  connectionByFingerprint,
  getConnectionRow,
  listConnectionRows,
  setDhtKey,
} from '../store/queries/connections';
import type { EngineCore, OpenLink } from './engine-core';
import type { FramePort } from './frame-port';
import { handshake, HandshakeError, type Admission } from './handshake';
import { listenForLinks, type Arrival } from './link-listener';
import { PeerLink } from './peer-link';
import {
  parseRelays,
  reachable,
  remember,
  rememberDialledPath,
  takeAnnouncedAddress,
  takeReach,
} from './peer-whereabouts';
import { reachPeer, type LinkPath, type ReachTarget } from './reach';
import { keepNewLink, Redials } from './redial';
import { chosenRelay } from './relay-choice';
import { DhtCarrier } from './dht-carrier';
import type { PeerCertificate, PeerListener } from './transport';

export {
  DHT_HEAD_START_MS,
  DIAL_TIMEOUT_MS,
  dhtHeadStart,
  UnreachableError,
  type DialAttempt,
  type LinkPath,
  type ReachTarget,
} from './reach';
export { holepunchWorthRetrying } from './relay-choice';
export { parseRelays } from './peer-whereabouts';
import { CloseCode, PROTOCOL_VERSION, type Frame, type HelloFrame, type ReachFrame } from './wire';

export interface LinkEvents {
  /** A link opened for a connection (after the handshake, and after any duplicate was settled). */
  opened(open: OpenLink): void;
  frame(open: OpenLink, frame: Frame): void;
  /** Decides on a stranger's hello: the connection its invitation makes, null, or why it is refused. */
  admitStranger(peer: PeerCertificate, hello: HelloFrame): number | { refused: string } | null;
  /** Whether an invitation is open: only then may a DHT key we do not know connect. */
  invitationOpen(): boolean;
}

/** At shutdown, how long peers have to answer the closing of their link. */
const SHUTDOWN_WAIT_MS = 300;

export class LinkManager {
  /** Links still in their handshake. */
  private readonly handshakes = new Set<PeerLink>();
  /** Each connection's next dial while it is offline. */
  private readonly redials: Redials;
  private readonly lastErrors = new Map<number, string>();
  private listener: PeerListener | null = null;
  private carrier: DhtCarrier | null = null;
  /** The path each open link came by, and the relay when relayed. */
  private readonly paths = new Map<number, { path: LinkPath; relay: string | null }>();
  /** What invitations and hellos carry: where peers dial us. */
  private ourAddress: string | null = null;
  /** host:port the listener is bound to. */
  private boundAddress: string | null = null;
  private closed = false;

  constructor(
    private readonly core: EngineCore,
    private readonly events: LinkEvents,
  ) {
    this.redials = new Redials(core.options.reconnect ?? { minMs: 250, maxMs: 30_000 }, (connectionId, dialer) =>
      this.dial(connectionId, dialer),
    );
  }

  /**
   * Listens for peers on host:port (0 picks a free port); returns the bound host:port,
   * which is also what invitations carry until setAddress says otherwise.
   */
  async listen(host: string, port: number): Promise<string> {
    if (this.listener) throw new Error('already listening for peers');
    this.listener = await listenForLinks(this.core.options, host, port, (p, peer, arrival) =>
      this.accepted(p, peer, arrival),
    );
    const { port: bound } = this.listener.address;
    this.ourAddress = `${host.includes(':') ? `[${host}]` : host}:${bound}`;
    this.boundAddress = this.ourAddress;
    return this.ourAddress;
  }

  /**
   * Joins the DHT and listens there under our DHT key; streams that pass the firewall go
   * to the same TLS listener as TCP connections do. Needs `listen` first.
   */
  async listenDht(bootstrap: Exclude<DhtBootstrap, { kind: 'off' }>): Promise<string> {
    if (!this.listener) throw new Error('the DHT carrier needs the peer listener');
    if (this.core.options.ports) throw new Error('links over a port network have no DHT');
    if (this.carrier) throw new Error('already on the DHT');
    this.carrier = await DhtCarrier.start({
      identity: this.core.options.identity,
      bootstrap,
      relay: this.core.options.carrier?.relay ?? false,
      holepunch: this.core.options.carrier?.holepunch ?? true,
      admit: (key, host, relay) => this.admitKey(key, host, relay),
      // The listener of the moment (Settings may have moved it). A known key holds no
      // stranger's place: Noise proved it is a peer's.
      onStream: (stream, peer) => {
        const listener = this.listener;
        if (!listener || this.closed) {
          stream.destroy();
          return;
        }
        listener.carry(stream, connectionByDhtKey(this.core.db, peer.key) ? null : peer.gateKey, {
          kind: 'dht',
          remoteKey: peer.key,
          path: peer.path,
          relay: peer.relay,
        });
      },
    });
    if (this.closed) await this.carrier.close();
    return this.carrier.publicKey;
  }

  /** Leaves the DHT: links over it close and are redialled by address where there is one. */
  async stopDht(): Promise<void> {
    const carrier = this.carrier;
    this.carrier = null;
    await carrier?.close();
  }

  /** Our DHT public key (hex), or null when not on the DHT. */
  get dhtKey(): string | null {
    return this.carrier?.publicKey ?? null;
  }

  /** The key (hex) our own blind relay listens under, or null when this installation is not one. */
  get relayKey(): string | null {
    return this.carrier?.relay?.key ?? null;
  }

  /** Whether a blind relay answers at this key now; null when off the DHT (nothing could be asked). */
  async probeRelay(key: string): Promise<boolean | null> {
    const carrier = this.carrier;
    return carrier ? carrier.probe(key) : null;
  }

  /**
   * The DHT firewall: keys of known connections, and strangers only while an invitation is
   * open and there is room; through a relay only one somebody chose (ours, or for a known
   * peer the ones it named).
   */
  private admitKey(key: string, host: string, relay: string | null): boolean {
    if (this.closed || !this.listener) return false;
    const known = connectionByDhtKey(this.core.db, key);
    if (!chosenRelay(relay, relayKeys(this.core.db), known ? parseRelays(known.relays) : [])) return false;
    if (known) return true;
    return this.events.invitationOpen() && this.listener.hasRoom(relay ? `key:${key}` : `udp:${host}`);
  }

  /** Tells the peer where we are reached besides our address (revision 2; an older peer gets nothing). */
  sendReach(open: OpenLink): void {
    open.link.send({ type: 'reach', dht: this.dhtKey, address: this.ourAddress, relays: relayKeys(this.core.db) });
  }

  /** Our relays changed: every open link's peer hears of them. */
  relaysChanged(): void {
    for (const open of this.core.open.values()) if (open.link.state === 'open') this.sendReach(open);
  }

  /** Where the peer says it is reached: its DHT key is dialled from now on, as its address is. */
  takeReach(open: OpenLink, frame: ReachFrame): void {
    const { connectionId } = open;
    const connection = getConnectionRow(this.core.db, connectionId);
    if (!connection) return;
    const note = takeReach(this.core.db, connection, frame);
    if (note) this.noteError(connectionId, note);
    else this.core.connectionChanged(connectionId);
  }

  /** The path the open link of a connection came by. */
  path(connectionId: number): LinkPath | null {
    return this.isOnline(connectionId) ? (this.paths.get(connectionId)?.path ?? null) : null;
  }

  /** The relay (hex key) the open link of a connection came through; null when not relayed or offline. */
  relayOf(connectionId: number): string | null {
    return this.isOnline(connectionId) ? (this.paths.get(connectionId)?.relay ?? null) : null;
  }

  /** host:port the listener is bound to, or null when not listening. */
  get listening(): string | null {
    return this.boundAddress;
  }

  /** Stops taking new peer connections; links already open are left to reconnectAll. */
  async stopListening(): Promise<void> {
    const listener = this.listener;
    this.listener = null;
    this.ourAddress = null;
    this.boundAddress = null;
    await listener?.close();
  }

  /** What invitations and hellos carry: the address peers dial (null: none, nobody can be invited). */
  setAddress(address: string | null): void {
    this.ourAddress = address;
  }

  get address(): string | null {
    return this.ourAddress;
  }

  /** Drops every open link; both sides dial again, and our hello tells each peer where we are now. */
  reconnectAll(): void {
    for (const { link } of this.core.open.values()) link.close(CloseCode.normal, 'the peer address changed');
  }

  /** Our hello; the dialler of an invitation adds its secret. */
  hello(invitation?: string): HelloFrame {
    return {
      type: 'hello',
      protocol: PROTOCOL_VERSION,
      name: this.core.options.name(),
      address: this.ourAddress,
      ...(invitation === undefined ? {} : { invitation }),
    };
  }

  /** Dials every connection that is not revoked. */
  start(): void {
    for (const connection of listConnectionRows(this.core.db))
      if (connection.status !== 'revoked') this.scheduleDial(connection.id, 0);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.redials.close();
    const links = [...[...this.core.open.values()].map((open) => open.link), ...this.handshakes];
    // Peers are told, and see this side offline at once; one that does not answer is not waited for.
    const told = Promise.all(
      links.map(
        (link) => new Promise<void>((resolve) => (link.state === 'closed' ? resolve() : link.onClose(() => resolve()))),
      ),
    );
    for (const link of links) link.close(CloseCode.shuttingDown, 'shutting down');
    await Promise.race([told, new Promise((resolve) => setTimeout(resolve, SHUTDOWN_WAIT_MS).unref())]);
    await this.listener?.close();
    await this.carrier?.close();
  }

  isOnline(connectionId: number): boolean {
    return (
      this.core.open.get(connectionId)?.link.state === 'open' &&
      getConnectionRow(this.core.db, connectionId)?.status !== 'revoked'
    );
  }

  lastError(connectionId: number): string | null {
    return this.lastErrors.get(connectionId) ?? null;
  }

  noteError(connectionId: number, message: string): void {
    this.lastErrors.set(connectionId, message);
    this.core.connectionChanged(connectionId);
  }

  /** The next dial while offline, for owners to see. */
  redial(connectionId: number): ConnectionSummary['redial'] {
    return this.redials.next(connectionId);
  }

  /** The connection is revoked: its link leaves the table (the caller closes it) and nothing redials. */
  detach(connectionId: number): OpenLink | undefined {
    const open = this.core.open.get(connectionId);
    this.core.open.delete(connectionId);
    this.redials.forget(connectionId);
    return open;
  }

  /**
   * Reaches the peer by every path it has (the address first, the DHT after a head start,
   * or at once if it won last time), pinning `fingerprint`; the first socket through the
   * pin wins and the others are cancelled before any frame. Then runs the handshake as the
   * dialler with `hello`; `admit` decides on the peer's hello. Resolves once the link is
   * open. Rejects with an UnreachableError, or a HandshakeError.
   */
  async connect(
    target: ReachTarget,
    fingerprint: string,
    hello: HelloFrame,
    admit: (theirs: HelloFrame, peer: PeerCertificate) => Admission,
  ): Promise<OpenLink | null> {
    const { port, peer, path, relay } = await reachPeer(
      {
        identity: this.core.options.identity,
        revision: this.core.options.revision,
        ports: this.core.options.ports,
        carrier: this.carrier,
        ourRelays: () => relayKeys(this.core.db),
      },
      target,
      fingerprint,
    );
    const link = this.track(new PeerLink(port, peer, this.core.fingerprint));
    const { connectionId } = await handshake(link, {
      side: 'dialler',
      hello,
      admit: (theirs) => admit(theirs, peer),
    });
    this.handshakes.delete(link);
    if (this.closed) {
      link.close(CloseCode.shuttingDown, 'shutting down');
      return null;
    }
    rememberDialledPath(this.core.db, connectionId, target, path);
    return this.opened(connectionId, link, path, relay);
  }

  private track(link: PeerLink): PeerLink {
    this.handshakes.add(link);
    link.onClose(() => this.handshakes.delete(link));
    return link;
  }

  /** A dialler's port reached our listener. */
  private accepted(port: FramePort, peer: PeerCertificate, { carrier, authenticated }: Arrival = {}): void {
    if (this.closed) {
      port.close(CloseCode.shuttingDown, 'shutting down');
      return;
    }
    const known = connectionByFingerprint(this.core.db, peer.fingerprint);
    if (known?.status === 'revoked') {
      port.close(CloseCode.revoked, 'this connection was revoked');
      return;
    }
    const link = this.track(new PeerLink(port, peer, peer.fingerprint));
    let announced: string | null = null;
    handshake(link, {
      side: 'listener',
      hello: this.hello(),
      admit: (theirs) => {
        if (this.closed) return { refuse: { code: CloseCode.shuttingDown, reason: 'shutting down' } };
        announced = theirs.address;
        if (known) return { connectionId: known.id };
        // A stranger: only a valid invitation makes it a peer.
        const connectionId = this.events.admitStranger(peer, theirs);
        if (connectionId === null)
          return { refuse: { code: CloseCode.badInvitation, reason: 'unknown certificate and no valid invitation' } };
        if (typeof connectionId === 'object')
          return { refuse: { code: CloseCode.badInvitation, reason: connectionId.refused } };
        announced = null;
        return { connectionId };
      },
    })
      .then(({ connectionId }) => {
        this.handshakes.delete(link);
        // A known peer now: its connection no longer counts against the caps on strangers.
        authenticated?.();
        const note = announced === null ? null : takeAnnouncedAddress(this.core.db, connectionId, announced);
        // Noise proved the peer holds this key, TLS that it holds the pinned certificate: its DHT key from now on.
        if (carrier && getConnectionRow(this.core.db, connectionId)?.dht_key !== carrier.remoteKey)
          remember(this.core.db, connectionId, (db) => setDhtKey(db, connectionId, carrier.remoteKey));
        this.opened(connectionId, link, carrier?.path ?? 'direct', carrier?.relay ?? null);
        if (note) this.noteError(connectionId, note);
      })
      .catch((error: Error) => {
        if (error instanceof HandshakeError && error.kind === 'protocol' && known)
          this.noteError(known.id, `refused: the peer ${error.message}`);
        log.warn('peer handshake failed', { error: error.message });
        // Never left half open (a link that closed already stays as it is).
        link.close(
          isStorageFailure(error) ? CloseCode.tryAgainLater : CloseCode.protocolError,
          isStorageFailure(error) ? 'try again later' : 'handshake failed',
        );
      });
  }

  /** A link finished its handshake: keep one per peer, then open it. */
  private opened(connectionId: number, link: PeerLink, path: LinkPath, relay: string | null): OpenLink | null {
    const existing = this.core.open.get(connectionId);
    if (existing && existing.link.state !== 'closed') {
      if (!keepNewLink(existing.link.dialledBy, link.dialledBy, this.core.fingerprint, link.peer.fingerprint)) {
        link.close(CloseCode.duplicate, 'duplicate connection');
        return null;
      }
      existing.link.close(CloseCode.duplicate, 'duplicate connection');
    }
    const open: OpenLink = { connectionId, link, inFlight: new Map(), acks: null };
    this.core.open.set(connectionId, open);
    this.paths.set(connectionId, { path, relay });
    this.lastErrors.delete(connectionId);
    this.redials.opened(connectionId, link.dialledBy === this.core.fingerprint);
    link.onClose((code, reason) => this.linkClosed(open, code, reason));
    link.open((frame) => this.events.frame(open, frame));
    this.events.opened(open);
    return open;
  }

  private linkClosed(open: OpenLink, code: number, reason: string): void {
    const { connectionId } = open;
    if (this.core.open.get(connectionId) !== open) return;
    this.core.open.delete(connectionId);
    if (code === CloseCode.wrongProtocol) this.noteError(connectionId, `refused: ${reason}`);
    else if (code === CloseCode.revoked)
      this.noteError(connectionId, 'the peer refuses this connection: it was revoked');
    this.core.connectionChanged(connectionId);
    // A side that could not record what came gets a moment before the next link.
    if (code === CloseCode.tryAgainLater) this.scheduleDial(connectionId, 1_000 + Math.random() * 1_000);
    else if (code !== CloseCode.duplicate) this.scheduleDial(connectionId);
  }

  private scheduleDial(connectionId: number, delayMs?: number): void {
    if (this.closed) return;
    const connection = getConnectionRow(this.core.db, connectionId);
    if (!connection || connection.status === 'revoked' || !reachable(connection)) return;
    this.redials.schedule(connectionId, delayMs);
  }

  /** Dials a known connection once; on failure the next dial is scheduled. */
  async dial(connectionId: number, dialer: { dialling: boolean }): Promise<void> {
    if (this.closed || this.isOnline(connectionId)) return;
    const connection = getConnectionRow(this.core.db, connectionId);
    if (!connection || connection.status === 'revoked' || !reachable(connection)) return;
    dialer.dialling = true;
    try {
      await this.connect(
        {
          address: connection.address,
          dhtKey: connection.dht_key,
          lastPath: connection.last_path,
          relays: parseRelays(connection.relays),
        },
        connection.fingerprint,
        this.hello(),
        () => ({ connectionId }),
      );
    } catch (error) {
      const message = (error as Error).message;
      if (error instanceof HandshakeError && error.kind === 'protocol')
        this.noteError(connectionId, `refused: the peer ${message}`);
      else if (!this.lastErrors.get(connectionId)?.startsWith('refused'))
        this.noteError(connectionId, `offline: ${message}`);
    } finally {
      dialer.dialling = false;
    }
    if (!this.isOnline(connectionId)) this.scheduleDial(connectionId);
  }
}
