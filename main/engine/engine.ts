// The connection engine: pairing, links to peers, and agent conversations per ADR
// 0035, behind one facade. Each concern lives in a file of its own:
//
//   pairing.ts   invitations: invite, accept, a stranger's invitation redeemed
//   links.ts     listening, dialling with backoff, the handshake, one link per peer
//   receiver.ts  frames in; which text is accepted is decided by receive-decision.ts
//   sender.ts    root derivation, the sender key, limits, enqueue, resend, the reply guard
//   control.ts   owners' pause, unpause, revoke, policies; deleting roots
//   holds.ts     texts held for a person's approval, either way, and the decision
//   turn-signals.ts  telling a peer what our agent does with its texts (`turn`)
//   views.ts     what the app API and agents are shown (directory.ts: whom roles can ask)
//
// core.ts holds what they share (the database's group commit, agent conversations in
// memory, open links, events); peer-link.ts is the transport they all speak through.
import type {
  ConnectionPolicy,
  ConnectionSummary,
  ContextRef,
  TextView,
  ThreadSummary,
  TrustLevel,
} from '../../shared/domain';
import type { AgentContext, Caller, PeerDirectoryEntry, PeerGateway, TurnOutcome } from '../agents/types';
import { threadAudience } from '../access/lookup';
import type { Audience } from '../events';
import type { ConnectionRow } from '../store/queries/connections';
import { findRun, lastTurnOfRun, type RunRow } from '../store/queries/runs';
import { transaction } from '../store/database';
import { getThread, type ThreadRow } from '../store/queries/threads';
import type { ThreadListRow } from '../store/queries/thread-lists';
import { Control } from './control';
import { EngineCore, frameFailed, type EngineOptions } from './engine-core';
import type { DhtBootstrap } from '../net/dht-bootstrap';
import { LinkManager } from './links';
import { Pairing } from './pairing';
import { Receiver } from './receiver';
import { Holds, type HeldDecision } from './holds';
import type { HistoryEntry, ReportResult, SendResult } from '../role-api/protocol';
import { Sender } from './sender';
import { openRelayAsks, relayAnswerLost } from './relay-end';
import { TurnSignals } from './turn-signals';
import { Views } from './summaries';
import { Withdrawals } from './withdrawals';
import type { TurnState } from './wire';

export type { EngineOptions } from './engine-core';
export type { SendResult } from '../role-api/protocol';
export type { HeldDecision } from './holds';

type RunCaller = Extract<Caller, { kind: 'run' }>;

export class ConnectionEngine implements PeerGateway {
  private readonly core: EngineCore;
  private readonly links: LinkManager;
  private readonly pairing: Pairing;
  private readonly sender: Sender;
  private readonly receiver: Receiver;
  private readonly control: Control;
  private readonly signals: TurnSignals;
  private readonly views: Views;
  private readonly holds: Holds;
  private readonly withdrawals: Withdrawals;

  constructor(options: EngineOptions) {
    const core = new EngineCore(options);
    core.audienceOf = (thread) => this.threadAudience(thread);
    this.core = core;
    this.withdrawals = new Withdrawals(core);
    this.holds = new Holds(
      core,
      (open, state, after, tx) => this.sender.claimNext(open, state, after, tx),
      (thread, textId, seq, after) => this.withdrawals.declined(thread, textId, seq, after),
    );
    this.sender = new Sender(core, (id) => this.links.isOnline(id), this.holds);
    this.links = new LinkManager(core, {
      // A new link: our roles first, what our agents did meanwhile, then every agent
      // conversation's unacked text again.
      opened: (open) => {
        this.control.sendRoles(open);
        this.signals.flush(open);
        this.withdrawals.flush(open);
        this.sender.resendAll(open).catch((error: unknown) => frameFailed(open.link, error));
        this.links.sendReach(open);
        core.connectionChanged(open.connectionId);
      },
      frame: (open, frame) =>
        frame.type === 'reach' ? this.links.takeReach(open, frame) : this.receiver.onFrame(open, frame),
      admitStranger: (peer, hello) => this.pairing.admitStranger(peer, hello),
      invitationOpen: () => this.pairing.invitationOpen(),
    });
    this.pairing = new Pairing(core, this.links);
    this.signals = new TurnSignals(core);
    this.control = new Control(core, this.links, (id) => this.signals.forget(id), this.withdrawals);
    this.receiver = new Receiver(
      core,
      this.sender,
      this.holds,
      (open) => this.control.revokedByPeer(open),
      (open, frame) => this.signals.acked(open, frame),
      this.withdrawals,
    );
    this.views = new Views(core, this.links);
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Listens for peers on host:port (0 picks a free port); returns the bound host:port,
   * which is also what invitations carry until setAddress says otherwise.
   */
  listen(host: string, port: number): Promise<string> {
    return this.links.listen(host, port);
  }

  /** Joins the DHT and listens there under our DHT key (needs `listen` first); returns the key. */
  listenDht(bootstrap: Exclude<DhtBootstrap, { kind: 'off' }>): Promise<string> {
    return this.links.listenDht(bootstrap);
  }

  stopDht(): Promise<void> {
    return this.links.stopDht();
  }

  /** Our DHT key (hex), or null when not on the DHT. */
  get dhtKey(): string | null {
    return this.links.dhtKey;
  }

  /** The key (hex) our own blind relay listens under (`parley serve --relay`), or null. */
  get relayKey(): string | null {
    return this.links.relayKey;
  }

  /** Whether a blind relay answers at this key now; null when off the DHT. */
  probeRelay(key: string): Promise<boolean | null> {
    return this.links.probeRelay(key);
  }

  /** Our relays changed: invitations carry the new list, and every online peer is told. */
  relaysChanged(): void {
    this.links.relaysChanged();
  }

  /** host:port the listener is bound to, or null when not listening. */
  get listening(): string | null {
    return this.links.listening;
  }

  /** Stops taking new peer connections; links already open are left to reconnectAll. */
  stopListening(): Promise<void> {
    return this.links.stopListening();
  }

  /** What invitations and hellos carry: the address peers dial (null: none, nobody can be invited). */
  setAddress(address: string | null): void {
    this.links.setAddress(address);
  }

  get address(): string | null {
    return this.links.address;
  }

  /** Drops every open link; both sides dial again, and our hello tells each peer where we are now. */
  reconnectAll(): void {
    this.links.reconnectAll();
  }

  /** Dials every connection that is not revoked. */
  start(): void {
    this.links.start();
  }

  /** Writes to tables the engine keeps nothing of (the search index): its caches stay. */
  untracked<T>(write: () => T): T {
    return this.core.batch.untracked(write);
  }

  async close(): Promise<void> {
    const closing = this.links.close();
    this.core.batch.close();
    await closing;
  }

  isOnline(connectionId: number): boolean {
    return this.links.isOnline(connectionId);
  }

  // ---------------------------------------------------------------- pairing

  invite(createdBy: number, roles: string[], expiresInMinutes?: number) {
    return this.pairing.invite(createdBy, roles, expiresInMinutes);
  }

  accept(code: string, roles: string[]): Promise<ConnectionRow> {
    return this.pairing.accept(code, roles);
  }

  // ---------------------------------------------------------------- the role API

  send(caller: RunCaller, to: string, text: string): Promise<SendResult> {
    return this.sender.sendAs(caller.run, caller.role, to, text, caller.turn.id);
  }

  /** The send of a run of `role` (the role API's path; the wire benchmark calls it directly). */
  sendAs(
    run: RunRow,
    role: { id: number; name: string },
    to: string,
    text: string,
    /** The turn whose agent sends it (none for the wire benchmark's sends). */
    turnId: number | null = null,
  ): Promise<SendResult> {
    return this.sender.sendAs(run, role, to, text, turnId);
  }

  reply(caller: RunCaller, text: string): Promise<SendResult> {
    return this.sender.reply(caller.run, caller.turn.id, text);
  }

  /** The reply guard: a turn's final output as its reply, written with `alongside` (the turn's end). */
  replyWithOutput(run: RunRow, turnId: number, text: string, alongside?: () => void): Promise<SendResult> {
    return this.sender.replyWithOutput(run, turnId, text, alongside);
  }

  /** An answer came back and its turn passed nothing on: its root shows that it arrived. */
  answerArrived(run: RunRow, turnId: number, outcome: TurnOutcome, alongside?: () => void): Promise<void> {
    return this.sender.answerArrived(run, turnId, outcome, alongside);
  }

  /** Whom roles can ask: the connections, their state, the peer roles each lets us address. */
  peers(): PeerDirectoryEntry[] {
    return this.views.peers();
  }

  /** `parley report` from a run in an agent conversation: to its root. */
  reportOnThread(caller: RunCaller, text: string): Promise<ReportResult> {
    return this.sender.reportOnThread(caller.run, caller.turn.id, caller.role, text);
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- a refusal becomes a rejection
  async history(
    role: { id: number; name: string },
    withPeerRole: string,
    include: (threadRowId: number) => boolean = () => true,
  ): Promise<HistoryEntry[]> {
    return this.views.history(role, withPeerRole, include);
  }

  // ---------------------------------------------------------------- owners' actions

  pause(connectionId: number, by: string): Promise<void> {
    return this.control.pause(connectionId, by);
  }

  unpause(connectionId: number): void {
    this.control.unpause(connectionId);
  }

  revoke(connectionId: number, by: string): Promise<void> {
    return this.control.revoke(connectionId, by);
  }

  expose(connectionId: number, roles: string[]): void {
    this.control.expose(connectionId, roles);
  }

  setQueueLimit(connectionId: number, limit: number): void {
    this.control.setQueueLimit(connectionId, limit);
  }

  /** Whether sends on the connection, and texts from its peer, wait for a person from now on. */
  setPolicy(connectionId: number, policy: Partial<ConnectionPolicy>): void {
    this.control.setPolicy(connectionId, policy);
  }

  /** How far runs working for this connection's peer may reach, from their next turn. */
  setTrust(connectionId: number, level: TrustLevel): void {
    this.control.setTrust(connectionId, level);
  }

  /** A person here takes back the asks of an agent conversation started here; the peer stops, down the chain. */
  withdraw(threadRowId: number, by: string): Promise<{ withdrawn: true }> {
    return this.withdrawals.withdraw(threadRowId, by);
  }

  /**
   * threads.stop: a person here stops the agent of an agent conversation, all in one
   * commit. When it works for a peer's agent conversation and waits on asks of its own
   * (a relay), those asks are withdrawn down the chain, since nobody wants their answer
   * now; and a run that only waited on them, with no turn to stop, tells its asker
   * `stopped` all the same, so the asker does not read Working for good.
   */
  async stopThread(threadRowId: number, by: string): Promise<{ stopped: boolean }> {
    const { db } = this.core;
    let withdrawn = () => {};
    let told = false;
    const signal = transaction(db, () => {
      const thread = getThread(db, threadRowId);
      const run = findRun(db, { kind: 'thread', id: threadRowId });
      const turn = run ? lastTurnOfRun(db, run.id) : undefined;
      const relaying = thread?.started_by === 'peer' && openRelayAsks(db, threadRowId).length > 0;
      const signal = this.core.options.runs.stopInTransaction([{ kind: 'thread', id: threadRowId }], by);
      if (relaying) {
        withdrawn = this.withdrawals.withdrawUnder('thread', threadRowId, by);
        if (turn && turn.status !== 'running') {
          this.signals.turn(threadRowId, turn.id, 'stopped');
          told = true;
        }
      }
      return signal;
    });
    withdrawn();
    const stopped = await signal();
    return { stopped: stopped || told };
  }

  /** A person's word on a held text (the caller has checked that it is theirs to give). */
  decideHeld(approvalId: number, approve: boolean, by: { id: number; name: string }): Promise<HeldDecision> {
    return this.holds.decide(approvalId, approve, by);
  }

  /**
   * Deletes conversations or tasks and closes their agent conversations, in one step
   * (`remove` deletes the rows; `committed` runs right after the commit, before any event).
   */
  deleteRoots(roots: ContextRef[], by: string, remove: () => void, committed?: () => void): Promise<void> {
    return this.control.deleteRoots(roots, by, remove, committed);
  }

  // ---------------------------------------------------------------- views

  summary(connection: ConnectionRow): ConnectionSummary {
    return this.views.summary(connection);
  }

  /** One agent conversation's summary (one statement). */
  threadSummary(thread: Pick<ThreadRow, 'id'>): ThreadSummary {
    return this.views.threadSummary(thread);
  }

  /** Summaries of a list's rows, read with their columns by store/queries/thread-lists.ts. */
  threadSummaries(rows: ThreadListRow[]): ThreadSummary[] {
    return this.views.threadSummaries(rows);
  }

  texts(threadRowId: number, limit?: number, before?: number): TextView[] {
    return this.views.texts(threadRowId, limit, before);
  }

  /** What a run in an agent conversation is told about where it is and whom it answers for. */
  describeThread(run: RunRow): AgentContext {
    return this.views.describeThread(run);
  }

  /** Who may see changes of an agent conversation: the access rules say (DESIGN §7). */
  threadAudience(thread: ThreadRow): Audience {
    return threadAudience(this.core.db, thread);
  }

  threadChanged(threadRowId: number): void {
    this.core.threadChanged(threadRowId);
  }

  /** A turn in an agent conversation took the peer's texts, or ended without answering: the peer hears the state. */
  turnState(threadRowId: number, turnId: number, state: TurnState, waitingOn?: string[]): void {
    this.signals.turn(threadRowId, turnId, state, waitingOn);
    // A turn here that took a relayed ask's answer and could not pass it on.
    if (state === 'stopped' || state === 'failed') {
      const thread = getThread(this.core.db, threadRowId);
      if (thread?.started_by === 'local')
        relayAnswerLost(
          this.core,
          thread,
          state === 'stopped' ? 'the turn that took the answer was stopped here' : 'the turn that took it failed here',
        );
    }
  }
}
