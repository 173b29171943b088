// The connection engine: pairing, links to peers, and agent conversations per
// ADR 0035. A send goes to the agent conversation keyed by (connection, root,
// sending role, recipient role), made on first use with a new random thread ID; the
// receiver keys by (connection, thread ID). Texts are committed before they go on the
// wire and before they are acked; per agent conversation one text is on the wire at
// a time, and agent conversations never wait for each other.
import { randomBytes } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type WebSocket from 'ws';
import type {
  ContextKind,
  ContextRef,
  ConnectionSummary,
  TextState,
  TextView,
  ThreadSummary,
} from '../../shared/domain';
import type { AgentContext, PeerDirectoryEntry, TurnOutcome } from '../agents/types';
import { threadAudience } from '../access/lookup';
import { eventAudience } from '../access/rules';
import type { Audience, EventHub } from '../events';
import { log } from '../log';
import type { Caller, PeerGateway } from '../role-api/server';
import { roleApiRequests } from '../role-api/protocol';
import type { RunManager } from '../runs/run-manager';
import { transaction, type Db } from '../store/database';
import {
  connectionByFingerprint,
  connectionByName,
  exposedRoleNames,
  exposedRoles,
  freeConnectionName,
  getConnectionRow,
  insertConnection,
  insertInvitation,
  invitationBySecretHash,
  listConnectionRows,
  peerRoles,
  setAnnouncedAddress,
  setConnectionRevoked,
  setConnectionStatus,
  setExposedRoles,
  setPeerRoles,
  setQueueLimit,
  useInvitation,
  type ConnectionRow,
} from '../store/queries/connections';
import { getConversationRow, insertMessage } from '../store/queries/conversations';
import { getPerson } from '../store/queries/people';
import { getRoleByName } from '../store/queries/roles';
import { ensureRun, runSummary, type RunRow } from '../store/queries/runs';
import { getTaskRow, insertTaskLog } from '../store/queries/tasks';
import {
  ackTexts,
  closeThread,
  getThread,
  historyBetween,
  insertText,
  insertThread,
  listTexts,
  markRootGone,
  outgoingWaiting,
  outText,
  queuedTextsOfThread,
  setTextState,
  threadByWireId,
  threadsByRoot,
  threadsOfConnection,
  undeliveredHeads,
  type TextRow,
  type ThreadRow,
} from '../store/queries/threads';
import { all, get, run as runSql } from '../store/sql';
import { hashToken } from '../tokens';
import { checkPeerAddress, cleanPeerName, sameName } from './announced';
import { EngineError } from './errors';
import { GroupCommit, type Tx } from './group-commit';
import { ThreadCache, WireCounters, type ThreadState } from './wire-counters';
import type { Identity } from './identity';
import { decodeInvite, encodeInvite, newInviteSecret } from './invitation';
import { PeerLink, type InFlight } from './peer-link';
import { dialPeer, listenForPeers, type PeerCertificate, type PeerListener } from './transport';
import {
  CloseCode,
  PROTOCOL_VERSION,
  type AckFrame,
  type Frame,
  type HelloFrame,
  type RejectReason,
  type TextFrame,
} from './wire';

export interface EngineOptions {
  db: Db;
  identity: Identity;
  name: () => string;
  events: EventHub;
  runs: RunManager;
  /** Texts one agent conversation may send per hour. */
  textBudgetPerHour?: number;
  reconnect?: { minMs: number; maxMs: number };
  /** Called after each of the engine's commits: the installation checkpoints the log in the background. */
  afterCommit?: () => void;
}

type RunCaller = Extract<Caller, { kind: 'run' }>;

export interface SendResult {
  /** The wire thread ID. */
  thread: string;
  /** The agent conversation's id here. */
  threadId: number;
  seq: number;
  to: string;
}

const PEER_ROLE = /^([^\s/]+)\/([a-z0-9][a-z0-9_-]*)$/;

const rejectNotices: Record<RejectReason, (peer: string) => string> = {
  thread: (peer) =>
    `${peer} has closed this agent conversation (its topic was deleted there), so the text was not delivered. Your next send from the same topic starts a new agent conversation.`,
  roles: (peer) => `${peer} refused the text: the roles do not match this agent conversation.`,
  role: (peer) => `${peer} does not let you address that role (it is not exposed to you, or it was removed).`,
  paused: (peer) => `${peer} has paused the connection; the text was not delivered.`,
  queue: (peer) => `${peer} has too much waiting; the text was not delivered. Try again later.`,
  revoke: (peer) => `${peer} revoked the connection; the text was not delivered.`,
};

export class ConnectionEngine implements PeerGateway {
  private readonly db: Db;
  private readonly batch: GroupCommit;
  /** Limit checks and the next text to send without scanning history (wire benchmark, issue 3). */
  private readonly counters: WireCounters;
  /** Agent conversations in memory, so a text does not read its thread's row (issue 3). */
  private readonly threads: ThreadCache;
  private readonly links = new Map<number, PeerLink>();
  private readonly handshakes = new Set<PeerLink>();
  private readonly dialers = new Map<
    number,
    { timer: NodeJS.Timeout | null; attempt: number; dialling: boolean; at: number | null }
  >();
  private readonly lastErrors = new Map<number, string>();
  private listener: PeerListener | null = null;
  private ourAddress: string | null = null;
  private boundAddress: string | null = null;
  private closed = false;
  private readonly budget: number;
  private readonly backoff: { minMs: number; maxMs: number };

  constructor(private readonly options: EngineOptions) {
    this.db = options.db;
    this.batch = new GroupCommit(options.db, options.afterCommit);
    this.counters = new WireCounters(options.db);
    this.threads = new ThreadCache(options.db);
    // Rolled-back writes, or writes from elsewhere: rows in memory may be wrong. Load them again.
    this.batch.onStale((why) => {
      this.threads.clear();
      // Outgoing texts never go back to queued or sent, whoever writes: only work rolled
      // back can make what the counters learnt wrong.
      if (why === 'rollback') this.counters.forgetDelivered();
    });
    this.budget = options.textBudgetPerHour ?? 50;
    this.backoff = options.reconnect ?? { minMs: 250, maxMs: 30_000 };
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Listens for peers on host:port (0 picks a free port); returns the bound host:port,
   * which is also what invitations carry until setAddress says otherwise.
   */
  async listen(host: string, port: number): Promise<string> {
    if (this.listener) throw new Error('already listening for peers');
    this.listener = await listenForPeers(this.options.identity, host, port, (ws, peer, socket) =>
      this.accepted(ws, peer, socket),
    );
    const { port: bound } = this.listener.address;
    this.ourAddress = `${host.includes(':') ? `[${host}]` : host}:${bound}`;
    this.boundAddress = this.ourAddress;
    return this.ourAddress;
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
    for (const link of this.links.values()) link.close(CloseCode.normal, 'the peer address changed');
  }

  /** Dials every connection that is not revoked. */
  start(): void {
    for (const connection of listConnectionRows(this.db))
      if (connection.status !== 'revoked') this.scheduleDial(connection.id, 0);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const dialer of this.dialers.values()) if (dialer.timer) clearTimeout(dialer.timer);
    this.dialers.clear();
    for (const link of [...this.links.values(), ...this.handshakes])
      link.close(CloseCode.shuttingDown, 'shutting down');
    this.batch.close();
    await this.listener?.close();
  }

  isOnline(connectionId: number): boolean {
    return (
      this.links.get(connectionId)?.state === 'open' && getConnectionRow(this.db, connectionId)?.status !== 'revoked'
    );
  }

  // ---------------------------------------------------------------- pairing

  invite(
    createdBy: number,
    roles: string[],
    expiresInMinutes = 24 * 60,
  ): { code: string; link: string; address: string; expiresAt: string } {
    if (!this.ourAddress) throw new EngineError('unavailable', 'this installation is not listening for peers');
    for (const role of roles)
      if (!getRoleByName(this.db, role)) throw new EngineError('not_found', `no role named "${role}"`);
    const secret = newInviteSecret();
    const expiresAt = new Date(Date.now() + expiresInMinutes * 60_000).toISOString();
    transaction(this.db, () => insertInvitation(this.db, hashToken(secret), roles, createdBy, expiresAt));
    return {
      ...encodeInvite({
        v: 2,
        name: this.options.name(),
        address: this.ourAddress,
        fingerprint: this.options.identity.fingerprint,
        secret,
        expires: expiresAt,
      }),
      address: this.ourAddress,
      expiresAt,
    };
  }

  /** Dials the inviter, proves the secret and pins its certificate. */
  async accept(code: string, roles: string[]): Promise<ConnectionRow> {
    let invite;
    try {
      invite = decodeInvite(code);
    } catch (error) {
      throw new EngineError('invalid', (error as Error).message);
    }
    if (Date.parse(invite.expires) < Date.now())
      throw new EngineError('invalid', 'this invitation has expired; ask for a new one');
    if (invite.fingerprint === this.options.identity.fingerprint)
      throw new EngineError('invalid', 'this invitation is your own');
    const existing = connectionByFingerprint(this.db, invite.fingerprint);
    if (existing?.status === 'revoked')
      throw new EngineError(
        'revoked',
        existing.revoked_by === 'peer'
          ? `${existing.name} revoked this connection; a revoked peer cannot be paired again`
          : `you revoked ${existing.name}; a revoked peer cannot be paired again`,
      );
    const address = checkPeerAddress(invite.address);
    if (!address.ok)
      throw new EngineError('invalid', `the invitation's address ${invite.address} is refused: ${address.reason}`);
    if (existing) throw new EngineError('invalid', `you are already connected to ${existing.name}`);
    for (const role of roles)
      if (!getRoleByName(this.db, role)) throw new EngineError('not_found', `no role named "${role}"`);
    let dialled: Awaited<ReturnType<typeof dialPeer>>;
    try {
      dialled = await dialPeer(this.options.identity, invite.address, invite.fingerprint);
    } catch (error) {
      throw new EngineError(
        'unavailable',
        `could not reach ${invite.name} at ${invite.address}: ${(error as Error).message}`,
      );
    }
    const link = new PeerLink(dialled.ws, dialled.socket, dialled.peer, this.options.identity.fingerprint, null);
    this.handshakes.add(link);
    link.onClose(() => this.handshakes.delete(link));
    link.send({
      type: 'hello',
      protocol: PROTOCOL_VERSION,
      name: this.options.name(),
      address: this.ourAddress,
      invitation: invite.secret,
    });
    let hello: HelloFrame;
    try {
      hello = await link.hello();
    } catch (error) {
      throw new EngineError(
        'invalid',
        `${invite.name} refused the invitation: ${(error as Error).message.replace(/^the peer closed the connection: /, '')}`,
      );
    }
    if (hello.protocol !== PROTOCOL_VERSION) {
      link.close(CloseCode.wrongProtocol, protocolMismatch(hello.protocol));
      throw new EngineError('invalid', `${invite.name} ${protocolMismatch(hello.protocol)}`);
    }
    const connection = transaction(this.db, () => {
      const row = insertConnection(
        this.db,
        dialled.peer.fingerprint,
        dialled.peer.pem,
        this.connectionName(hello.name),
        invite.address,
        'invitation',
      );
      setExposedRoles(this.db, row.id, roleIds(this.db, roles));
      return row;
    });
    this.handshakes.delete(link);
    link.connectionId = connection.id;
    this.opened(link);
    return connection;
  }

  // ---------------------------------------------------------------- links

  private accepted(ws: WebSocket, peer: PeerCertificate, socket: TLSSocket): void {
    if (this.closed) {
      ws.close(CloseCode.shuttingDown, 'shutting down');
      return;
    }
    const known = connectionByFingerprint(this.db, peer.fingerprint);
    if (known?.status === 'revoked') {
      ws.close(CloseCode.revoked, 'this connection was revoked');
      return;
    }
    const link = new PeerLink(ws, socket, peer, peer.fingerprint, known?.id ?? null);
    this.handshakes.add(link);
    link.onClose(() => this.handshakes.delete(link));
    link
      .hello()
      .then((hello) => this.answerHello(link, hello))
      .catch((error: Error) => log.warn('peer handshake failed', { error: error.message }));
  }

  private answerHello(link: PeerLink, hello: HelloFrame): void {
    if (this.closed) return;
    if (hello.protocol !== PROTOCOL_VERSION) {
      const message = protocolMismatch(hello.protocol);
      if (link.connectionId !== null) this.noteError(link.connectionId, `refused: the peer ${message}`);
      log.warn('refused a peer speaking another protocol', { protocol: hello.protocol });
      link.close(
        CloseCode.wrongProtocol,
        `this Parley speaks protocol ${PROTOCOL_VERSION} ("thread") only; you sent ${hello.protocol}`,
      );
      return;
    }
    if (link.connectionId === null) {
      // A stranger: only a valid invitation makes it a peer.
      const connection = this.redeem(link.peer, hello);
      if (!connection) {
        link.close(CloseCode.badInvitation, 'unknown certificate and no valid invitation');
        return;
      }
      link.connectionId = connection.id;
    }
    const note = hello.address === null ? null : this.takeAnnouncedAddress(link.connectionId, hello.address);
    link.send({ type: 'hello', protocol: PROTOCOL_VERSION, name: this.options.name(), address: this.ourAddress });
    this.handshakes.delete(link);
    this.opened(link);
    if (note) this.noteError(link.connectionId, note);
  }

  /** The address a known peer announced: dialled from now on if it is one; otherwise why not. */
  private takeAnnouncedAddress(connectionId: number, address: string): string | null {
    const connection = getConnectionRow(this.db, connectionId)!;
    if (address === connection.address) return null;
    const checked = checkPeerAddress(address);
    if (!checked.ok)
      return `ignored the address ${connection.name} announced (${JSON.stringify(address)}): ${checked.reason}`;
    transaction(this.db, () => setAnnouncedAddress(this.db, connectionId, address));
    return null;
  }

  /** The name a connection gets from the one the peer announced: cleaned, never ours, never another's. */
  private connectionName(announced: string): string {
    const ours = this.options.name();
    return freeConnectionName(this.db, cleanPeerName(announced), (name) => sameName(name, ours));
  }

  private redeem(peer: PeerCertificate, hello: HelloFrame): ConnectionRow | null {
    if (!hello.invitation) return null;
    const secretHash = hashToken(hello.invitation);
    return transaction(this.db, () => {
      const invitation = invitationBySecretHash(this.db, secretHash);
      if (!invitation || invitation.used_at !== null || Date.parse(invitation.expires_at) < Date.now()) return null;
      const address = hello.address !== null && checkPeerAddress(hello.address).ok ? hello.address : null;
      const row = insertConnection(
        this.db,
        peer.fingerprint,
        peer.pem,
        this.connectionName(hello.name),
        address,
        'peer',
      );
      setExposedRoles(this.db, row.id, roleIds(this.db, JSON.parse(invitation.roles) as string[]));
      useInvitation(this.db, invitation.id, row.id);
      return row;
    });
  }

  /** A link finished its handshake: keep one per peer, send our roles, resend what is unacked. */
  private opened(link: PeerLink): void {
    const connectionId = link.connectionId!;
    const existing = this.links.get(connectionId);
    if (existing && existing.state !== 'closed') {
      // Both sides dialled at once: keep the link dialled by the smaller installation ID.
      const smaller = [this.options.identity.fingerprint, link.peer.fingerprint].sort()[0];
      const keepNew = existing.dialledBy !== smaller || link.dialledBy === smaller;
      if (!keepNew) {
        link.close(CloseCode.duplicate, 'duplicate connection');
        return;
      }
      existing.close(CloseCode.duplicate, 'duplicate connection');
    }
    this.links.set(connectionId, link);
    this.lastErrors.delete(connectionId);
    // Only a dial of ours that worked shows the address works: a peer that dials in
    // (and drops) does not make us dial what it named any sooner.
    const dialer = this.dialers.get(connectionId);
    if (dialer && link.dialledBy === this.options.identity.fingerprint) dialer.attempt = 0;
    link.open((frame) => this.onFrame(link, frame));
    link.onClose((code, reason) => this.linkClosed(link, code, reason));
    link.send({
      type: 'roles',
      roles: exposedRoles(this.db, connectionId).map((r) => ({ name: r.name, description: r.description })),
    });
    this.resendAll(link).catch(frameFailed);
    this.connectionChanged(connectionId);
  }

  private linkClosed(link: PeerLink, code: number, reason: string): void {
    const connectionId = link.connectionId;
    if (connectionId === null || this.links.get(connectionId) !== link) return;
    this.links.delete(connectionId);
    if (code === CloseCode.wrongProtocol) this.noteError(connectionId, `refused: ${reason}`);
    else if (code === CloseCode.revoked)
      this.noteError(connectionId, 'the peer refuses this connection: it was revoked');
    this.connectionChanged(connectionId);
    if (code !== CloseCode.duplicate) this.scheduleDial(connectionId);
  }

  private scheduleDial(connectionId: number, delayMs?: number): void {
    if (this.closed) return;
    const connection = getConnectionRow(this.db, connectionId);
    if (!connection || connection.status === 'revoked' || !connection.address) return;
    let dialer = this.dialers.get(connectionId);
    if (!dialer) {
      dialer = { timer: null, attempt: 0, dialling: false, at: null };
      this.dialers.set(connectionId, dialer);
    }
    if (dialer.timer || dialer.dialling) return;
    // Capped exponential backoff with full jitter, so two sides do not redial in step.
    const ceiling = Math.min(this.backoff.maxMs, this.backoff.minMs * 2 ** dialer.attempt);
    const delay = delayMs ?? Math.random() * ceiling;
    dialer.attempt++;
    const state = dialer;
    state.at = Date.now() + delay;
    state.timer = setTimeout(() => {
      state.timer = null;
      state.at = null;
      void this.dial(connectionId, state);
    }, delay);
    state.timer.unref();
  }

  private async dial(connectionId: number, dialer: { dialling: boolean }): Promise<void> {
    if (this.closed || this.isOnline(connectionId)) return;
    const connection = getConnectionRow(this.db, connectionId);
    if (!connection || connection.status === 'revoked' || !connection.address) return;
    dialer.dialling = true;
    try {
      const { ws, peer, socket } = await dialPeer(this.options.identity, connection.address, connection.fingerprint);
      const link = new PeerLink(ws, socket, peer, this.options.identity.fingerprint, connectionId);
      this.handshakes.add(link);
      link.onClose(() => this.handshakes.delete(link));
      link.send({ type: 'hello', protocol: PROTOCOL_VERSION, name: this.options.name(), address: this.ourAddress });
      const hello = await link.hello();
      this.handshakes.delete(link);
      if (hello.protocol !== PROTOCOL_VERSION) {
        this.noteError(connectionId, `refused: the peer ${protocolMismatch(hello.protocol)}`);
        link.close(CloseCode.wrongProtocol, `this Parley speaks protocol ${PROTOCOL_VERSION} ("thread") only`);
      } else if (!this.closed) this.opened(link);
      else link.close(CloseCode.shuttingDown, 'shutting down');
    } catch (error) {
      const message = (error as Error).message;
      if (!this.lastErrors.get(connectionId)?.startsWith('refused'))
        this.noteError(connectionId, `offline: ${message}`);
    } finally {
      dialer.dialling = false;
    }
    if (!this.isOnline(connectionId)) this.scheduleDial(connectionId);
  }

  private noteError(connectionId: number, message: string): void {
    this.lastErrors.set(connectionId, message);
    this.connectionChanged(connectionId);
  }

  // ---------------------------------------------------------------- frames in

  private onFrame(link: PeerLink, frame: Frame): void {
    if (this.closed) return;
    const connectionId = link.connectionId!;
    // Acks queued so far are recorded before this frame; a later ack starts a new piece.
    if (frame.type !== 'ack') link.acks = null;
    switch (frame.type) {
      case 'roles':
        transaction(this.db, () => setPeerRoles(this.db, connectionId, frame.roles));
        this.connectionChanged(connectionId);
        return;
      case 'revoke':
        this.revokedByPeer(connectionId, link).catch(frameFailed);
        return;
      case 'text':
        // Checks first, then writes: no savepoint of its own (issue 3; see GroupCommit).
        this.batch
          .run((after, tx) => this.receiveText(link, connectionId, frame, after, tx), { savepoint: false })
          .catch(frameFailed);
        return;
      case 'ack':
        this.queueAck(link, connectionId, frame);
        return;
      case 'reject':
        this.batch
          .run((after, tx) => this.receiveReject(link, connectionId, frame.thread, frame.seq, frame.reason, after, tx))
          .catch(frameFailed);
        return;
      case 'hello':
        return;
    }
  }

  private receiveText(
    link: PeerLink,
    connectionId: number,
    frame: TextFrame,
    after: (action: () => void) => void,
    tx: Tx,
  ): void {
    const reply = (response: Frame) => after(() => link.send(response));
    const reject = (reason: RejectReason) => reply({ type: 'reject', thread: frame.thread, seq: frame.seq, reason });
    // Looked up once per group commit, not per text (issue 3).
    const connection = this.batch.memo(`connection ${connectionId}`, () => getConnectionRow(this.db, connectionId))!;
    let state = this.threads.byWireId(connectionId, frame.thread);
    let thread = state?.row;
    // A repeat of a text already committed is acked again and not processed twice.
    if (state && frame.seq <= this.threads.lastSeq(state, 'in'))
      return reply({ type: 'ack', thread: frame.thread, seq: frame.seq });
    if (connection.status === 'revoked') return reject('revoke');
    if (connection.status === 'paused') return reject('paused');
    if (thread?.status === 'closed') return reject('thread');
    if (thread && (thread.peer_role !== frame.from || thread.local_role !== frame.to)) return reject('roles');
    const role = this.batch.memo(`role ${frame.to}`, () => getRoleByName(this.db, frame.to));
    if (state && role && role.createdAt > state.row.created_at) {
      // The role was made after the thread: the role the thread had may have been removed
      // (its id set to null in the row) and its id reused. Read the row again.
      this.threads.forget(state);
      state = this.threads.byWireId(connectionId, frame.thread)!;
      thread = state.row;
    }
    if (!role || (thread && thread.local_role_id !== role.id)) return reject('role');
    // Exposure limits what a peer may address; an answer in an agent conversation we
    // started is not addressing, it is the conversation going on.
    const answering = thread?.started_by === 'local';
    const exposed = this.batch.memo(`exposed ${connectionId}`, () => exposedRoleNames(this.db, connectionId));
    if (!answering && !exposed.includes(role.name)) return reject('role');
    if (this.counters.incomingFull(connectionId, connection.queue_limit)) return reject('queue');
    // Every check passed: from here on it writes (a failure now rolls the batch back).
    tx.writing();
    state ??= this.threads.load(
      insertThread(this.db, {
        connectionId,
        wireId: frame.thread,
        localRoleId: role.id,
        localRole: role.name,
        peerRole: frame.from,
        rootKind: 'thread',
        rootId: null,
        startedBy: 'peer',
      }),
    )!;
    const row = state.row;
    insertText(this.db, row.id, 'in', frame.seq, frame.body, 'received');
    this.counters.addedIncoming(connectionId);
    // The thread's run, made once per thread (issue 3): the text waits in it as it is,
    // received, until a turn takes it. A thread's run goes only with its role, and a
    // removed role is caught above.
    state.runId ??= ensureRun(this.db, { kind: 'thread', id: row.id }, role.id).id;
    after(() => this.options.runs.wake());
    state.inSeq = Math.max(this.threads.lastSeq(state, 'in'), frame.seq);
    reply({ type: 'ack', thread: frame.thread, seq: frame.seq });
    this.threadChangedAfter(row, tx);
  }

  /**
   * Acks read before the next group commit are recorded together: one piece and one
   * UPDATE by text id for all of them. One piece and one statement per ack cost the
   * sending side ~9 µs a text, together ~4 (wire benchmark, issue 3).
   */
  private queueAck(link: PeerLink, connectionId: number, frame: AckFrame): void {
    if (link.acks) {
      link.acks.push(frame);
      return;
    }
    const acks = [frame];
    link.acks = acks;
    this.batch
      // An ack's bookkeeping need not survive a power failure (the text would be sent
      // again and the repeat acked, not processed): no fsync of its own (issue 3).
      .run(
        (after, tx) => {
          if (link.acks === acks) link.acks = null;
          this.receiveAcks(link, connectionId, acks, after, tx);
        },
        { durable: false, savepoint: false },
      )
      .catch(frameFailed);
  }

  private receiveAcks(
    link: PeerLink,
    connectionId: number,
    acks: AckFrame[],
    after: (action: () => void) => void,
    tx: Tx,
  ): void {
    // The acks of texts on the wire, by text id; any other (a repeat, an ack after a
    // reconnect) takes the slower way, after these.
    const answered = new Map<number, ThreadState>();
    const others: AckFrame[] = [];
    for (const ack of acks) {
      const state = this.threads.byWireId(connectionId, ack.thread);
      if (!state) continue;
      const flying = takeOffWire(link, state.row.id, ack.seq, tx);
      if (flying) answered.set(flying.textId, state);
      else others.push(ack);
    }
    if (answered.size > 0) {
      tx.writing();
      for (const id of ackTexts(this.db, [...answered.keys()])) {
        const state = answered.get(id)!;
        if (state.undelivered !== undefined) state.undelivered--;
      }
      for (const state of answered.values()) {
        this.claimNext(link, state, after, tx);
        this.threadChangedAfter(state.row, tx);
      }
      tx.afterOnce(`connection ${connectionId}`, () => this.connectionChanged(connectionId));
    }
    for (const ack of others) this.receiveAck(link, connectionId, ack.thread, ack.seq, after, tx);
  }

  private receiveAck(
    link: PeerLink,
    connectionId: number,
    wireId: string,
    seq: number,
    after: (action: () => void) => void,
    tx: Tx,
  ): void {
    const state = this.threads.byWireId(connectionId, wireId);
    if (!state) return;
    const thread = state.row;
    tx.writing();
    // One statement, not a read and a write (issue 3).
    const { changes } = runSql(
      this.db,
      "UPDATE texts SET state = 'acked', reason = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE thread_id = ? AND direction = 'out' AND seq = ? AND state IN ('sent', 'queued')",
      thread.id,
      seq,
    );
    if (state.undelivered !== undefined) state.undelivered -= changes;
    // A text that was on the wire when the owner paused failed then; an ack that still
    // comes for it says it was delivered after all.
    if (changes === 0) markAckedAfterPause(this.db, thread.id, seq);
    takeOffWire(link, thread.id, seq, tx);
    this.claimNext(link, state, after, tx);
    this.threadChangedAfter(thread, tx);
    tx.afterOnce(`connection ${connectionId}`, () => this.connectionChanged(connectionId));
  }

  private receiveReject(
    link: PeerLink,
    connectionId: number,
    wireId: string,
    seq: number,
    reason: RejectReason,
    after: (action: () => void) => void,
    tx: Tx,
  ): void {
    // Rare: the row read afresh rather than trusted from the cache.
    const thread = threadByWireId(this.db, connectionId, wireId);
    if (!thread) return;
    const state = this.threads.reload(thread);
    const connection = getConnectionRow(this.db, connectionId)!;
    const text = outText(this.db, thread.id, seq);
    if (text && (text.state === 'sent' || text.state === 'queued')) {
      setTextState(this.db, text.id, 'failed', reason);
      if (state.undelivered !== undefined) state.undelivered--;
      const peer = `${connection.name}/${thread.peer_role}`;
      // Paused means nothing moves: the notice waits for the next turn.
      this.notify(
        thread,
        `Your text #${seq} to ${peer} was rejected (${reason}): ${rejectNotices[reason](connection.name)}`,
        connection.status === 'active',
      );
    }
    takeOffWire(link, thread.id, seq, tx);
    if (reason === 'thread') {
      // The peer closed its side: close ours, so the next send from this root starts anew.
      closeThread(this.db, thread.id, `closed by ${connection.name}`);
      for (const queued of queuedTextsOfThread(this.db, thread.id))
        setTextState(this.db, queued.id, 'failed', 'thread');
      // Its row and texts changed: read them again when next needed.
      this.threads.forget(state);
    } else this.claimNext(link, state, after, tx);
    after(() => {
      this.threadChanged(thread.id);
      this.connectionChanged(connectionId);
    });
  }

  // ---------------------------------------------------------------- frames out

  /** Inside a transaction: puts the thread's next undelivered text on the wire after commit. */
  private claimNext(link: PeerLink, state: ThreadState, after: (action: () => void) => void, tx: Tx): void {
    const thread = state.row;
    const threadRowId = thread.id;
    if (link.state !== 'open' || link.inFlight.has(threadRowId)) return;
    // Known to have nothing waiting: no need to look (issue 3).
    if (state.undelivered === 0) return;
    const text = this.counters.nextUndelivered(threadRowId);
    if (!text) {
      state.undelivered = 0;
      return;
    }
    if (text.state === 'queued') setTextState(this.db, text.id, 'sent');
    link.inFlight.set(threadRowId, { seq: text.seq, textId: text.id });
    tx.undo(() => {
      if (link.inFlight.get(threadRowId)?.seq === text.seq) link.inFlight.delete(threadRowId);
    });
    const frame: Frame = {
      type: 'text',
      thread: thread.wire_id,
      seq: text.seq,
      from: thread.local_role,
      to: thread.peer_role,
      body: text.body,
    };
    after(() => {
      if (!link.send(frame)) link.inFlight.delete(threadRowId);
    });
  }

  /** After a (re)connect: every thread's oldest undelivered text goes out again. */
  private resendAll(link: PeerLink): Promise<void> {
    return this.batch.run((after, tx) => {
      const before = [...link.inFlight];
      link.inFlight.clear();
      tx.undo(() => {
        link.inFlight.clear();
        for (const [thread, seq] of before) link.inFlight.set(thread, seq);
      });
      // Paused means nothing moves (pausing failed whatever waited, so this is a guard).
      if (getConnectionRow(this.db, link.connectionId!)?.status !== 'active') return;
      for (const head of undeliveredHeads(this.db, link.connectionId!)) {
        const state = this.threads.byRowId(head.thread_id);
        if (!state) continue;
        // The query says one waits: do not trust a count over it.
        state.undelivered = undefined;
        this.claimNext(link, state, after, tx);
      }
    });
  }

  // ---------------------------------------------------------------- the role API

  /** The root of what a run works on (ADR 0035): never chosen by the agent. */
  private rootOf(
    run: RunRow,
    /** Inside a group commit: the thread from the cache. */
    cached = false,
  ): { kind: ContextKind; id: number; thread: ThreadRow | null; state: ThreadState | null } {
    if (run.context_kind !== 'thread') return { kind: run.context_kind, id: run.context_id, thread: null, state: null };
    const state = cached ? this.threads.byRowId(run.context_id) : undefined;
    const thread = state?.row ?? getThread(this.db, run.context_id);
    if (!thread) throw new EngineError('closed', 'this agent conversation no longer exists');
    return { kind: thread.root_kind, id: thread.root_id, thread, state: state ?? null };
  }

  send(caller: RunCaller, to: string, text: string): Promise<unknown> {
    return this.sendAs(caller.run, caller.role, to, text);
  }

  /** The send of a run of `role` (the role API's path; the wire benchmark calls it directly). */
  sendAs(run: RunRow, role: { id: number; name: string }, to: string, text: string): Promise<SendResult> {
    const match = PEER_ROLE.exec(to);
    if (!match) return Promise.reject(new EngineError('invalid', `"${to}" must look like PEER/ROLE`));
    const [, peerName, peerRole] = match as unknown as [string, string, string];
    // Checks first, then writes: no savepoint of its own (issue 3; see GroupCommit).
    return this.batch.run(
      (after, tx) => {
        const connection = this.usableConnection(peerName);
        const root = this.rootOf(run, true);
        if (root.thread?.root_gone)
          throw new EngineError(
            'closed',
            'the topic of this agent conversation was deleted; nothing more can be sent from it',
          );
        let state: ThreadState | undefined;
        // A run in an agent conversation with the same peer and roles answers in it.
        const own = root.state;
        if (
          own &&
          own.row.status === 'open' &&
          own.row.connection_id === connection.id &&
          own.row.local_role_id === role.id &&
          own.row.peer_role === peerRole
        )
          state = own;
        state ??= this.threads.openLocal(connection.id, root.kind, root.id, role.id, peerRole);
        // Starting or continuing our own agent conversation addresses the peer's role: it must be exposed to us.
        const exposedToUs = this.batch.memo(`peer roles ${connection.id}`, () => peerRoles(this.db, connection.id));
        if (state?.row.started_by !== 'peer' && !exposedToUs.some((r) => r.name === peerRole))
          throw this.notExposed(connection, peerRole);
        this.checkLimits(connection, state?.row.id);
        tx.writing();
        state ??= this.threads.load(
          insertThread(this.db, {
            connectionId: connection.id,
            wireId: randomBytes(16).toString('base64url'),
            localRoleId: role.id,
            localRole: role.name,
            peerRole,
            rootKind: root.kind,
            rootId: root.id,
            startedBy: 'local',
          }),
        )!;
        return this.enqueue(connection, state, text, after, tx);
      },
      { savepoint: false },
    );
  }

  reply(caller: RunCaller, text: string): Promise<unknown> {
    return this.replyIn(caller.run.context_id, text);
  }

  /**
   * The reply guard (DESIGN §11.7): a turn's final output sent as its reply, checked
   * like `parley reply`; `alongside` (the run manager's end of the turn) is written in
   * the same commit, so the end and the answer are never apart.
   */
  replyWithOutput(run: RunRow, text: string, alongside?: () => void): Promise<SendResult> {
    const parsed = roleApiRequests.reply.shape.text.safeParse(text);
    if (!parsed.success) return Promise.reject(new EngineError('invalid', parsed.error.issues[0]!.message));
    return this.replyIn(run.context_id, parsed.data, alongside);
  }

  /**
   * An answer came back in an agent conversation this side started, and the turn it
   * woke passed nothing on (DESIGN §11.7): a line in the person's conversation or the
   * task's log says that it arrived. When the root is an agent conversation a peer
   * started (a relay), the turn's final output goes on there, as a report would.
   */
  async answerArrived(run: RunRow, outcome: TurnOutcome, alongside?: () => void): Promise<void> {
    const thread = getThread(this.db, run.context_id);
    if (!thread || thread.started_by !== 'local' || thread.root_gone) return;
    const connection = getConnectionRow(this.db, thread.connection_id)!;
    const peer = `${connection.name}/${thread.peer_role}`;
    const note = outcome.ok
      ? `${peer} answered (see the agent conversation)`
      : `${peer} answered, but ${thread.local_role} failed on it: ${outcome.error} (see the agent conversation)`;
    const author = { kind: 'system' as const, id: null, name: 'Parley' };
    if (thread.root_kind === 'conversation') {
      const conversation = getConversationRow(this.db, thread.root_id);
      if (!conversation) return;
      transaction(this.db, () => {
        alongside?.();
        insertMessage(this.db, conversation.id, author, note);
      });
      this.options.events.emit(
        { type: 'changed', kind: 'conversation', id: conversation.id },
        eventAudience.conversation(conversation),
      );
    } else if (thread.root_kind === 'task') {
      const task = getTaskRow(this.db, thread.root_id);
      if (!task) return;
      transaction(this.db, () => {
        alongside?.();
        insertTaskLog(this.db, task.id, 'notice', author, note);
      });
      this.options.events.emit({ type: 'changed', kind: 'task', id: task.id }, eventAudience.task(task));
    } else if (outcome.ok && outcome.output.trim()) {
      const parsed = roleApiRequests.report.shape.text.safeParse(outcome.output);
      if (!parsed.success) throw new EngineError('invalid', parsed.error.issues[0]!.message);
      await this.replyIn(thread.root_id, parsed.data, alongside);
    }
  }

  /**
   * A send on an agent conversation that exists: `parley reply`, and the reply guard
   * (whose `alongside` writes the end of the turn in the same commit).
   */
  private replyIn(threadRowId: number, text: string, alongside?: () => void): Promise<SendResult> {
    return this.batch.run((after, tx) => {
      const state = this.threads.byRowId(threadRowId);
      if (!state) throw new EngineError('closed', 'this agent conversation no longer exists');
      const thread = state.row;
      if (thread.status === 'closed')
        throw new EngineError('closed', `this agent conversation is closed (${thread.close_reason})`);
      const connection = this.usableConnection(getConnectionRow(this.db, thread.connection_id)!.name);
      this.checkLimits(connection, thread.id);
      tx.writing();
      alongside?.();
      return this.enqueue(connection, state, text, after, tx);
    });
  }

  /** `parley report` from a run in an agent conversation: to its root. */
  async reportOnThread(caller: RunCaller, text: string): Promise<unknown> {
    const root = this.rootOf(caller.run);
    const author = { kind: 'role' as const, id: caller.role.id, name: caller.role.name };
    if (root.thread?.root_gone)
      throw new EngineError('closed', 'the topic this agent conversation answered for was deleted');
    if (root.kind === 'conversation') {
      const conversation = getConversationRow(this.db, root.id);
      if (!conversation) throw new EngineError('closed', 'the conversation this answers for was deleted');
      const message = transaction(this.db, () => insertMessage(this.db, conversation.id, author, text));
      this.options.events.emit(
        { type: 'changed', kind: 'conversation', id: conversation.id },
        eventAudience.conversation(conversation),
      );
      return { reported: 'conversation', id: conversation.id, messageId: message.id };
    }
    if (root.kind === 'task') {
      const task = getTaskRow(this.db, root.id);
      if (!task) throw new EngineError('closed', 'the task this answers for was deleted');
      const entry = transaction(this.db, () => insertTaskLog(this.db, task.id, 'report', author, text));
      this.options.events.emit({ type: 'changed', kind: 'task', id: task.id }, eventAudience.task(task));
      return { reported: 'task', id: task.id, logId: entry.id };
    }
    // The root is an agent conversation a peer started: report there, to that peer.
    return this.batch.run((after, tx) => {
      const state = this.threads.byRowId(root.id);
      if (!state || state.row.status === 'closed')
        throw new EngineError('closed', 'the agent conversation this answers for is closed');
      const connection = this.usableConnection(getConnectionRow(this.db, state.row.connection_id)!.name);
      this.checkLimits(connection, state.row.id);
      return { reported: 'thread', ...this.enqueue(connection, state, text, after, tx) };
    });
  }

  /** Whom roles can ask (DESIGN §11.8): every connection not revoked, its state, and the roles it lets us address. */
  peers(): PeerDirectoryEntry[] {
    return listConnectionRows(this.db)
      .filter((connection) => connection.status !== 'revoked')
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((connection) => ({
        peer: connection.name,
        state: connection.status === 'paused' ? 'paused' : this.isOnline(connection.id) ? 'online' : 'offline',
        roles: peerRoles(this.db, connection.id).map((role) => ({
          address: `${connection.name}/${role.name}`,
          description: role.description,
        })),
      }));
  }

  /** A refusal for a connection that does not exist, naming whom the role can ask instead. */
  private noConnection(name: string): EngineError {
    const directory = this.peers();
    const addresses = directory.flatMap((entry) =>
      entry.roles.map((role) => (entry.state === 'paused' ? `${role.address} (paused)` : role.address)),
    );
    const alternatives =
      directory.length === 0
        ? 'this installation is not connected to any peer yet'
        : addresses.length === 0
          ? `no peer lets you address any of its roles yet (connections: ${directory.map((entry) => entry.peer).join(', ')})`
          : `you can address ${addresses.join(', ')}`;
    return new EngineError('not_found', `no connection named "${name}"; ${alternatives}`);
  }

  /** A refusal for a role the peer does not expose, naming the ones it does. */
  private notExposed(connection: ConnectionRow, role: string): EngineError {
    const exposed = peerRoles(this.db, connection.id).map((r) => `${connection.name}/${r.name}`);
    const alternatives = exposed.length
      ? `${connection.name} lets you address ${exposed.join(', ')}`
      : `${connection.name} lets you address none of its roles`;
    return new EngineError(
      'not_exposed',
      `${connection.name} does not let you address a role named "${role}"; ${alternatives}`,
    );
  }

  history(
    role: { id: number; name: string },
    withPeerRole: string,
    include: (threadRowId: number) => boolean = () => true,
  ): Promise<unknown> {
    const match = PEER_ROLE.exec(withPeerRole);
    if (!match) return Promise.reject(new EngineError('invalid', `"${withPeerRole}" must look like PEER/ROLE`));
    const [, peerName, peerRole] = match as unknown as [string, string, string];
    const connection = connectionByName(this.db, peerName);
    if (!connection) return Promise.reject(this.noConnection(peerName));
    const rows = historyBetween(this.db, connection.id, role.id, peerRole).filter((row) => include(row.thread_id));
    return Promise.resolve(
      rows.map((row) => ({
        thread: row.wire_thread,
        direction: row.direction,
        from: row.direction === 'out' ? role.name : `${peerName}/${peerRole}`,
        to: row.direction === 'out' ? `${peerName}/${peerRole}` : role.name,
        seq: row.seq,
        body: row.body,
        state: row.state,
        reason: row.reason,
        at: row.created_at,
      })),
    );
  }

  private usableConnection(name: string): ConnectionRow {
    const connection = this.batch.memo(`connection named ${name}`, () => connectionByName(this.db, name));
    if (!connection) throw this.noConnection(name);
    if (connection.status === 'revoked') throw new EngineError('revoked', `the connection to ${name} was revoked`);
    if (connection.status === 'paused')
      throw new EngineError('paused', `the connection to ${name} is paused; an owner can unpause it`);
    return connection;
  }

  /** The budget and the queue limit, checked before a send writes anything. */
  private checkLimits(connection: ConnectionRow, threadRowId: number | undefined): void {
    if (threadRowId === undefined ? this.budget <= 0 : this.counters.overBudget(threadRowId, this.budget))
      throw new EngineError(
        'budget',
        `this agent conversation has sent ${this.budget} texts in the last hour, its limit; wait, or tell a person what you need`,
      );
    if (this.counters.outgoingFull(connection.id, connection.queue_limit))
      throw new EngineError(
        'queue_full',
        `${connection.name}'s queue is full (${connection.queue_limit} texts waiting to be delivered); try again later`,
      );
  }

  /**
   * Inside a transaction, after checkLimits: commits an outgoing text and, if the thread
   * is free, claims the wire for it.
   */
  private enqueue(
    connection: ConnectionRow,
    state: ThreadState,
    body: string,
    after: (action: () => void) => void,
    tx: Tx,
  ): SendResult {
    tx.writing();
    const thread = state.row;
    const seq = this.threads.lastSeq(state, 'out') + 1;
    const link = this.links.get(connection.id);
    // Nothing else waiting and nothing on the wire: this text goes now, written as sent
    // at once rather than queued and then claimed (issue 3).
    const goesNow =
      link !== undefined &&
      link.state === 'open' &&
      !link.inFlight.has(thread.id) &&
      this.threads.undelivered(state, this.counters) === 0;
    const textId = insertText(this.db, thread.id, 'out', seq, body, goesNow ? 'sent' : 'queued');
    state.outSeq = seq;
    if (state.undelivered !== undefined) state.undelivered++;
    this.counters.addedOutgoing(connection.id, thread.id);
    if (goesNow) {
      link.inFlight.set(thread.id, { seq, textId });
      tx.undo(() => {
        if (link.inFlight.get(thread.id)?.seq === seq) link.inFlight.delete(thread.id);
      });
      this.counters.claimed(thread.id, seq);
      const frame: Frame = {
        type: 'text',
        thread: thread.wire_id,
        seq,
        from: thread.local_role,
        to: thread.peer_role,
        body,
      };
      after(() => {
        if (!link.send(frame)) link.inFlight.delete(thread.id);
      });
    } else if (link) this.claimNext(link, state, after, tx);
    this.threadChangedAfter(thread, tx);
    tx.afterOnce(`connection ${connection.id}`, () => this.connectionChanged(connection.id));
    return { thread: thread.wire_id, threadId: thread.id, seq, to: `${connection.name}/${thread.peer_role}` };
  }

  /** A notice for the run of an agent conversation (rejections wake it; pause notices do not). */
  private notify(thread: ThreadRow, text: string, wakes: boolean): void {
    if (thread.local_role_id === null) return;
    this.options.runs.addInput(
      { kind: 'thread', id: thread.id },
      thread.local_role_id,
      'notice',
      text,
      'parley',
      wakes,
    );
  }

  // ---------------------------------------------------------------- owners' actions

  /**
   * Pauses the connection here (DESIGN §11.5, paused means nothing moves): in one
   * transaction the status, every text waiting to be sent or on the wire failed with
   * `paused` (never sent again; a late ack still marks it delivered), and the stop of
   * every agent of its agent conversations; then the agents are signalled.
   */
  async pause(connectionId: number, by: string): Promise<void> {
    const connection = this.requireConnection(connectionId);
    if (connection.status === 'revoked') throw revokedError(connection);
    if (connection.status === 'paused') return;
    const threads = threadsOfConnection(this.db, connectionId);
    const signal = transaction(this.db, () => {
      setConnectionStatus(this.db, connectionId, 'paused');
      for (const text of waitingOutgoing(this.db, connectionId)) {
        setTextState(this.db, text.id, 'failed', 'paused');
        const thread = getThread(this.db, text.thread_id)!;
        this.notify(
          thread,
          text.state === 'queued'
            ? `Your text #${text.seq} was not sent: ${by} paused the connection to ${connection.name}.`
            : `Your text #${text.seq} may not have reached ${connection.name}: ${by} paused the connection while it was on its way, and it will not be sent again.`,
          false,
        );
      }
      return this.options.runs.stopInTransaction(threadContexts(threads), `${by} (paused the connection)`);
    });
    // What was on the wire failed: nothing of it waits for an ack any more.
    this.links.get(connectionId)?.inFlight.clear();
    this.threads.clear();
    this.connectionChanged(connectionId);
    await signal();
    for (const thread of threads) this.threadChanged(thread.id);
  }

  unpause(connectionId: number): void {
    const connection = this.requireConnection(connectionId);
    if (connection.status === 'revoked') throw revokedError(connection);
    if (connection.status !== 'paused') return;
    transaction(this.db, () => setConnectionStatus(this.db, connectionId, 'active'));
    this.connectionChanged(connectionId);
  }

  async revoke(connectionId: number, by: string): Promise<void> {
    const connection = this.requireConnection(connectionId);
    if (connection.status === 'revoked') return;
    const link = this.links.get(connectionId);
    link?.send({ type: 'revoke' });
    this.links.delete(connectionId);
    await this.endConnection(connectionId, 'us', `revoked by ${by}`);
    link?.close(CloseCode.revoked, 'this connection was revoked');
  }

  private async revokedByPeer(connectionId: number, link: PeerLink): Promise<void> {
    const connection = getConnectionRow(this.db, connectionId)!;
    await this.endConnection(connectionId, 'peer', `revoked by ${connection.name}`);
    link.close(CloseCode.revoked, 'revoked');
  }

  /** Revoked, by either side: every unacked text fails, every agent conversation closes, its agents stop. */
  private async endConnection(connectionId: number, by: 'us' | 'peer', reason: string): Promise<void> {
    const threads = threadsOfConnection(this.db, connectionId);
    const signal = transaction(this.db, () => {
      setConnectionRevoked(this.db, connectionId, by);
      for (const thread of threads) closeThread(this.db, thread.id, reason);
      for (const text of waitingOutgoing(this.db, connectionId)) setTextState(this.db, text.id, 'failed', 'revoke');
      return this.options.runs.stopInTransaction(threadContexts(threads), reason);
    });
    this.threads.clear();
    const dialer = this.dialers.get(connectionId);
    if (dialer?.timer) clearTimeout(dialer.timer);
    this.dialers.delete(connectionId);
    this.connectionChanged(connectionId);
    await signal();
    // Every agent conversation of it closed: open views must say so.
    for (const thread of threads) this.threadChanged(thread.id);
  }

  expose(connectionId: number, roles: string[]): void {
    this.requireConnection(connectionId);
    for (const role of roles)
      if (!getRoleByName(this.db, role)) throw new EngineError('not_found', `no role named "${role}"`);
    transaction(this.db, () => setExposedRoles(this.db, connectionId, roleIds(this.db, roles)));
    this.links.get(connectionId)?.send({
      type: 'roles',
      roles: exposedRoles(this.db, connectionId).map((r) => ({ name: r.name, description: r.description })),
    });
    this.connectionChanged(connectionId);
  }

  setQueueLimit(connectionId: number, limit: number): void {
    this.requireConnection(connectionId);
    transaction(this.db, () => setQueueLimit(this.db, connectionId, limit));
    this.connectionChanged(connectionId);
  }

  /**
   * Deletes roots (conversations, tasks) in one step (DESIGN §11.6): one transaction
   * closes their agent conversations, fails their unsent texts, commits the stop of
   * every agent working for them or for the roots, and runs `remove` (the delete
   * itself). A crash leaves the before or the after. `committed` runs right after the
   * commit, before any event; the agents are signalled then, and this resolves once
   * they are gone.
   */
  async deleteRoots(roots: ContextRef[], by: string, remove: () => void, committed?: () => void): Promise<void> {
    let threads: ThreadRow[] = [];
    const signal = transaction(this.db, () => {
      threads = roots.flatMap((root) => (root.kind === 'thread' ? [] : threadsByRoot(this.db, root.kind, root.id)));
      for (const root of roots) if (root.kind !== 'thread') markRootGone(this.db, root.kind, root.id);
      for (const thread of threads) {
        closeThread(this.db, thread.id, 'root deleted');
        for (const text of queuedTextsOfThread(this.db, thread.id)) setTextState(this.db, text.id, 'failed', 'closed');
      }
      const stopping = this.options.runs.stopInTransaction([...threadContexts(threads), ...roots], by);
      remove();
      return stopping;
    });
    committed?.();
    this.threads.clear();
    for (const thread of threads) this.threadChanged(thread.id);
    await signal();
    await this.options.runs.reapOrphans();
  }

  private requireConnection(id: number): ConnectionRow {
    const connection = getConnectionRow(this.db, id);
    if (!connection) throw new EngineError('not_found', `no connection ${id}`);
    return connection;
  }

  // ---------------------------------------------------------------- views

  summary(connection: ConnectionRow): ConnectionSummary {
    return {
      id: connection.id,
      name: connection.name,
      fingerprint: connection.fingerprint,
      address: connection.address,
      addressFrom: connection.address_from,
      redial: this.redialOf(connection.id),
      status: connection.status,
      online: this.isOnline(connection.id),
      queue: { used: outgoingWaiting(this.db, connection.id), limit: connection.queue_limit },
      exposedRoles: exposedRoleNames(this.db, connection.id),
      peerRoles: peerRoles(this.db, connection.id),
      lastError: this.lastErrors.get(connection.id) ?? null,
      createdAt: connection.created_at,
    };
  }

  private redialOf(connectionId: number): ConnectionSummary['redial'] {
    const dialer = this.dialers.get(connectionId);
    if (!dialer?.timer || dialer.at === null) return null;
    return { attempt: dialer.attempt, at: new Date(dialer.at).toISOString() };
  }

  threadSummary(thread: ThreadRow): ThreadSummary {
    const connection = getConnectionRow(this.db, thread.connection_id)!;
    const counts: Record<TextState, number> = { queued: 0, sent: 0, acked: 0, failed: 0, received: 0, handled: 0 };
    for (const row of all<{ state: TextState; n: number }>(
      this.db,
      'SELECT state, count(*) AS n FROM texts WHERE thread_id = ? GROUP BY state',
      thread.id,
    ))
      counts[row.state] = row.n;
    const last = get<TextRow>(this.db, 'SELECT * FROM texts WHERE thread_id = ? ORDER BY id DESC LIMIT 1', thread.id);
    return {
      id: thread.id,
      threadId: thread.wire_id,
      connection: { id: connection.id, name: connection.name, fingerprint: connection.fingerprint },
      localRole: thread.local_role,
      peerRole: thread.peer_role,
      root: { kind: thread.root_kind, id: thread.root_id, gone: thread.root_gone === 1 },
      startedBy: thread.started_by,
      status: thread.status,
      closeReason: thread.close_reason,
      run: runSummary(this.db, { kind: 'thread', id: thread.id }, this.options.runs.stoppingTurns()),
      counts,
      lastText: last ? textView(last) : null,
      createdAt: thread.created_at,
    };
  }

  texts(threadRowId: number, limit?: number, before?: number): TextView[] {
    return listTexts(this.db, threadRowId, limit, before).map(textView);
  }

  /** What a run in an agent conversation is told about where it is and whom it answers for. */
  describeThread(run: RunRow): AgentContext {
    const thread = getThread(this.db, run.context_id);
    if (!thread) throw new Error('the agent conversation no longer exists');
    const connection = getConnectionRow(this.db, thread.connection_id)!;
    const peer = `${connection.name}/${thread.peer_role}`;
    const role = { id: thread.local_role_id ?? 0, name: thread.local_role };
    const base = {
      kind: 'thread' as const,
      id: thread.id,
      role,
      peer,
      peerStarted: thread.started_by === 'peer',
    };
    if (thread.started_by === 'peer') {
      return {
        ...base,
        summary: `You are ${role.name}, in an agent conversation that ${peer} started.`,
        root: { kind: 'thread', id: thread.id, summary: `this agent conversation with ${peer}` },
        reporting:
          `Answer ${peer} with \`reply\`; when a turn of yours ends without a reply, your final output is sent to ${peer} as your reply. ` +
          'To ask another peer for help, `send` to PEER/ROLE (then nothing is sent by itself): its answer comes back to a run that answers for this agent conversation.',
      };
    }
    let rootSummary: string;
    let reporting: string;
    if (thread.root_gone) {
      rootSummary = 'a topic that was deleted';
      reporting = 'The topic this answered for was deleted; there is no one to report to.';
    } else if (thread.root_kind === 'conversation') {
      const conversation = getConversationRow(this.db, thread.root_id);
      const person = conversation ? getPerson(this.db, conversation.person_id) : undefined;
      rootSummary = `your conversation with ${person?.name ?? 'a person'}`;
      const name = person?.name ?? 'the person';
      reporting = `${peer} is answering for ${rootSummary}. Tell ${name} with \`report\`; continue with ${peer} with \`reply\`. Your final output is not sent: if you report nothing, ${name} sees only that ${peer} answered.`;
    } else if (thread.root_kind === 'task') {
      const task = getTaskRow(this.db, thread.root_id);
      rootSummary = `task #${thread.root_id} "${task?.title ?? ''}"`;
      reporting = `${peer} is answering for ${rootSummary}. Add it to the task log with \`report\`; continue with ${peer} with \`reply\`. Your final output is not sent: if you report nothing, the task log shows only that ${peer} answered.`;
    } else {
      const rootThread = getThread(this.db, thread.root_id);
      const rootConnection = rootThread ? getConnectionRow(this.db, rootThread.connection_id) : undefined;
      const asker = rootThread ? `${rootConnection?.name}/${rootThread.peer_role}` : 'a peer';
      rootSummary = `the agent conversation ${asker} started with you`;
      reporting = `${peer} is answering for ${rootSummary}. Pass it on to ${asker} with \`report\`; continue with ${peer} with \`reply\`. If you report nothing, your final output is passed on to ${asker}.`;
    }
    return {
      ...base,
      summary: `You are ${role.name}, in an agent conversation you started with ${peer}.`,
      root: { kind: thread.root_kind, id: thread.root_id, summary: rootSummary },
      reporting,
    };
  }

  /** Who may see changes of an agent conversation: the access rules say (DESIGN §7). */
  threadAudience(thread: ThreadRow): Audience {
    return threadAudience(this.db, thread);
  }

  threadChanged(threadRowId: number): void {
    const thread = getThread(this.db, threadRowId);
    if (thread)
      this.options.events.emit({ type: 'changed', kind: 'thread', id: threadRowId }, this.threadAudience(thread));
  }

  /**
   * Inside a transaction: the agent conversation's change event, emitted once after the
   * commit however many of its texts the commit held. Its audience is read now, inside
   * the transaction: a read after the commit runs on its own and takes SQLite's WAL
   * locks anew (wire benchmark, issue 3).
   */
  private threadChangedAfter(thread: ThreadRow, tx: Tx): void {
    let audience: Audience = 'everyone';
    const event = { type: 'changed', kind: 'thread', id: thread.id } as const;
    if (tx.afterOnce(`thread ${thread.id}`, () => this.options.events.emit(event, audience)))
      audience = this.threadAudience(thread);
  }

  private connectionChanged(connectionId: number): void {
    this.options.events.emit({ type: 'changed', kind: 'connection', id: connectionId }, eventAudience.installation());
  }
}

/** A frame whose handling failed is not acked, so the peer sends it again later. */
/** Takes the thread's text `seq` off the wire, if that is the one on it (put back should the commit roll back). */
function takeOffWire(link: PeerLink, threadRowId: number, seq: number, tx: Tx): InFlight | undefined {
  const flying = link.inFlight.get(threadRowId);
  if (flying?.seq !== seq) return undefined;
  link.inFlight.delete(threadRowId);
  tx.undo(() => link.inFlight.set(threadRowId, flying));
  return flying;
}

function frameFailed(error: unknown): void {
  if ((error as Error).message !== 'shutting down') log.error('handling a peer frame failed', { error: String(error) });
}

/** Outgoing texts of a connection waiting to be sent or on the wire, oldest first. */
function waitingOutgoing(db: Db, connectionId: number): TextRow[] {
  return all<TextRow>(
    db,
    `SELECT texts.* FROM texts JOIN threads ON threads.id = texts.thread_id
     WHERE texts.state IN ('queued', 'sent', 'received') AND texts.state IN ('queued', 'sent')
       AND texts.direction = 'out' AND threads.connection_id = ? ORDER BY texts.id`,
    connectionId,
  );
}

/** An ack for a text that failed because the owner paused while it was on the wire: it arrived. */
function markAckedAfterPause(db: Db, threadRowId: number, seq: number): void {
  runSql(
    db,
    "UPDATE texts SET state = 'acked', reason = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE thread_id = ? AND direction = 'out' AND seq = ? AND state = 'failed' AND reason = 'paused'",
    threadRowId,
    seq,
  );
}

const threadContexts = (threads: ThreadRow[]): ContextRef[] =>
  threads.map((thread) => ({ kind: 'thread' as const, id: thread.id }));

function revokedError(connection: ConnectionRow): EngineError {
  return new EngineError('revoked', `the connection to ${connection.name} was revoked`);
}

function roleIds(db: Db, names: string[]): number[] {
  return names.map((name) => getRoleByName(db, name)?.id).filter((id): id is number => id !== undefined);
}

function protocolMismatch(protocol: number): string {
  return `speaks protocol ${protocol}, and this Parley speaks only protocol ${PROTOCOL_VERSION} ("thread"); both sides must run the same version`;
}

const textView = (row: TextRow): TextView => ({
  id: row.id,
  direction: row.direction,
  seq: row.seq,
  body: row.body,
  state: row.state,
  reason: row.reason,
  createdAt: row.created_at,
});
