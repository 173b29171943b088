// The sending side (ADR 0035): the root follows from the sending run, never from the
// agent; a send goes to the open, locally started agent conversation of the sender key
// (connection, root, sending role, recipient role), made on first use with a random
// thread ID. A send is committed before it returns; per agent conversation one text
// is on the wire at a time, and agent conversations never wait for each other.
import { randomBytes } from 'node:crypto';
import type { ContextKind } from '../../shared/domain';
import { PEER_ROLE_PATTERN } from '../../shared/role-name';
import { ruleAllowing } from '../access/allow-rule-lookup';
import { rootFacts } from '../access/lookup';
import { eventAudience, type Audience } from '../access/rules';
import type { TurnOutcome } from '../agents/types';
import { roleApiRequests, type ReportResult, type SendResult } from '../role-api/protocol';
import { linePlace, PARLEY_AUTHOR, postLine, postReport, type Posting } from '../posting/post-line';
import { connectionByName, getConnectionRow, peerRoleNames, type ConnectionRow } from '../store/queries/connections';
import { turnMaySend, type RunRow } from '../store/queries/runs';
import {
  getThread,
  insertText,
  insertThread,
  setTextState,
  undeliveredHeads,
  type ThreadRow,
} from '../store/queries/threads';
import { relayAnswerLost } from './relay-end';
import type { EngineCore, InFlight, OpenLink } from './engine-core';
import { noConnection, notExposed, peerDirectory } from './directory';
import { EngineError } from './errors';
import { CHECKED_FIRST, type Tx } from './group-commit';
import type { Holds } from './holds';
import type { ThreadState } from './sender-key';
import type { TextFrame } from './wire';

type After = (action: () => void) => void;

/** Who sends: the run, and the turn of it whose agent sends (null for a send no turn made). */
interface SendingTurn {
  run: RunRow;
  turnId: number | null;
}

/** What an agent is told at once when its send waits for a person. */
export const HELD_NOTE =
  'held for approval — do not send it again. A person who can read this topic decides; you are told when they approve or deny it.';

/** `PEER/ROLE`: a connection's name and a role of the peer's. */
export const PEER_ROLE = PEER_ROLE_PATTERN;

/** The one text frame: what goes on the wire for text `seq` of an agent conversation. */
export const textFrame = (thread: ThreadRow, seq: number, body: string): TextFrame => ({
  type: 'text',
  thread: thread.wire_id,
  seq,
  from: thread.local_role,
  to: thread.peer_role,
  body,
});

/** Takes the thread's text `seq` off the wire, if that is the one on it (put back should the commit roll back). */
export function takeOffWire(open: OpenLink, threadRowId: number, seq: number, tx: Tx): InFlight | undefined {
  const flying = open.inFlight.get(threadRowId);
  if (flying?.seq !== seq) return undefined;
  open.inFlight.delete(threadRowId);
  tx.undo(() => open.inFlight.set(threadRowId, flying));
  return flying;
}

export class Sender {
  private readonly budget: number;
  /** Where lines for people go: a root's conversation or task log. */
  private readonly posting: Posting;

  constructor(
    private readonly core: EngineCore,
    /** Whether a connection's link is up (for the peers a refusal names). */
    private readonly isOnline: (connectionId: number) => boolean,
    /** What waits for a person: a held text gets its approval there. */
    private readonly holds: Holds,
  ) {
    this.budget = core.options.textBudgetPerHour ?? 50;
    this.posting = { db: core.db, events: core.options.events };
  }

  /** The root of what a run works on (ADR 0035): never chosen by the agent. */
  private rootOf(
    run: RunRow,
    /** Inside a group commit: the thread from the cache. */
    cached = false,
  ): { kind: ContextKind; id: number; thread: ThreadRow | null; state: ThreadState | null } {
    if (run.context_kind !== 'thread') return { kind: run.context_kind, id: run.context_id, thread: null, state: null };
    const state = cached ? this.core.threads.byRowId(run.context_id) : undefined;
    const thread = state?.row ?? getThread(this.core.db, run.context_id);
    if (!thread) throw new EngineError('closed', 'this agent conversation no longer exists');
    return { kind: thread.root_kind, id: thread.root_id, thread, state: state ?? null };
  }

  /**
   * The send of a run of `role`: `parley send` (the wire benchmark calls it directly).
   * `turnId`: the turn whose agent sends it, kept on the text.
   */
  sendAs(
    run: RunRow,
    role: { id: number; name: string },
    to: string,
    text: string,
    turnId: number | null,
  ): Promise<SendResult> {
    const address = this.addressOf(to);
    if (!address) return Promise.reject(new EngineError('invalid', `"${to}" must look like PEER/ROLE`));
    const { peerName, peerRole } = address;
    const { db, batch, threads } = this.core;
    return batch.run((after, tx) => {
      // A send checked while its turn ran can reach this commit after a Stop or a
      // withdrawal ended the turn (and withdrew the asks it had made): it goes nowhere.
      if (turnId !== null && turnId !== undefined && !turnMaySend(db, turnId))
        throw new EngineError(
          'invalid',
          'the turn that sends this is over (stopped or withdrawn); nothing more goes out from it',
        );
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
      state ??= threads.openLocal(connection.id, root.kind, root.id, role.id, peerRole);
      // Starting or continuing our own agent conversation addresses the peer's role: it must be exposed to us.
      if (state?.row.started_by !== 'peer') {
        const exposedToUs = batch.memo('peer role names', connection.id, () => peerRoleNames(db, connection.id));
        if (!exposedToUs.includes(peerRole)) throw notExposed(db, connection, peerRole);
      }
      this.checkLimits(connection, state?.row.id);
      tx.writing();
      state ??= threads.load(
        insertThread(db, {
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
      return this.enqueue(connection, state, text, { run, turnId }, after, tx);
    }, CHECKED_FIRST);
  }

  /** The last address a send named, parsed: a run sends to the same peer role again and again. */
  private lastAddress: { to: string; peerName: string; peerRole: string } | null = null;

  /** `PEER/ROLE` parsed; null when it is not one. */
  private addressOf(to: string): { peerName: string; peerRole: string } | null {
    if (this.lastAddress?.to === to) return this.lastAddress;
    const match = PEER_ROLE.exec(to);
    if (!match) return null;
    const address = { to, peerName: match[1]!, peerRole: match[2]! };
    this.lastAddress = address;
    return address;
  }

  /** `parley reply` from a run in an agent conversation: in it. */
  reply(run: RunRow, turnId: number, text: string): Promise<SendResult> {
    return this.replyIn({ run, turnId }, run.context_id, text);
  }

  /**
   * The reply guard (DESIGN §11.7): a turn's final output sent as its reply, checked
   * like `parley reply`; `alongside` (the run manager's end of the turn) is written in
   * the same commit, so the end and the answer are never apart.
   */
  replyWithOutput(run: RunRow, turnId: number, text: string, alongside?: () => void): Promise<SendResult> {
    const parsed = roleApiRequests.reply.shape.text.safeParse(text);
    if (!parsed.success) return Promise.reject(new EngineError('invalid', parsed.error.issues[0]!.message));
    return this.replyIn({ run, turnId }, run.context_id, parsed.data, alongside);
  }

  /**
   * An answer came back in an agent conversation this side started, and the turn it
   * woke passed nothing on (DESIGN §11.7): a line in the person's conversation or the
   * task's log says that it arrived. When the root is an agent conversation a peer
   * started (a relay), the turn's final output goes on there, as a report would.
   */
  async answerArrived(run: RunRow, turnId: number, outcome: TurnOutcome, alongside?: () => void): Promise<void> {
    const { db } = this.core;
    const thread = getThread(db, run.context_id);
    if (!thread || thread.started_by !== 'local' || thread.root_gone) return;
    const connection = getConnectionRow(db, thread.connection_id)!;
    const peer = `${connection.name}/${thread.peer_role}`;
    const note = outcome.ok
      ? `${peer} answered (see the agent conversation)`
      : `${peer} answered, but ${thread.local_role} failed on it: ${outcome.error} (see the agent conversation)`;
    const place = linePlace({ kind: thread.root_kind, id: thread.root_id });
    if (place) postLine(this.posting, place, { author: PARLEY_AUTHOR, text: note, entry: 'notice' }, alongside);
    else if (outcome.ok && outcome.output.trim()) {
      const parsed = roleApiRequests.report.shape.text.safeParse(outcome.output);
      if (!parsed.success) throw new EngineError('invalid', parsed.error.issues[0]!.message);
      await this.replyIn({ run, turnId }, thread.root_id, parsed.data, alongside);
    } else if (outcome.ok) relayAnswerLost(this.core, thread, 'the turn that took it passed nothing on');
  }

  /**
   * A send on an agent conversation that exists: `parley reply`, and the reply guard
   * (whose `alongside` writes the end of the turn in the same commit).
   */
  private replyIn(sender: SendingTurn, threadRowId: number, text: string, alongside?: () => void): Promise<SendResult> {
    return this.core.batch.run((after, tx) => {
      const state = this.core.threads.byRowId(threadRowId);
      if (!state) throw new EngineError('closed', 'this agent conversation no longer exists');
      const thread = state.row;
      if (thread.status === 'closed')
        throw new EngineError('closed', `this agent conversation is closed (${thread.close_reason})`);
      const connection = this.usableConnection(getConnectionRow(this.core.db, thread.connection_id)!.name);
      this.checkLimits(connection, thread.id);
      tx.writing();
      alongside?.();
      return this.enqueue(connection, state, text, sender, after, tx);
    });
  }

  /** `parley report` from a run in an agent conversation: to its root. */
  async reportOnThread(
    run: RunRow,
    turnId: number,
    role: { id: number; name: string },
    text: string,
  ): Promise<ReportResult> {
    const { db } = this.core;
    const root = this.rootOf(run);
    if (root.thread?.root_gone)
      throw new EngineError('closed', 'the topic this agent conversation answered for was deleted');
    const place = linePlace(root);
    if (place) {
      const reported = postReport(this.posting, place, role, text, turnId);
      if (!reported) throw new EngineError('closed', `the ${place.kind} this answers for was deleted`);
      return reported;
    }
    // The root is an agent conversation a peer started: report there, to that peer.
    return this.core.batch.run((after, tx) => {
      const state = this.core.threads.byRowId(root.id);
      if (!state || state.row.status === 'closed')
        throw new EngineError('closed', 'the agent conversation this answers for is closed');
      const connection = this.usableConnection(getConnectionRow(db, state.row.connection_id)!.name);
      this.checkLimits(connection, state.row.id);
      return { reported: 'thread' as const, ...this.enqueue(connection, state, text, { run, turnId }, after, tx) };
    });
  }

  private usableConnection(name: string): ConnectionRow {
    const connection = this.core.batch.memo('connection named', name, () => connectionByName(this.core.db, name));
    if (!connection) throw noConnection(peerDirectory(this.core.db, this.isOnline), name);
    if (connection.status === 'revoked') throw new EngineError('revoked', `the connection to ${name} was revoked`);
    if (connection.status === 'paused')
      throw new EngineError('paused', `the connection to ${name} is paused; an owner can unpause it`);
    // The peer told us it paused: refused here, with nothing on the wire.
    if (connection.peer_paused_at !== null)
      throw new EngineError(
        'paused',
        `${name} has paused the connection; nothing can be sent until ${name} unpauses it`,
      );
    return connection;
  }

  /** The budget and the queue limit, checked before a send writes anything. */
  private checkLimits(connection: ConnectionRow, threadRowId: number | undefined): void {
    const { counters } = this.core;
    if (threadRowId === undefined ? this.budget <= 0 : counters.overBudget(threadRowId, this.budget))
      throw new EngineError(
        'budget',
        `this agent conversation has sent ${this.budget} texts in the last hour, its limit; wait, or tell a person what you need`,
      );
    if (counters.outgoingFull(connection.id, connection.queue_limit))
      throw new EngineError(
        'queue_full',
        `${connection.name}'s queue is full (${connection.queue_limit} texts waiting to be delivered); try again later`,
      );
  }

  /**
   * Inside a transaction, after checkLimits: commits an outgoing text and, if the thread
   * is free, claims the wire for it. On a connection that asks first, the text is held
   * for a person instead (`sender`'s run is told of the decision); it keeps its
   * thread's later texts back, so texts still arrive in seq order. The text keeps
   * `sender`'s turn.
   */
  private enqueue(
    connection: ConnectionRow,
    state: ThreadState,
    body: string,
    sender: SendingTurn,
    after: After,
    tx: Tx,
  ): SendResult {
    const { db, threads, counters } = this.core;
    tx.writing();
    const thread = state.row;
    const seq = threads.lastSeq(state, 'out') + 1;
    const open = this.core.open.get(connection.id);
    // A person may have chosen to always allow this peer role (here, or everywhere).
    const rule = connection.outgoing_policy === 'ask' ? ruleAllowing(db, 'outgoing', thread) : undefined;
    const held = connection.outgoing_policy === 'ask' && rule === undefined;
    // Nothing else waiting and nothing on the wire: this text goes now, written as sent
    // at once rather than queued and then claimed.
    const goesNow =
      !held &&
      open !== undefined &&
      open.link.state === 'open' &&
      !open.inFlight.has(thread.id) &&
      threads.undelivered(state, counters) === 0;
    const textId = insertText(
      db,
      thread.id,
      'out',
      seq,
      body,
      held ? 'held' : goesNow ? 'sent' : 'queued',
      sender.turnId,
    );
    state.outSeq = seq;
    if (state.undelivered !== undefined) state.undelivered++;
    counters.addedOutgoing(connection.id, thread.id);
    if (rule) this.holds.allowedByRule('outgoing', thread, textId, sender.run.id, rule, tx);
    if (held) this.holds.hold('outgoing', thread, textId, sender.run.id, tx);
    else if (goesNow) {
      counters.claimed(thread.id, seq);
      this.putOnWire(open, thread, { seq, textId }, body, after, tx);
    } else if (open) this.claimNext(open, state, after, tx);
    this.core.threadChangedAfter(thread, tx);
    this.core.connectionChangedAfter(connection.id, tx);
    this.rootChangedAfter(thread, tx);
    const result = {
      thread: thread.wire_id,
      threadRowId: thread.id,
      seq,
      to: `${connection.name}/${thread.peer_role}`,
    };
    return held ? { ...result, held: true, note: HELD_NOTE } : result;
  }

  /**
   * Inside a transaction: a turn of a conversation or a task sent a text, so its page reads
   * the root again and shows the ask under that turn's line, before the turn posts anything.
   */
  private rootChangedAfter(thread: ThreadRow, tx: Tx): void {
    if (thread.started_by !== 'local' || thread.root_kind === 'thread') return;
    tx.afterOnceFrom(thread.root_kind, thread.root_id, thread, this.tellRootChanged);
  }

  private readonly tellRootChanged = (thread: ThreadRow): (() => void) | null => {
    let tell = this.rootTells.get(thread);
    if (tell === undefined) {
      const kind = thread.root_kind;
      const id = thread.root_id;
      const root = rootFacts(this.core.db, thread);
      let audience: Audience | null = null;
      if (root.kind === 'conversation' && root.conversation) audience = eventAudience.conversation(root.conversation);
      else if (root.kind === 'task' && root.task) audience = eventAudience.task(root.task);
      const event = { type: 'changed', kind, id } as const;
      const told = audience;
      tell = told === null ? null : () => this.core.options.events.emit(event, told);
      this.rootTells.set(thread, tell);
    }
    return tell;
  };

  /**
   * How a root's readers hear of its changes (null: it is gone), by the row the thread
   * cache holds, as the core keeps the agent conversations' own: a row is replaced when
   * its root is deleted or the cache is dropped (any write outside a group commit drops
   * it), and a busy agent conversation sends a text with every commit.
   */
  private readonly rootTells = new WeakMap<ThreadRow, (() => void) | null>();

  /** Inside a transaction: the text takes the thread's place on the wire, and leaves after the commit. */
  private putOnWire(open: OpenLink, thread: ThreadRow, text: InFlight, body: string, after: After, tx: Tx): void {
    const threadRowId = thread.id;
    open.inFlight.set(threadRowId, text);
    tx.undo(() => {
      if (open.inFlight.get(threadRowId)?.seq === text.seq) open.inFlight.delete(threadRowId);
    });
    const frame = textFrame(thread, text.seq, body);
    after(() => {
      if (!open.link.send(frame)) open.inFlight.delete(threadRowId);
    });
  }

  /** Inside a transaction: puts the thread's next undelivered text on the wire after commit. */
  claimNext(open: OpenLink, state: ThreadState, after: After, tx: Tx): void {
    const thread = state.row;
    if (open.link.state !== 'open' || open.inFlight.has(thread.id)) return;
    // Known to have nothing waiting: no need to look.
    if (state.undelivered === 0) return;
    const text = this.core.counters.nextUndelivered(thread.id);
    if (!text) {
      state.undelivered = 0;
      return;
    }
    // A held text goes nowhere until a person approves it, and nothing after it does.
    if (text.state === 'held') return;
    if (text.state === 'queued') setTextState(this.core.db, text.id, 'sent');
    this.putOnWire(open, thread, { seq: text.seq, textId: text.id }, text.body, after, tx);
  }

  /** After a (re)connect: every thread's oldest undelivered text goes out again. */
  resendAll(open: OpenLink): Promise<void> {
    const { db, threads } = this.core;
    return this.core.batch.run((after, tx) => {
      const before = [...open.inFlight];
      open.inFlight.clear();
      tx.undo(() => {
        open.inFlight.clear();
        for (const [thread, text] of before) open.inFlight.set(thread, text);
      });
      // Paused means nothing moves (pausing failed whatever waited, so this is a guard).
      if (getConnectionRow(db, open.connectionId)?.status !== 'active') return;
      for (const head of undeliveredHeads(db, open.connectionId)) {
        const state = threads.byRowId(head.thread_id);
        if (!state) continue;
        // The query says one waits: do not trust a count over it.
        state.undelivered = undefined;
        this.claimNext(open, state, after, tx);
      }
    });
  }
}
