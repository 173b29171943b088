// What waits on each person (DESIGN §11.10), and what they have read.
//
// The list is made of sources. This one reads what is new above the person's floor and
// marks — role messages in conversations, task log entries, texts from peers, and the
// attention events the store records for failed texts, failed turns and a peer's pause
// or revoke — and keeps, of each object, only what the access rules let the person read.
// Other sources add their items beside these: what waits for a decision comes from
// approvals-source.ts.
//
// Who hears that their list may have changed follows who heard of the change: every
// conversation, task, agent conversation or connection event is followed, a moment
// later, by an `attention` event to the same audience, so open pages read the list again.
//
// What is new to a person is kept until the next change of any kind: at 100,000 agent
// conversations reading it costs a few hundred milliseconds of the server, and every page
// and window of the person, the title's count and the notifications all read it after the
// same change. The owners' is read once at start, before the first window asks.
import {
  attentionKey,
  sectionOf,
  type AttentionItem,
  type AttentionKind,
  type AttentionList,
  type AttentionObject,
  type UnreadMark,
} from '../../shared/attention';
import type { AppEvent, ChangedKind } from '../../shared/api-contract';
import type { Person } from '../../shared/domain';
import { rootFacts } from '../access/lookup';
import { decide, eventAudience, inAudience, type RootFacts, type Target } from '../access/rules';
import type { EventHub } from '../events';
import { transaction, type Db } from '../store/database';
import {
  dropMarks,
  dropMarksBelow,
  markObjectRead,
  newestIds,
  peerStartedThreadIds,
  raiseFloor,
  attentionThread,
  attentionThreads,
  type AttentionThreadRow,
  incomingNews,
  scanIncomingTexts,
  readFloor,
  unreadEvents,
  unreadMessages,
  unreadTaskLog,
  type MarkedKind,
  type UnreadRow,
} from '../store/queries/attention';
import { getConnectionRow } from '../store/queries/connections';
import { getConversationRow } from '../store/queries/conversations';
import { getTaskRow } from '../store/queries/tasks';
import { contentItemKind, groupEvents, newsOf, nextFloor, orderItems, type FirstUnread } from './rules';

/** A source of items: only of what the viewer may read, decided through main/access/. */
export interface AttentionSource {
  items(viewer: Person): AttentionItem[];
}

export type MarkReadTarget =
  | { kind: MarkedKind; id: number }
  /** Every agent conversation peers started, and those asked on their behalf. */
  | { kind: 'peerStarted' }
  | { kind: 'all' };

/** What the item of an object says about it, whatever the kind of item. */
type ItemBase = Pick<AttentionItem, 'peer' | 'peerRole' | 'role' | 'root' | 'title'>;

interface ObjectFacts {
  base: ItemBase;
  /** An agent conversation the peer started (its own root). */
  startedByPeer: boolean;
  /** Shown under "Started by peers": one the peer started, or one asked on its behalf. */
  underPeers: boolean;
}

type NewsObject = { kind: 'conversation' | 'task' | 'thread'; id: number };
type Answer = { peer: string; peerRole: string };

/** What is new in one object. */
interface News {
  object: NewsObject;
  known: ObjectFacts;
  n: number;
  /** The newest id of each kind of row in it: changes when anything joins. */
  stamp: string[];
  at: string;
  /** The newest answer from a peer among it. */
  answer: Answer | undefined;
  /** Whether a role of ours (or a person) wrote among it. */
  spoke: boolean;
}

interface Unread {
  items: AttentionItem[];
  marks: UnreadMark[];
  first: FirstUnread;
}

/**
 * What one list has looked up: each object's facts (null: not the viewer's to read), roots,
 * and the agent conversations read together up front.
 */
type FactsCache = Map<string, ObjectFacts | null> & {
  roots: Map<string, RootFacts>;
  threads: Map<number, AttentionThreadRow>;
};
const newFactsCache = (): FactsCache =>
  Object.assign(new Map<string, ObjectFacts | null>(), { roots: new Map(), threads: new Map() });

/** The changes after which a list may differ. */
const followed = new Set<ChangedKind>(['conversation', 'task', 'thread', 'connection', 'approval']);

const attentionChanged: AppEvent = { type: 'changed', kind: 'attention', id: 0 };

export class Attention {
  private readonly sources: AttentionSource[];
  private readonly stopFollowing: () => void;
  /** Who hears of the next flush: everyone, the owners, and people by id (one entry each, however many changes). */
  private pending = { everyone: false, owners: false, people: new Set<number>() };
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** What is new to each person, as of the last change. */
  private readonly unreadOf = new Map<number, Unread>();
  private warmTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly options: {
      db: Db;
      events: EventHub;
      sources?: AttentionSource[];
      /** Changes within this long are told as one (a busy agent conversation sends many). */
      coalesceMs?: number;
    },
  ) {
    this.sources = options.sources ?? [];
    this.stopFollowing = options.events.observe((event, audience) => {
      if (event.type !== 'changed') return;
      // Any change may be news, or change who may read what.
      // Clearing an empty map still allocates a new table: checked first, on every event.
      if (event.kind !== 'attention' && this.unreadOf.size > 0) this.unreadOf.clear();
      if (!followed.has(event.kind)) return;
      if (audience === 'everyone') this.pending.everyone = true;
      else if (audience === 'owners') this.pending.owners = true;
      else this.pending.people.add(audience.personId);
      this.timer ??= setTimeout(() => this.flush(), options.coalesceMs ?? 250);
    });
  }

  /** Adds a source (held texts, permission requests): its items join every list from now on. */
  addSource(source: AttentionSource): void {
    this.sources.push(source);
  }

  /** Reads the lists of these people soon, in the background, so that their first windows find them ready. */
  warm(viewers: readonly Person[]): void {
    if (this.warmTimer) clearTimeout(this.warmTimer);
    this.warmTimer = setTimeout(() => {
      this.warmTimer = null;
      try {
        for (const viewer of viewers) this.cachedUnread(viewer);
      } catch {
        // A busy or full database: the first list reads it then.
      }
    }, 0);
    this.warmTimer.unref?.();
  }

  list(viewer: Person, limit = 100): AttentionList {
    const unread = this.cachedUnread(viewer);
    const items = orderItems([...unread.items, ...this.sources.flatMap((source) => source.items(viewer))]);
    return { items: items.slice(0, limit), total: items.length, marks: unread.marks };
  }

  /** How many items wait on the viewer: the number in the window's title. */
  count(viewer: Person): number {
    return this.list(viewer, 1).total;
  }

  /**
   * The viewer has read the object as it is now. The caller has checked that they may
   * read it. Their floor then rises past everything read, and their other pages hear of it.
   */
  markRead(viewer: Person, target: MarkReadTarget): void {
    const { db } = this.options;
    this.unreadOf.clear();
    transaction(db, () => {
      if (target.kind === 'all') {
        raiseFloor(db, viewer.id, newestIds(db));
        dropMarks(db, viewer.id);
        return;
      }
      if (target.kind === 'peerStarted') {
        const facts = newFactsCache();
        for (const id of peerStartedThreadIds(db))
          if (this.facts(viewer, { kind: 'thread', id }, facts)) markObjectRead(db, viewer.id, 'thread', id);
      } else markObjectRead(db, viewer.id, target.kind, target.id);
      const floor = readFloor(db, viewer.id);
      const next = nextFloor(floor, newestIds(db), this.unread(viewer).first);
      raiseFloor(db, viewer.id, next);
      dropMarksBelow(db, viewer.id, next);
    });
    this.options.events.emit(attentionChanged, { personId: viewer.id });
  }

  close(): void {
    this.stopFollowing();
    if (this.timer) clearTimeout(this.timer);
    if (this.warmTimer) clearTimeout(this.warmTimer);
    this.timer = null;
    this.warmTimer = null;
    this.unreadOf.clear();
    this.pending = { everyone: false, owners: false, people: new Set() };
  }

  /** Tells each audience that heard of a change since the last flush, once. */
  private flush(): void {
    this.timer = null;
    // Read anew for the pages that hear this, whatever was read since the change itself.
    this.unreadOf.clear();
    const audiences = this.pending;
    this.pending = { everyone: false, owners: false, people: new Set() };
    if (audiences.everyone) {
      this.options.events.emit(attentionChanged, 'everyone');
      return;
    }
    if (audiences.owners) this.options.events.emit(attentionChanged, 'owners');
    for (const personId of audiences.people) this.options.events.emit(attentionChanged, { personId });
  }

  private cachedUnread(viewer: Person): Unread {
    const kept = this.unreadOf.get(viewer.id);
    if (kept) return kept;
    const unread = this.unread(viewer);
    this.unreadOf.set(viewer.id, unread);
    return unread;
  }

  /** What is new to the viewer, of what they may read. */
  private unread(viewer: Person): Unread {
    const { db } = this.options;
    const floor = readFloor(db, viewer.id);
    const facts = newFactsCache();
    const first: FirstUnread = {};
    const lower = (key: keyof FirstUnread, id: number) => {
      first[key] = Math.min(first[key] ?? id, id);
    };
    /** New content per object: messages or entries, and answers that came back to it. */
    const news = new Map<string, News>();
    /** The first unread message or log entry of each conversation and task. */
    const firstContent = new Map<string, number>();
    const addNews = (object: NewsObject, known: ObjectFacts, n: number, last: string, at: string, answer?: Answer) => {
      const key = `${object.kind}:${object.id}`;
      const entry = news.get(key) ?? { object, known, n: 0, stamp: [], at, answer: undefined, spoke: false };
      entry.n += n;
      entry.stamp.push(last);
      if (at > entry.at) entry.at = at;
      if (answer) entry.answer = answer;
      else entry.spoke = true;
      news.set(key, entry);
    };

    const content = (kind: 'conversation' | 'task', rows: UnreadRow[], space: keyof FirstUnread, tag: string) => {
      for (const row of rows) {
        const object = { kind, id: row.object_id };
        const known = this.facts(viewer, object, facts);
        if (!known) continue;
        lower(space, row.first);
        firstContent.set(`${kind}:${row.object_id}`, row.first);
        addNews(object, known, row.n, `${tag}${row.last}`, row.at);
      }
    };
    content('conversation', unreadMessages(db, viewer.id, floor), 'message_id', 'm');
    content('task', unreadTaskLog(db, viewer.id, floor), 'task_log_id', 'l');

    // Texts from peers are news of their root; its mark says up to which one it was read.
    const scan = scanIncomingTexts(db, floor);
    // Beyond what one scan reads nothing is known: the floor may not rise past it.
    if (scan.full) lower('text_id', scan.lastId + 1);
    for (const row of incomingNews(db, viewer.id, floor)) {
      const object = newsOf(row);
      if (!object) continue;
      const known = this.facts(viewer, object, facts);
      if (!known) continue;
      lower('text_id', row.first);
      const answer = { peer: this.connectionName(row.connection_id), peerRole: row.peer_role };
      addNews(object, known, row.n, `t${row.last}`, row.at, answer);
    }

    const items: AttentionItem[] = [];
    const marks = new Map<string, UnreadMark>();
    const mark = (object: UnreadMark['object'], n: number, known: ObjectFacts) => {
      const key = `${object.kind}:${object.id}`;
      const existing = marks.get(key);
      if (existing) existing.count += n;
      else {
        const first = firstContent.get(key);
        marks.set(key, { object, count: n, ...(first ? { firstContent: first } : {}), peerStarted: known.underPeers });
      }
    };
    const item = (
      kind: AttentionKind,
      object: AttentionObject,
      base: ItemBase,
      found: { count: number; stamp: string; at: string; reason: string | null },
    ) => items.push({ key: attentionKey(kind, object), kind, section: sectionOf[kind], object, ...base, ...found });

    for (const entry of news.values()) {
      mark(entry.object, entry.n, entry.known);
      const object = entry.object;
      const kind = contentItemKind(
        object.kind === 'thread' ? { kind: 'thread', startedByPeer: entry.known.startedByPeer } : { kind: object.kind },
      );
      if (!kind) continue;
      // An answer that came back names its peer when no role of ours spoke since (it did not report it).
      const base =
        entry.answer && !entry.spoke && entry.object.kind !== 'thread'
          ? { ...entry.known.base, peer: entry.answer.peer, peerRole: entry.answer.peerRole }
          : entry.known.base;
      item(kind, entry.object, base, { count: entry.n, stamp: entry.stamp.join(':'), at: entry.at, reason: null });
    }

    const events = unreadEvents(db, viewer.id, floor);
    // Failed texts name their agent conversations, thousands of them at scale: read in one statement.
    const threadIds = new Set<number>();
    for (const event of events)
      if (event.object_kind === 'thread' && !facts.has(`thread:${event.object_id}`)) threadIds.add(event.object_id);
    facts.threads = attentionThreads(db, [...threadIds]);
    const readableEvents = events.filter((event) =>
      this.facts(viewer, { kind: event.object_kind, id: event.object_id }, facts),
    );
    for (const event of readableEvents) lower('event_id', event.id);
    for (const group of groupEvents(readableEvents)) {
      const known = this.facts(viewer, group.object, facts)!;
      if (group.object.kind !== 'connection')
        mark({ kind: group.object.kind, id: group.object.id }, group.count, known);
      item(group.kind, group.object, known.base, {
        count: group.count,
        stamp: `e${group.last}`,
        at: group.at,
        reason: group.reason,
      });
    }
    return { items, marks: [...marks.values()], first };
  }

  private readonly connectionNames = new Map<number, string>();

  /** A connection's name (PEER), kept: it does not change while the connection lasts. */
  private connectionName(id: number): string {
    let name = this.connectionNames.get(id);
    if (name === undefined) {
      name = getConnectionRow(this.options.db, id)?.name ?? 'a peer';
      this.connectionNames.set(id, name);
    }
    return name;
  }

  /** What the item of an object says, or null when the viewer may not read it (or it is gone). */
  private facts(viewer: Person, object: AttentionObject, cache: FactsCache): ObjectFacts | null {
    const key = `${object.kind}:${object.id}`;
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    const found = this.lookUp(viewer, object, cache);
    cache.set(key, found);
    return found;
  }

  private lookUp(viewer: Person, object: AttentionObject, cache: FactsCache): ObjectFacts | null {
    const { db } = this.options;
    const reads = (target: Target) => decide(viewer, target, 'read').allowed;
    const plain = (base: ItemBase): ObjectFacts => ({ base, startedByPeer: false, underPeers: false });
    switch (object.kind) {
      case 'conversation': {
        const conversation = getConversationRow(db, object.id);
        if (!conversation || !reads({ kind: 'conversation', conversation })) return null;
        const role = conversation.role_name;
        return plain({ peer: null, peerRole: null, role, root: null, title: role });
      }
      case 'task': {
        const task = getTaskRow(db, object.id);
        if (!task || !reads({ kind: 'task', task })) return null;
        return plain({ peer: null, peerRole: null, role: task.role_name, root: null, title: task.title });
      }
      case 'thread': {
        const thread = cache.threads.get(object.id) ?? attentionThread(db, object.id);
        if (!thread) return null;
        // Many agent conversations share a root: it is read once per list.
        const ownRoot = thread.root_kind === 'thread' && thread.root_id === thread.id;
        const rootKey = `${thread.root_kind}:${thread.root_id}`;
        let root = ownRoot ? undefined : cache.roots.get(rootKey);
        if (!root) {
          root = rootFacts(db, thread);
          if (!ownRoot) cache.roots.set(rootKey, root);
        }
        const target: Target = { kind: 'thread', thread, root };
        if (!reads(target)) return null;
        const peer = this.connectionName(thread.connection_id);
        const startedByPeer = ownRoot && thread.started_by === 'peer';
        const rootThread = root.kind === 'thread' ? root.thread : undefined;
        const onBehalf =
          !ownRoot &&
          rootThread !== undefined &&
          rootThread.started_by === 'peer' &&
          rootThread.root_id === rootThread.id;
        return {
          base: {
            peer,
            peerRole: thread.peer_role,
            role: thread.local_role,
            root: { kind: thread.root_kind, id: thread.root_id, gone: thread.root_gone === 1 },
            title: `${thread.local_role} with ${peer}/${thread.peer_role}`,
          },
          startedByPeer,
          underPeers: startedByPeer || onBehalf,
        };
      }
      case 'connection': {
        const connection = getConnectionRow(db, object.id);
        if (!connection || !inAudience(viewer, eventAudience.connectionNotice())) return null;
        return plain({ peer: connection.name, peerRole: null, role: null, root: null, title: connection.name });
      }
    }
  }
}
