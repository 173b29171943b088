// What the engine's parts share: the database and its group commit, the agent
// conversations in memory, the counters, the open links, and the change events and
// notices every part sends. Built once by the ConnectionEngine facade.
import { approvalAudience } from '../access/lookup';
import { eventAudience } from '../access/rules';
import type { Audience, EventHub } from '../events';
import { log } from '../log';
import type { RunManager } from '../runs/run-manager';
import type { Db } from '../store/database';
import type { ApprovalRow } from '../store/queries/approvals';
import { getConnectionRow, type ConnectionRow } from '../store/queries/connections';
import { getThread, type ThreadRow } from '../store/queries/threads';
import { isDiskFull, isStorageFailure } from '../store/storage-errors';
import { EngineError } from './errors';
import { GroupCommit, type Tx } from './group-commit';
import type { Identity } from './identity';
import type { PeerLink } from './peer-link';
import type { PortNetwork } from './port-network';
import type { Backoff } from './redial';
import { ThreadCache } from './sender-key';
import { CloseCode, type AckFrame } from './wire';
import { WireCounters } from './wire-counters';

export interface EngineOptions {
  db: Db;
  identity: Identity;
  name: () => string;
  events: EventHub;
  runs: RunManager;
  /** Texts one agent conversation may send per hour. */
  textBudgetPerHour?: number;
  reconnect?: Backoff;
  /**
   * The newest revision of protocol 2 this installation speaks, dialling and listening;
   * the newest by default. Tests stand in for an older release's peer with it.
   */
  revision?: number;
  /** Called after each of the engine's commits: the installation checkpoints the log in the background. */
  afterCommit?: () => void;
  /** The DHT carrier's own switches: serve as a blind relay; never holepunch (tests). */
  carrier?: { relay: boolean; holepunch: boolean };
  /** Links over these ports instead of TLS on TCP, and no DHT (tests: installations linked in memory). */
  ports?: PortNetwork;
}

/** A text on the wire: its seq, and its row so its ack can update it by id. */
export interface InFlight {
  seq: number;
  textId: number;
}

/** A link that finished its handshake and belongs to a connection: what the engine keeps about it. */
export interface OpenLink {
  readonly connectionId: number;
  readonly link: PeerLink;
  /** Per thread row id, the text on the wire waiting for its ack. */
  readonly inFlight: Map<number, InFlight>;
  /**
   * Acks read since the group commit that records them was queued; null once it ran or
   * another frame came in after them (acks never pass a frame that came before them).
   */
  acks: AckFrame[] | null;
}

export class EngineCore {
  readonly db: Db;
  readonly batch: GroupCommit;
  /** Limit checks and the next text to send without scanning history. */
  readonly counters: WireCounters;
  /** Agent conversations in memory, so a text does not read its thread's row. */
  readonly threads: ThreadCache;
  /** The open link of each connection that has one. */
  readonly open = new Map<number, OpenLink>();
  /** Who may see changes of an agent conversation; set by the facade. */
  audienceOf: (thread: ThreadRow) => Audience = () => 'owners';

  constructor(readonly options: EngineOptions) {
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
  }

  get fingerprint(): string {
    return this.options.identity.fingerprint;
  }

  requireConnection(id: number): ConnectionRow {
    const connection = getConnectionRow(this.db, id);
    if (!connection) throw new EngineError('not_found', `no connection ${id}`);
    return connection;
  }

  connectionChanged(connectionId: number): void {
    this.options.events.emit({ type: 'changed', kind: 'connection', id: connectionId }, eventAudience.installation());
  }

  threadChanged(threadRowId: number): void {
    const thread = getThread(this.db, threadRowId);
    if (thread) this.options.events.emit({ type: 'changed', kind: 'thread', id: threadRowId }, this.audienceOf(thread));
  }

  /**
   * Inside a transaction: the agent conversation's change event, emitted once after the
   * commit however many of its texts the commit held. Its audience is read now, inside
   * the transaction: a read after the commit runs on its own and takes SQLite's WAL
   * locks anew.
   */
  threadChangedAfter(thread: ThreadRow, tx: Tx): void {
    tx.afterOnceFrom('thread', thread.id, thread, this.tellThreadChanged);
  }

  private readonly tellThreadChanged = (thread: ThreadRow): (() => void) => {
    let tell = this.threadTells.get(thread);
    if (tell === undefined) {
      const event = { type: 'changed', kind: 'thread', id: thread.id } as const;
      const audience = this.audienceOf(thread);
      tell = () => this.options.events.emit(event, audience);
      this.threadTells.set(thread, tell);
    }
    return tell;
  };

  /**
   * Each agent conversation's change event, with its audience, by the row object the
   * thread cache holds: who reads an agent conversation follows from its root, which a
   * row keeps until it is replaced (a root deleted, the cache dropped), and a busy one
   * changes with every commit.
   */
  private readonly threadTells = new WeakMap<ThreadRow, () => void>();

  /** What waits for a person changed (held, decided, cancelled): its readers hear of it. */
  approvalChanged(approval: Pick<ApprovalRow, 'id' | 'kind' | 'context_kind' | 'context_id'>): void {
    this.options.events.emit(
      { type: 'changed', kind: 'approval', id: approval.id },
      approvalAudience(this.db, approval),
    );
  }

  /** Inside a transaction: the approval's change event after the commit, its audience read now. */
  approvalChangedAfter(approval: Pick<ApprovalRow, 'id' | 'kind' | 'context_kind' | 'context_id'>, tx: Tx): void {
    const audience = approvalAudience(this.db, approval);
    tx.afterOnce('approval', approval.id, () =>
      this.options.events.emit({ type: 'changed', kind: 'approval', id: approval.id }, audience),
    );
  }

  /** Inside a transaction: the connection's change event, once after the commit. */
  connectionChangedAfter(connectionId: number, tx: Tx): void {
    tx.afterOnceFrom('connection', connectionId, connectionId, this.tellConnectionChanged);
  }

  private readonly tellConnectionChanged = (connectionId: number) => () => this.connectionChanged(connectionId);

  /**
   * A notice for the run of an agent conversation. `wakes` says whether it may start a
   * turn; the run manager holds it anyway when the run's last turn was stopped.
   */
  notify(thread: ThreadRow, text: string, wakes: boolean, answers = false): void {
    if (thread.local_role_id === null) return;
    this.options.runs.addInput(
      { kind: 'thread', id: thread.id },
      thread.local_role_id,
      'notice',
      text,
      'parley',
      wakes,
      answers,
    );
  }
}

/**
 * A frame whose handling failed is not acked, so the peer sends it again later. When
 * the disk is what failed, the link closes with "try again later": on the next link the
 * peer sends again what is unacked, and this side resends its own, so nothing waits for
 * an ack that will never come.
 */
export function frameFailed(link: PeerLink, error: unknown): void {
  if ((error as Error).message === 'shutting down') return;
  if (isStorageFailure(error)) {
    log.warn('could not record a peer frame; the link closes so the peer sends it again', { error: String(error) });
    link.close(
      CloseCode.tryAgainLater,
      isDiskFull(error) ? 'try again later: the disk is full here' : 'try again later',
    );
    return;
  }
  log.error('handling a peer frame failed', { error: String(error) });
}
