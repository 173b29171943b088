// Agent conversations (threads): summaries by id, the lists people look at (under a
// conversation, a task, a peer-started thread; those peers started; those whose root
// is gone), and the details of the ones opened.
//
// Summaries live in one Map that is updated in place, with `version` bumped on every
// change: a list of 10,000 threads then costs one Map entry per thread and a change to
// one thread re-renders only the rows whose summary object changed.
//
// A long list is read a page at a time as its rows come into view (`loadRange`): it
// knows how many rows it has, and holds only the pages someone scrolled to, so a root
// with 100,000 agent conversations costs what is on screen. A short list (up to
// SMALL_LIST) and a list grouped by root are read whole, in the background, after their
// first page: groups need every row, and what links to agent conversations (the ask
// lines of a conversation) finds all of a short list's.
import { create } from 'zustand';
import type { ParamsOf, ThreadDetail } from '../../shared/api-contract';
import type { ThreadSummary } from '../../shared/domain';
import { call, isNotFound, messageOf } from './client';

/** Resolves after the next frame has painted (at once where there are no frames, as in tests). */
function afterPaint(): Promise<void> {
  if (typeof requestAnimationFrame !== 'function') return Promise.resolve();
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

/** Summaries in the first page of a list; in each page read as rows come into view; in each page of a whole read. */
const FIRST_PAGE = 60;
const PAGE = 100;
const NEXT_PAGES = 500;
/** Lists up to this long are read whole: a few pages of the background read, kept in order as they change. */
const SMALL_LIST = 2000;

export type ThreadListKey = `conversation:${number}` | `task:${number}` | `thread:${number}` | 'peer' | 'orphaned';

export interface ThreadList {
  /** The thread ids read so far, in display order; null until the first load. */
  ids: number[] | null;
  /** Every row of the list by position, `total` long; 0 is a row not read yet (ids start at 1, and a dense array stays fast). */
  rows: number[] | null;
  /** How many agent conversations the list holds, read or not. */
  total: number;
  /** Bumped whenever `rows` changes, in place or replaced: what the list's layout follows. */
  revision: number;
  /** Read whole, not a page at a time (a list grouped by root): kept when it is read again. */
  whole: boolean;
  error: string | null;
  loading: boolean;
}

interface ThreadsState {
  summaries: Map<number, ThreadSummary>;
  version: number;
  lists: Partial<Record<ThreadListKey, ThreadList>>;
  details: Record<number, ThreadDetail | undefined>;
  detailErrors: Record<number, string | undefined>;
  /** Reads the list's first page; `whole` (else as it was read before): then the rest, in the background. */
  loadList: (key: ThreadListKey, options?: { whole?: boolean }) => Promise<void>;
  /** Reads the pages that hold rows `start` to `end` (exclusive) not read yet. */
  loadRange: (key: ThreadListKey, start: number, end: number) => Promise<void>;
  loadDetail: (id: number) => Promise<void>;
  stop: (id: number) => Promise<boolean>;
  /** Takes back the ask of an agent conversation started here; the peer stops, down its chain. */
  withdraw: (id: number) => Promise<void>;
  /** A `changed thread` event: refetches it and moves it between the lists it belongs to. */
  changed: (id: number) => Promise<void>;
  /** Forgets the lists of a root that is gone, so they are read anew. */
  dropList: (key: ThreadListKey) => void;
}

export function listParams(key: ThreadListKey): ParamsOf<'threads.list'> {
  if (key === 'peer') return { peerStarted: true };
  if (key === 'orphaned') return { orphaned: true };
  const [kind, id] = key.split(':') as ['conversation' | 'task' | 'thread', string];
  return { root: { kind, id: Number(id) } };
}

/** The lists a thread appears in. */
export function keysOf(thread: ThreadSummary): ThreadListKey[] {
  const keys: ThreadListKey[] = [];
  if (thread.root.gone) keys.push('orphaned');
  else if (!(thread.root.kind === 'thread' && thread.root.id === thread.id))
    keys.push(`${thread.root.kind}:${thread.root.id}`);
  if (thread.startedBy === 'peer' && !thread.root.gone) keys.push('peer');
  return keys;
}

const rank = (t: ThreadSummary) => (t.run.state !== 'idle' ? 0 : t.status === 'open' ? 1 : 2);
const lastActivity = (t: ThreadSummary) => t.lastText?.createdAt ?? t.createdAt;

/** Working threads first, then open, then closed; most recent activity first within each. */
export function orderThreads(threads: ThreadSummary[]): number[] {
  return threads
    .map((t) => ({ id: t.id, rank: rank(t), at: lastActivity(t) }))
    .sort((a, b) => a.rank - b.rank || (a.at < b.at ? 1 : a.at > b.at ? -1 : b.id - a.id))
    .map((t) => t.id);
}

/** Rows per block of `readPerBlock`: a page of rows read as they come into view. */
const BLOCK = 100;

/**
 * How many rows of each block of BLOCK rows are read, per rows array: a list of 100,000
 * rows holds a few pages read, and its ids are gathered from those blocks alone.
 */
const readPerBlock = new WeakMap<readonly number[], number[]>();

function blocksOf(rows: readonly number[]): number[] {
  let blocks = readPerBlock.get(rows);
  if (!blocks) {
    blocks = [];
    for (let i = 0; i < rows.length; i++) {
      const block = Math.floor(i / BLOCK);
      while (blocks.length <= block) blocks.push(0);
      if (rows[i] !== 0) blocks[block]!++;
    }
    readPerBlock.set(rows, blocks);
  }
  return blocks;
}

/** Writes one row of a list's rows in place, keeping the count of its block. */
function setRow(rows: number[], index: number, id: number): void {
  const blocks = blocksOf(rows);
  const block = Math.floor(index / BLOCK);
  while (blocks.length <= block) blocks.push(0);
  if (rows[index] === 0 && id !== 0) blocks[block]!++;
  else if (rows[index] !== 0 && id === 0) blocks[block]!--;
  rows[index] = id;
}

/** A list's dense ids, from its rows: only the blocks with rows read are looked through. */
function idsOf(rows: readonly number[]): number[] {
  const blocks = blocksOf(rows);
  const ids: number[] = [];
  for (let block = 0; block < blocks.length; block++) {
    if (blocks[block] === 0) continue;
    const end = Math.min(rows.length, (block + 1) * BLOCK);
    for (let i = block * BLOCK; i < end; i++) if (rows[i] !== 0) ids.push(rows[i]!);
  }
  return ids;
}

/** `rows` grown to `total` with rows not read yet; pushed one by one, so the array stays packed (fast to read). */
function grown(rows: number[], total: number): number[] {
  for (let i = rows.length; i < total; i++) rows.push(0);
  return rows;
}

/** Threads read at an offset of a list. */
interface Page {
  offset: number;
  threads: ThreadSummary[];
}

/** Pages of each list asked for and not yet placed; forgotten when the list's rows shift. */
const requested = new Map<ThreadListKey, Set<number>>();

export const useThreads = create<ThreadsState>()((set, get) => {
  /** `summaries`: the summaries changed too, in the same change to the store (one render, not two). */
  const setList = (key: ThreadListKey, patch: Partial<ThreadList>, summaries = false) =>
    set((s) => ({
      ...(summaries ? { version: s.version + 1 } : {}),
      lists: {
        ...s.lists,
        [key]: {
          ids: null,
          rows: null,
          total: 0,
          revision: 0,
          whole: false,
          error: null,
          loading: false,
          ...s.lists[key],
          ...patch,
        },
      },
    }));

  /**
   * Puts pages' threads at their positions; a thread already elsewhere in the list moves.
   * The rows change in place, not copied (a list may have 100,000 rows and this runs per
   * page read): `revision` says they changed.
   */
  const place = (key: ThreadListKey, pages: readonly Page[], total: number) => {
    const { summaries } = get();
    const list = get().lists[key];
    if (!list?.rows) return;
    const rows = grown(list.rows, total);
    // What was read before: a thread of the page may be there, at a place it has left.
    let known: Set<number> | null = null;
    for (const { offset, threads } of pages)
      threads.forEach((thread, i) => {
        summaries.set(thread.id, thread);
        if (rows[offset + i] === thread.id) return;
        known ??= new Set(list.ids);
        if (known.has(thread.id)) {
          const at = rows.indexOf(thread.id);
          if (at >= 0) setRow(rows, at, 0);
        }
        setRow(rows, offset + i, thread.id);
        // Placed now: a later page of the batch that has it moves it from here.
        known.add(thread.id);
      });
    // One change to the store, so its readers (and the list's layout of every row) run once.
    setList(key, { rows, ids: idsOf(rows), total: rows.length, revision: list.revision + 1 }, true);
  };

  /**
   * Pages read as rows come into view are placed on the next frame, all that landed by then
   * in one change: replies that arrive a few milliseconds apart (the pages in view and
   * either side are asked for together) would otherwise each cost a render and a layout of
   * every row, several in one frame.
   */
  let landing: { key: ThreadListKey; asked: Set<number>; page: Page; total: number }[] = [];
  let landed: (() => void) | null = null;
  let flushing: Promise<void> | null = null;
  const flush = () => {
    const batch = landing;
    const done = landed;
    landing = [];
    landed = null;
    flushing = null;
    const byKey = new Map<ThreadListKey, { pages: Page[]; total: number }>();
    for (const { key, asked, page, total } of batch) {
      asked.delete(page.offset / PAGE);
      // The list was read anew meanwhile: this page belongs to the old one.
      if (requested.get(key) !== asked) continue;
      const entry = byKey.get(key) ?? { pages: [], total };
      entry.pages.push(page);
      entry.total = total;
      byKey.set(key, entry);
    }
    for (const [key, { pages, total }] of byKey) place(key, pages, total);
    done?.();
  };
  const land = (key: ThreadListKey, asked: Set<number>, page: Page, total: number): Promise<void> => {
    landing.push({ key, asked, page, total });
    const placed = (flushing ??= new Promise<void>((resolve) => {
      landed = resolve;
      if (typeof requestAnimationFrame === 'function') requestAnimationFrame(flush);
      else queueMicrotask(flush);
    }));
    return placed;
  };

  const reorder = (ids: number[]) => {
    const { summaries } = get();
    return orderThreads(ids.map((id) => summaries.get(id)).filter((t): t is ThreadSummary => t !== undefined));
  };

  return {
    summaries: new Map(),
    version: 0,
    lists: {},
    details: {},
    detailErrors: {},

    async loadList(key, options = {}) {
      const whole = options.whole ?? get().lists[key]?.whole ?? false;
      setList(key, { loading: true, whole });
      requested.delete(key);
      try {
        // The server's order: working, open, closed; latest activity first.
        performance.mark('parley:threads-requested', { detail: { key } });
        const first = await call('threads.page', { ...listParams(key), limit: FIRST_PAGE });
        // For the UI benchmark: when the list arrived, apart from when it painted.
        performance.mark('parley:threads-arrived', { detail: { key, count: first.threads.length } });
        const { summaries } = get();
        for (const thread of first.threads) summaries.set(thread.id, thread);
        const ids = first.threads.map((t) => t.id);
        const rows = grown(ids.slice(), first.total);
        const revision = (get().lists[key]?.revision ?? 0) + 1;
        setList(key, { rows, ids, total: rows.length, revision, error: null, loading: false }, true);
        if (!whole && first.total > SMALL_LIST) return;
        // Let the first rows paint before parsing the rest takes the main thread.
        if (first.threads.length < first.total) await afterPaint();
        setList(key, { loading: true });
        let offset = first.threads.length;
        for (;;) {
          const total = get().lists[key]?.total ?? 0;
          if (offset >= total) break;
          const next = await call('threads.page', { ...listParams(key), offset, limit: NEXT_PAGES });
          if (next.threads.length === 0) break;
          place(key, [{ offset, threads: next.threads }], next.total);
          offset += next.threads.length;
        }
        setList(key, { loading: false });
      } catch (error) {
        setList(key, { error: messageOf(error), loading: false });
      }
    },

    async loadRange(key, start, end) {
      const list = get().lists[key];
      if (!list?.rows) return;
      const asked = requested.get(key) ?? new Set<number>();
      requested.set(key, asked);
      const pages: number[] = [];
      for (let page = Math.floor(Math.max(0, start) / PAGE); page * PAGE < Math.min(end, list.total); page++) {
        if (asked.has(page)) continue;
        const from = page * PAGE;
        const to = Math.min(from + PAGE, list.total);
        for (let i = from; i < to; i++)
          if (list.rows[i] === 0) {
            pages.push(page);
            break;
          }
      }
      await Promise.all(
        pages.map(async (page) => {
          asked.add(page);
          try {
            const next = await call('threads.page', { ...listParams(key), offset: page * PAGE, limit: PAGE });
            // Still asked for until placed: a render before then must not ask for it again.
            await land(key, asked, { offset: page * PAGE, threads: next.threads }, next.total);
          } catch {
            // Asked again when its rows are next in view.
            asked.delete(page);
          }
        }),
      );
    },

    async loadDetail(id) {
      try {
        const detail = await call('threads.get', { id });
        get().summaries.set(id, detail.thread);
        set((s) => ({
          version: s.version + 1,
          details: { ...s.details, [id]: detail },
          detailErrors: { ...s.detailErrors, [id]: undefined },
        }));
        placeInLists(detail.thread);
      } catch (error) {
        if (isNotFound(error)) forget(id);
        set((s) => ({
          detailErrors: {
            ...s.detailErrors,
            [id]: isNotFound(error) ? 'You can no longer read this agent conversation.' : messageOf(error),
          },
        }));
      }
    },

    async stop(id) {
      const { stopped } = await call('threads.stop', { id });
      await get().loadDetail(id);
      return stopped;
    },

    async withdraw(id) {
      await call('threads.withdraw', { id });
      await get().loadDetail(id);
    },

    async changed(id) {
      // Nothing on screen can show it: no list loaded, not opened.
      if (!watched.has(id) && !Object.values(get().lists).some((list) => list?.ids)) return;
      await get().loadDetail(id);
      // A detail nobody opened is not kept: the summary is what lists show.
      const detail = get().details[id];
      if (detail && !watched.has(id)) set((s) => ({ details: { ...s.details, [id]: undefined } }));
    },

    dropList(key) {
      requested.delete(key);
      set((s) => ({ lists: { ...s.lists, [key]: undefined } }));
    },
  };

  /** Adds the thread to the loaded lists it belongs to, and takes it out of the others. */
  function placeInLists(thread: ThreadSummary) {
    const belongs = new Set(keysOf(thread));
    const { lists } = get();
    let changed = false;
    const next = { ...lists };
    for (const [key, list] of Object.entries(lists) as [ThreadListKey, ThreadList | undefined][]) {
      if (!list?.rows || !list.ids) continue;
      const index = list.rows.indexOf(thread.id);
      const has = index >= 0;
      // Read whole and small: kept in order as threads start and stop working.
      const whole = list.ids.length === list.rows.length && list.rows.length <= SMALL_LIST;
      let rows: number[] | null = null;
      if (belongs.has(key) && !has) rows = whole ? reorder([thread.id, ...list.ids]) : [thread.id, ...list.rows];
      else if (!belongs.has(key) && has) {
        rows = list.rows.slice();
        rows.splice(index, 1);
      } else if (has && whole) {
        const ids = reorder(list.ids);
        if (ids.some((x, i) => x !== list.ids![i])) rows = ids;
      }
      if (!rows) continue;
      // Positions moved: pages asked for would land in the wrong place.
      requested.delete(key);
      next[key] = { ...list, rows, ids: idsOf(rows), total: rows.length, revision: list.revision + 1 };
      changed = true;
    }
    if (changed) set({ lists: next });
  }

  function forget(id: number) {
    get().summaries.delete(id);
    const lists = { ...get().lists };
    for (const [key, list] of Object.entries(lists) as [ThreadListKey, ThreadList | undefined][]) {
      const index = list?.rows?.indexOf(id) ?? -1;
      if (!list?.rows || index < 0) continue;
      const rows = list.rows.slice();
      rows.splice(index, 1);
      requested.delete(key);
      lists[key] = { ...list, rows, ids: idsOf(rows), total: rows.length, revision: list.revision + 1 };
    }
    set((s) => ({ version: s.version + 1, lists, details: { ...s.details, [id]: undefined } }));
  }
});

/** Threads whose detail is on screen (expanded); their details are kept fresh. */
const watched = new Map<number, number>();

export function watchThread(id: number): () => void {
  watched.set(id, (watched.get(id) ?? 0) + 1);
  return () => {
    const n = (watched.get(id) ?? 1) - 1;
    if (n <= 0) watched.delete(id);
    else watched.set(id, n);
  };
}

export const selectThreadList = (key: ThreadListKey) => (s: ThreadsState) => s.lists[key];
export const selectThread = (id: number) => (s: ThreadsState) => s.summaries.get(id);
export const selectThreadDetail = (id: number) => (s: ThreadsState) => s.details[id];
export const selectThreadError = (id: number) => (s: ThreadsState) => s.detailErrors[id];
