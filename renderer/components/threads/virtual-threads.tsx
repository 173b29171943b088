// The scroll box of an agent-conversation list: only the rows in view (and a few either
// side) are in the DOM, sized from what cards like them measured, and the rows near the
// view are read before they come into it.
import { useVirtualizer, type VirtualItem, type Virtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { ConnectionSummary, ThreadSummary } from '../../../shared/domain';
import { useConnections } from '../../state/connections';
import { useThreads } from '../../state/threads';
import { waitingForAgent } from '../../thread-facts';
import { connectionState, type ConnectionState } from '../../connection-facts';
import { cardShape, CardHeights } from '../card-heights';
import { measureOnResize, VirtualRows } from '../virtual-rows';
import { ThreadCard } from './thread-card';
import { PENDING_KEY, type RowSource } from './thread-rows';

/** Rows read ahead of those in view, either way: about a page of the store's (renderer/state/threads.ts). */
const READ_AHEAD = 100;

/** A row not read yet (`.thread-placeholder`, 80 px and its 8 px gap). */
const PLACEHOLDER_HEIGHT = 88;

/**
 * Rows laid out past the furthest one in view so far. The virtualizer lays out every row
 * it is given after each page read and each row measured: of a list of 100,000 it is given
 * the rows down to there, and the rest is space of the placeholders' height, laid out as
 * the view comes near it.
 */
const LAID_OUT_AHEAD = 300;

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

/** Each connection's state, by id, per list of connections: estimates run for every row read at each layout. */
const statesByList = new WeakMap<readonly ConnectionSummary[], Map<number, ConnectionState | null>>();
const NO_CONNECTIONS: readonly ConnectionSummary[] = [];
function linkStates(list: readonly ConnectionSummary[] | null | undefined): Map<number, ConnectionState | null> {
  const key = list ?? NO_CONNECTIONS;
  let states = statesByList.get(key);
  if (!states) {
    states = new Map(key.map((c) => [c.id, connectionState(c)]));
    statesByList.set(key, states);
  }
  return states;
}

/**
 * The row at an offset, among the rows as last laid out: asking the virtualizer would lay
 * them all out again first, when a row was measured since, and a layout of 100,000 rows
 * is a frame's worth of work.
 */
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

export function VirtualThreads({
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
      const linkState = linkStates(useConnections.getState().list).get(thread.connection.id) ?? null;
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
  const [reach, setReach] = useState(LAID_OUT_AHEAD);
  const count = Math.min(source.count, reach);
  const placeholderHeight = laidOut.current.instance?.itemSizeCache.get(PENDING_KEY) ?? PLACEHOLDER_HEIGHT;
  const virtualizer = useVirtualizer({
    count,
    paddingEnd: (source.count - count) * placeholderHeight,
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
  // The view near the end of the rows laid out (a scroll, a jump down the scrollbar): lay
  // out the rows down to there and past it, before the space there shows empty.
  const sourceCount = source.count;
  const extend = useCallback(() => {
    const instance = laidOut.current.instance;
    if (!instance) return;
    const laid = instance.options.count;
    if (laid >= sourceCount) return;
    const end = instance.getTotalSize() - instance.options.paddingEnd;
    // The virtualizer's offset and size, not the box's: reading those could lay the page out here.
    // (Its own scroll listener, added before this one, has read the offset.)
    const bottom = (instance.scrollOffset ?? 0) + (instance.scrollRect?.height ?? 0);
    const height = instance.itemSizeCache.get(PENDING_KEY) ?? PLACEHOLDER_HEIGHT;
    if (bottom + LAID_OUT_AHEAD * height < end) return;
    const needed = laid + Math.max(0, Math.ceil((bottom - end) / height)) + LAID_OUT_AHEAD;
    setReach((was) => Math.max(was, needed));
  }, [sourceCount]);
  useLayoutEffect(extend);
  useEffect(() => {
    const box = scrollRef.current;
    box?.addEventListener('scroll', extend, { passive: true });
    return () => box?.removeEventListener('scroll', extend);
  }, [extend]);
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
