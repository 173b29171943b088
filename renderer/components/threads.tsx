// Agent conversations: the region that lists them under a root (virtualized: a root may
// have thousands), one card per agent conversation, and its detail when opened — the
// texts with their states, the agent's run, its live output and its notes.
import { useVirtualizer, type VirtualItem, type Virtualizer } from '@tanstack/react-virtual';
import { memo, useCallback, useEffect, useId, useLayoutEffect, useMemo, useRef, type ReactNode } from 'react';
import type { TextView, ThreadSummary } from '../../shared/domain';
import { failureReason, fullTime, oneLine, plural, shortTime } from '../format';
import {
  selectThread,
  selectThreadDetail,
  selectThreadError,
  selectThreadList,
  useThreads,
  watchThread,
  type ThreadListKey,
} from '../state/threads';
import { selectUnread, useAttention } from '../state/attention';
import { selectExpandedThreads, useUi } from '../state/ui';
import { selectConnection, useConnections } from '../state/connections';
import {
  answeredAfter,
  canWithdraw,
  connectionState,
  connectionStateLabel,
  connectionStateNote,
  connectionStateTone,
  orphanedGroupTitle,
  peerKey,
  receivedWithAgent,
  textLabel,
  waitingForAgent,
  type ConnectionState,
  type TextLabel,
} from '../thread-facts';
import { approvalOfText, approvalsOfThread, selectApprovals, useApprovals } from '../state/approvals';
import { ApprovalActions, WaitingForApproval } from './approvals';
import { ArrowInIcon, ArrowOutIcon, ChevronIcon } from './icons';
import { Markdown } from './markdown';
import { useMarkSeen } from './seen';
import { TextWithCode } from './text-with-code';
import { cardShape, CardHeights } from './card-heights';
import { measureOnResize, VirtualRows } from './virtual-rows';
import {
  BannerConnections,
  PeerBanners,
  ThreadFilters,
  useBannerConnections,
  usePeerBanners,
  useWaitingOnYou,
} from './thread-panel-bar';
import { selectFilter, useThreadFilters } from '../state/thread-filters';
import { cardStatus, isFiltered, matchesFilter } from '../thread-filters';
import {
  Avatar,
  Badge,
  EmptyState,
  ErrorNote,
  isActive,
  Loading,
  RunStateBadge,
  StopButton,
  TextStateBadge,
  UnreadBadge,
  useAction,
} from './ui';

/** Rows read ahead of those in view, either way: about a page of the store's (renderer/state/threads.ts). */
const READ_AHEAD = 100;

/** A row not read yet (`.thread-placeholder`, 80 px and its 8 px gap). */
const PLACEHOLDER_HEIGHT = 88;

/**
 * The virtualizer's key of every row not read yet: one key, so one size in its cache for
 * all of them. It lays out every row after each page read; a row with a cached size costs
 * it a lookup, one without a call to estimateSize, and nearly all of 100,000 rows are
 * rows not read yet. (Thread ids start at 1; the DOM's rows get keys of their own.)
 */
const PENDING_KEY = 0;

type Item =
  | { kind: 'header'; key: string; label: string; since: string }
  | { kind: 'thread'; key: string; id: number }
  /** A row not read yet: read when it comes into view. */
  | { kind: 'pending'; key: string };

/**
 * The rows of a list for the virtualizer. `keys` changes whenever a row's key or size may
 * have: a page read (its rows' placeholders become cards), a thread added, moved or gone.
 * The virtualizer lays the list out again then, once.
 */
interface RowSource {
  count: number;
  at: (index: number) => Item | undefined;
  /** The row's key, without building its item: the virtualizer asks for every row's. */
  key: (index: number) => string | number;
  /** A thread row's id; 0 for a row not read yet, -1 for a group's header. */
  threadId: (index: number) => number;
  keys: unknown;
}

/**
 * The region "Agent conversations" of one list. It owns its scroll box, so thousands of
 * threads render as the few rows on screen.
 */
export function ThreadList({
  listKey,
  description,
  empty,
  groupByRoot = false,
  fill = true,
  headingLevel = 2,
}: {
  listKey: ThreadListKey;
  description?: ReactNode;
  empty: ReactNode;
  groupByRoot?: boolean;
  /** Fill the parent's height (a side panel, a page) rather than sizing to the content. */
  fill?: boolean;
  headingLevel?: 2 | 3;
}) {
  const headingId = useId();
  const list = useThreads(selectThreadList(listKey));
  const loadList = useThreads((s) => s.loadList);
  const version = useThreads((s) => s.version);
  const expanded = useUi(selectExpandedThreads);
  const toggle = useUi((s) => s.toggleThread);

  // Asked for as the view commits, not after its first paint (when effects run): the
  // request is on its way while the view paints, and the rows paint a frame sooner.
  useLayoutEffect(() => {
    // Groups need every row; a long flat list reads its pages as they come into view.
    if (!useThreads.getState().lists[listKey]?.ids) void loadList(listKey, { whole: groupByRoot });
  }, [listKey, loadList, groupByRoot]);

  const filter = useThreadFilters(selectFilter(listKey));
  const filtering = isFiltered(filter);
  const waitingOnYou = useWaitingOnYou();
  // What the page holds of the list, for the banners, the peer filter and the filters.
  const held = useMemo(() => {
    const { summaries } = useThreads.getState();
    const threads: ThreadSummary[] = [];
    for (const id of list?.ids ?? []) {
      const thread = summaries.get(id);
      if (thread) threads.push(thread);
    }
    return threads;
    // `version` says a summary changed in place.
  }, [list?.ids, version]);
  const banners = usePeerBanners(held);
  const bannerConnections = useMemo(() => new Set(banners.map((b) => b.connectionId)), [banners]);
  const filteredIds = useMemo(
    () => (filtering ? held.filter((t) => matchesFilter(t, filter, waitingOnYou)).map((t) => t.id) : null),
    [filtering, held, filter, waitingOnYou],
  );
  useEffect(() => {
    // A filter looks at every row: a list read a page at a time is read whole.
    if (filtering && !useThreads.getState().lists[listKey]?.whole) void loadList(listKey, { whole: true });
  }, [filtering, listKey, loadList]);

  const ids = filteredIds ?? list?.ids;
  const rows = filteredIds ?? list?.rows;
  // Group labels come from the summaries: only grouped lists follow every summary change.
  const groupVersion = groupByRoot ? version : 0;
  const source = useMemo<RowSource>(() => {
    if (!ids || !rows) return { count: 0, at: () => undefined, key: (index) => index, threadId: () => 0, keys: 0 };
    if (!groupByRoot) {
      const at = (index: number): Item | undefined => {
        if (index >= rows.length) return undefined;
        const id = rows[index];
        return !id ? { kind: 'pending', key: `p${index}` } : { kind: 'thread', key: `t${id}`, id };
      };
      return {
        count: rows.length,
        at,
        key: (index) => rows[index] || PENDING_KEY,
        threadId: (index) => rows[index] ?? 0,
        // A page read gives its rows keys and sizes: one recompute of the list, not one per row measured.
        keys: rows,
      };
    }
    const { summaries } = useThreads.getState();
    const groups = new Map<string, ThreadSummary[]>();
    for (const id of ids) {
      const thread = summaries.get(id);
      if (!thread) continue;
      const key = `${thread.root.kind}:${thread.root.id}`;
      const group = groups.get(key) ?? [];
      group.push(thread);
      groups.set(key, group);
    }
    const items: Item[] = [];
    for (const [key, group] of groups) {
      const { title, since } = orphanedGroupTitle(group);
      items.push({ kind: 'header', key: `h${key}`, label: title, since });
      for (const thread of group) items.push({ kind: 'thread', key: `t${thread.id}`, id: thread.id });
    }
    return {
      count: items.length,
      at: (index) => items[index],
      key: (index) => items[index]?.key ?? index,
      threadId: (index) => {
        const item = items[index];
        return item?.kind === 'thread' ? item.id : item?.kind === 'header' ? -1 : 0;
      },
      keys: items,
    };
  }, [ids, rows, groupByRoot, groupVersion]);
  const loadRange = useThreads((s) => s.loadRange);
  const onRange = useCallback(
    (start: number, end: number) => void loadRange(listKey, start, end),
    [loadRange, listKey],
  );

  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  const count = list?.total ?? 0;
  const running = list?.ids ? countWorking(list.ids) : 0;

  return (
    <section className={`threads${fill ? ' threads-fill' : ''}`} aria-labelledby={headingId}>
      <header className="threads-header">
        <div className="threads-title">
          <Heading id={headingId}>Agent conversations</Heading>
          {ids && <span className="count">{count.toLocaleString()}</span>}
          {running > 0 && <Badge tone="accent">{running} working</Badge>}
        </div>
        {description && <p className="threads-description">{description}</p>}
        {count > 0 && <ThreadFilters listKey={listKey} threads={held} shown={filteredIds?.length ?? 0} />}
        <PeerBanners banners={banners} />
      </header>
      {list?.error && !ids && <ErrorNote onRetry={() => void loadList(listKey)}>{list.error}</ErrorNote>}
      {!ids && !list?.error && <Loading label="Loading agent conversations…" />}
      {ids && count === 0 && <div className="threads-empty">{empty}</div>}
      {ids && count > 0 && filteredIds?.length === 0 && (
        <p className="threads-empty muted">No agent conversation here matches these filters.</p>
      )}
      {ids && count > 0 && (
        <BannerConnections.Provider value={bannerConnections}>
          <VirtualThreads source={source} expanded={expanded} onToggle={toggle} fill={fill} onRange={onRange} />
        </BannerConnections.Provider>
      )}
    </section>
  );
}

function countWorking(ids: number[]): number {
  // Cheap enough per render for 10,000 ids (a Map lookup each).
  const { summaries } = useThreads.getState();
  let n = 0;
  for (const id of ids) if (summaries.get(id)?.run.state === 'running') n++;
  return n;
}

/**
 * The row at an offset, among the rows as last laid out: asking the virtualizer would lay
 * them all out again first, when a row was measured since, and a layout of 100,000 rows
 * is a frame's worth of work.
 */
/** The DOM's key of a row: rows not read yet share the virtualizer's key, not their element's. */
const rowKey = (row: VirtualItem) => (row.key === PENDING_KEY ? `p${row.index}` : row.key);

/** A collapsed card's shape, kept per summary (a summary is replaced when it changes): estimates run per layout. */
const shapes = new WeakMap<ThreadSummary, { linkState: ConnectionState | null; shape: string }>();
function shapeOf(thread: ThreadSummary, linkState: ConnectionState | null): string {
  const kept = shapes.get(thread);
  if (kept && kept.linkState === linkState) return kept.shape;
  const shape = cardShape(thread, linkState);
  shapes.set(thread, { linkState, shape });
  return shape;
}

function rowAt(rows: readonly VirtualItem[], offset: number): VirtualItem | undefined {
  let low = 0;
  let high = rows.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (rows[middle]!.start <= offset) low = middle;
    else high = middle - 1;
  }
  return rows[low];
}

function VirtualThreads({
  source,
  expanded,
  onToggle,
  fill,
  onRange,
}: {
  source: RowSource;
  expanded: ReadonlySet<number>;
  onToggle: (id: number) => void;
  fill: boolean;
  /** The rows in view (and a page either side) changed: those not read yet are read. */
  onRange: (start: number, end: number) => void;
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const heights = useRef<CardHeights>(null);
  // Heights learned from the cards measured: the estimates of the rows not measured yet,
  // taken up whenever the virtualizer lays rows out again (a page read, a row measured).
  heights.current ??= new CardHeights();
  // Stable callbacks: a new getItemKey makes the virtualizer lay out every row again, so
  // they read the rows through a ref and change only when `keys` does.
  const sourceRef = useRef(source);
  sourceRef.current = source;
  const { keys } = source;
  const getItemKey = useCallback((index: number) => sourceRef.current.key(index), [keys]);
  const estimateSize = useCallback(
    (index: number) => {
      const id = sourceRef.current.threadId(index);
      if (id === -1) return 34;
      if (id === 0) return PLACEHOLDER_HEIGHT;
      const thread = useThreads.getState().summaries.get(id);
      if (!thread) return PLACEHOLDER_HEIGHT;
      const linkState = connectionState(selectConnection(thread.connection.id)(useConnections.getState()));
      const known = heights.current!.height(shapeOf(thread, linkState));
      if (known !== undefined) return known;
      // Until a card like it is measured: a card, plus a line for a close reason or for counts.
      const counts = thread.counts.failed > 0 || waitingForAgent(thread) > 0;
      return 88 + (thread.status === 'closed' && thread.closeReason ? 21 : 0) + (counts ? 27 : 0);
    },
    [keys],
  );
  const measureElement = useCallback(
    (element: Element, entry: ResizeObserverEntry | undefined, instance: Virtualizer<HTMLDivElement, Element>) => {
      const size = measureOnResize(element, entry, instance);
      const shape = element.firstElementChild?.getAttribute('data-shape');
      if (entry && shape) heights.current!.learn(shape, entry.contentRect.width, size);
      return size;
    },
    [],
  );
  const getScrollElement = useCallback(() => scrollRef.current, []);
  // A page read lays the rows out again from their estimates: the row at the top of the
  // view stays where it was (as the virtualizer does for a row measured).
  const laidOut = useRef<{ keys: unknown; instance: Virtualizer<HTMLDivElement, Element> | null }>({
    keys,
    instance: null,
  });
  const anchor = useRef<{ index: number; key: string | number; offset: number } | null>(null);
  if (laidOut.current.instance && laidOut.current.keys !== keys) {
    // Read before the virtualizer takes the new options: these are the rows as painted.
    const previous = laidOut.current.instance;
    const top = previous.scrollOffset ?? 0;
    const row = rowAt(previous.measurementsCache, top);
    anchor.current = row ? { index: row.index, key: row.key as string | number, offset: top - row.start } : null;
  }
  const virtualizer = useVirtualizer({
    count: source.count,
    getScrollElement,
    estimateSize,
    getItemKey,
    overscan: 6,
    // Row measurements are batched into one render instead of one synchronous render each.
    useFlushSync: false,
    measureElement,
  });
  laidOut.current = { keys, instance: virtualizer };
  // Until a placeholder is measured (then all of them are, at once).
  if (!virtualizer.itemSizeCache.has(PENDING_KEY)) virtualizer.itemSizeCache.set(PENDING_KEY, PLACEHOLDER_HEIGHT);
  useLayoutEffect(() => {
    const held = anchor.current;
    const box = scrollRef.current;
    anchor.current = null;
    if (!held || !box) return;
    // The same row: where it was, or where it moved to by a row or two (a thread added or gone).
    // A row not read yet is held by its place: they all share one key.
    let index = held.index;
    if (held.key !== PENDING_KEY)
      for (const near of [held.index, held.index + 1, held.index - 1, held.index + 2, held.index - 2])
        if (near >= 0 && near < source.count && getItemKey(near) === held.key) index = near;
    const start = virtualizer.measurementsCache[index]?.start;
    if (start === undefined) return;
    const target = start + held.offset;
    // The virtualizer's offset, not the box's: reading that would lay the page out here, in the middle of the frame.
    if (Math.abs((virtualizer.scrollOffset ?? 0) - target) >= 1) box.scrollTop = target;
  });
  const shown = virtualizer.getVirtualItems();
  // The rows in view and a page's worth either side: read before they come into view, a
  // page lands out of sight and its rows arrive as cards, not as placeholders that change
  // height (and move the rows below them) in view.
  const first = Math.max(0, (shown[0]?.index ?? 0) - READ_AHEAD);
  const last = Math.min(source.count, (shown.at(-1)?.index ?? 0) + 1 + READ_AHEAD);
  let pending = false;
  for (let index = first; index < last && !pending; index++) pending = source.threadId(index) === 0;
  useEffect(() => {
    if (pending) onRange(first, last);
  }, [pending, first, last, onRange]);
  return (
    <div ref={scrollRef} className={`thread-scroll${fill ? '' : ' thread-scroll-bounded'}`} data-testid="thread-scroll">
      <VirtualRows virtualizer={virtualizer} itemAt={source.at} rowKey={rowKey}>
        {(item) =>
          item.kind === 'header' ? (
            <h3 className="thread-group">
              {item.label} <span className="thread-group-since">· {item.since}</span>
            </h3>
          ) : item.kind === 'pending' ? (
            <div className="thread-placeholder" aria-hidden="true" />
          ) : (
            <ThreadCard id={item.id} expanded={expanded.has(item.id)} onToggle={onToggle} />
          )
        }
      </VirtualRows>
    </div>
  );
}

const startedLabel = (t: ThreadSummary) =>
  t.startedBy === 'local' ? `${t.localRole} asked` : `${t.connection.name} asked ${t.localRole}`;

/** The label of a card's last text, from what the summary knows. */
function lastTextLabel(thread: ThreadSummary, last: TextView): TextLabel {
  const peer = peerKey(thread);
  const turn = thread.run.lastTurn;
  return textLabel(last, peer, {
    withAgent: last.direction === 'in' && isActive(thread.run) && waitingForAgent(thread) === 0,
    peerTurn: thread.peerTurn,
    ...(turn && last.takenByTurnId === turn.id ? { turn } : {}),
  });
}

export const ThreadCard = memo(function ThreadCard({
  id,
  expanded,
  onToggle,
  nested,
}: {
  id: number;
  expanded: boolean;
  onToggle: (id: number) => void;
  nested?: boolean;
}) {
  const thread = useThreads(selectThread(id));
  const connection = useConnections(selectConnection(thread?.connection.id ?? 0));
  const stop = useThreads((s) => s.stop);
  const withdraw = useThreads((s) => s.withdraw);
  const [withdrawing, runWithdraw] = useAction();
  const approvals = useApprovals(selectApprovals);
  // Opened, its held texts carry their own Approve and Deny; a tool request has no text.
  const waiting = useMemo(
    () => approvalsOfThread(approvals, id).filter((a) => !expanded || a.kind === 'permission'),
    [approvals, id, expanded],
  );
  const unread = useAttention(selectUnread({ kind: 'thread', id }));
  const bannered = useBannerConnections();
  const detailId = useId();
  if (!thread) return null;
  const peer = peerKey(thread);
  const last = thread.lastText;
  const failed = thread.counts.failed;
  const waitingTexts = waitingForAgent(thread);
  const active = isActive(thread.run);
  const linkState = connectionState(connection);
  // Offline and paused matter while the conversation is open; a revoke, always.
  const shownState = linkState === 'revoked' || thread.status === 'open' ? linkState : null;
  const status = cardStatus(thread, linkState);
  // Cards of one shape have one height; an unread mark or an approval may add to it.
  const shape = !expanded && waiting.length === 0 && unread === 0 ? cardShape(thread, linkState) : undefined;
  return (
    <article
      data-shape={shape}
      data-thread-id={id}
      className={`thread-card thread-${thread.status} run-${thread.run.state}${nested ? ' thread-nested' : ''}${expanded ? ' is-expanded' : ''}`}
      aria-label={`Agent conversation with ${peer}`}
    >
      <div className="thread-head">
        <button
          type="button"
          className="thread-toggle"
          aria-expanded={expanded}
          aria-controls={expanded ? detailId : undefined}
          onClick={() => onToggle(id)}
        >
          <ChevronIcon size={14} />
          <Avatar name={thread.connection.name} size="sm" />
          <span className="thread-title">
            <span className="thread-peer" title={peer}>
              <strong title={`certificate ${thread.connection.fingerprint.slice(0, 16)}…`}>
                {thread.connection.name}
              </strong>
              <span className="sep">/</span>
              {thread.peerRole}
            </span>
            <span className="thread-sub">
              {startedLabel(thread)} · {shortTime(last?.createdAt ?? thread.createdAt)}
            </span>
          </span>
        </button>
        <div className="thread-state">
          <UnreadBadge count={unread} />
          {/* One status: the run's while the agent works, else the connection's, else open or closed. */}
          {status.kind === 'run' && <RunStateBadge run={thread.run} hideIdle />}
          {status.kind === 'connection' && (
            <Badge
              tone={connectionStateTone[status.state]}
              title={connectionStateNote(status.state, thread.connection.name)}
            >
              {connectionStateLabel[status.state]}
            </Badge>
          )}
          {status.kind === 'closed' && (
            <Badge tone="neutral" title={thread.closeReason ?? undefined}>
              Closed
            </Badge>
          )}
          {status.kind === 'open' && <Badge tone="good">Open</Badge>}
          {active && <StopButton size="sm" onStop={() => stop(id)} disabled={thread.run.state === 'stopping'} />}
          {canWithdraw(thread) && (
            <button
              type="button"
              className="link-button"
              disabled={withdrawing}
              aria-label={`Withdraw the ask to ${peer}`}
              onClick={() => void runWithdraw(() => withdraw(id))}
            >
              Withdraw
            </button>
          )}
        </div>
      </div>
      {thread.withdrawn && !canWithdraw(thread) && thread.lastText?.seq === thread.withdrawn.seq && (
        <p className="thread-withdrawn">
          Withdrawn by {thread.withdrawn.by} · {shortTime(thread.withdrawn.at)}
        </p>
      )}
      {thread.status === 'closed' && thread.closeReason && (
        <p className="thread-close-reason" title={thread.closeReason}>
          Closed: <TextWithCode text={thread.closeReason} />
        </p>
      )}
      {shownState && shownState !== 'revoked' && !bannered.has(thread.connection.id) && (
        <p className={`thread-connection-note note-${shownState}`}>
          {connectionStateNote(shownState, thread.connection.name)}
        </p>
      )}
      {last && !expanded && (
        <p className="thread-last">
          {last.direction === 'out' ? <ArrowOutIcon size={14} /> : <ArrowInIcon size={14} />}
          <span className="thread-last-body" title={oneLine(last.body, 400)}>
            {oneLine(last.body, 160)}
          </span>
          <TextStateBadge label={lastTextLabel(thread, last)} reason={last.reason} />
        </p>
      )}
      {!expanded && (failed > 0 || waitingTexts > 0) && (
        <p className="thread-counts">
          {failed > 0 && <Badge tone="bad">{plural(failed, 'failed text')}</Badge>}
          {waitingTexts > 0 && (
            <Badge tone="warn">
              {waitingTexts} {active ? 'more ' : ''}waiting for the agent
            </Badge>
          )}
        </p>
      )}
      <WaitingForApproval approvals={waiting} compact />
      {expanded && (
        <div id={detailId}>
          <ThreadDetailView id={id} />
        </div>
      )}
    </article>
  );
});

function ThreadDetailView({ id }: { id: number }) {
  const thread = useThreads(selectThread(id));
  const detail = useThreads(selectThreadDetail(id));
  const error = useThreads(selectThreadError(id));
  const loadDetail = useThreads((s) => s.loadDetail);

  useEffect(() => watchThread(id), [id]);
  // Open is read: what came in, and what was not delivered.
  useMarkSeen({ kind: 'thread', id });
  useEffect(() => {
    void loadDetail(id);
  }, [id, loadDetail]);
  // Live output arrives as `changed thread` events (at most twice a second), which
  // refresh watched threads; nothing to poll.

  const withAgent = useMemo(
    () => (thread && detail ? receivedWithAgent(detail.texts, thread) : new Set<number>()),
    [thread, detail],
  );
  if (!thread) return null;
  if (!detail) return error ? <ErrorNote>{error}</ErrorNote> : <Loading label="Loading texts…" />;
  const peer = peerKey(thread);
  const lastTurn = thread.run.lastTurn;
  return (
    <div className="thread-detail">
      <dl className="facts">
        <div>
          <dt>Between</dt>
          <dd>
            {thread.localRole} (here) and {peer}
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd title={fullTime(thread.createdAt)}>
            {thread.startedBy === 'local' ? 'here' : `by ${thread.connection.name}`}, {shortTime(thread.createdAt)}
          </dd>
        </div>
      </dl>
      {detail.texts.length === 0 ? (
        <p className="muted small">No texts yet.</p>
      ) : (
        <ol className="texts" aria-label={`Texts with ${peer}`}>
          {detail.texts.map((text) => (
            <TextItem
              key={text.id}
              text={text}
              thread={thread}
              label={textLabel(text, peer, {
                withAgent: withAgent.has(text.id),
                turn: detail.turns.find((turn) => turn.id === text.takenByTurnId),
                peerTurn: thread.peerTurn,
                answered: answeredAfter(text, detail.texts),
              })}
            />
          ))}
        </ol>
      )}
      {detail.live.length > 0 && (
        <section className="live" aria-label="Live output">
          <h4>
            <span className="dot" aria-hidden="true" /> Live output
          </h4>
          <pre>{detail.live.join('\n')}</pre>
        </section>
      )}
      {lastTurn && lastTurn.status !== 'done' && lastTurn.status !== 'running' && (
        <p className={`turn-note turn-${lastTurn.status}`}>
          Last turn {lastTurn.status}
          {lastTurn.reason ? (
            <>
              {' '}
              — <TextWithCode text={lastTurn.reason} />
            </>
          ) : null}
        </p>
      )}
      {detail.runLog.length > 0 && (
        <details className="run-log">
          <summary>
            {thread.localRole}&rsquo;s notes{' '}
            <span className="muted">({detail.runLog.length}, kept here, never sent)</span>
          </summary>
          <ol>
            {detail.runLog.map((entry) => (
              <li key={entry.turnId}>
                <time dateTime={entry.at} title={fullTime(entry.at)}>
                  {shortTime(entry.at)}
                </time>
                <Markdown text={entry.output} />
              </li>
            ))}
          </ol>
        </details>
      )}
      {thread.startedBy === 'peer' && <Relays rootThreadId={id} />}
    </div>
  );
}

function TextItem({ text, thread, label }: { text: TextView; thread: ThreadSummary; label: TextLabel }) {
  const from = text.direction === 'out' ? thread.localRole : peerKey(thread);
  const approvals = useApprovals(selectApprovals);
  const approval = text.state === 'held' ? approvalOfText(approvals, text.id) : undefined;
  return (
    <li className={`text text-${text.direction} text-${text.state}`}>
      <div className="text-meta">
        <span className="text-route">
          {text.direction === 'out' ? <ArrowOutIcon size={13} /> : <ArrowInIcon size={13} />}
          <strong>{from}</strong>
        </span>
        <time dateTime={text.createdAt} title={fullTime(text.createdAt)}>
          {shortTime(text.createdAt)}
        </time>
        <TextStateBadge label={label} reason={text.reason} />
      </div>
      <Markdown text={text.body} className="text-body" />
      {text.state === 'failed' && text.reason !== 'denied' && (
        <p className="text-failure">{failureReason(text.reason, text.failedBy, thread.connection.name)}</p>
      )}
      {label.note && <p className="text-note">{label.note}</p>}
      {approval && (
        <p className="text-approval">
          <span>{label.help}</span>
          <ApprovalActions approval={approval} />
        </p>
      )}
    </li>
  );
}

/** Agent conversations rooted in a peer-started one: the relays made on its behalf. */
function Relays({ rootThreadId }: { rootThreadId: number }) {
  const key: ThreadListKey = `thread:${rootThreadId}`;
  const list = useThreads(selectThreadList(key));
  const loadList = useThreads((s) => s.loadList);
  const expanded = useUi(selectExpandedThreads);
  const toggle = useUi((s) => s.toggleThread);
  useEffect(() => {
    void loadList(key);
  }, [key, loadList]);
  // A peer-started thread is its own root: it is in its own list.
  const ids = list?.ids?.filter((id) => id !== rootThreadId) ?? [];
  if (ids.length === 0) return null;
  return (
    <section className="relays" aria-label="Asked on its behalf">
      <h4>Asked on its behalf</h4>
      {ids.map((id) => (
        <ThreadCard key={id} id={id} expanded={expanded.has(id)} onToggle={toggle} nested />
      ))}
    </section>
  );
}

export function ThreadsEmpty({ title, children }: { title: string; children?: ReactNode }) {
  return <EmptyState title={title}>{children}</EmptyState>;
}
