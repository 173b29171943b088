// Agent conversations (threads): summaries by id, the lists people look at (under a
// conversation, a task, a peer-started thread; those peers started; those whose root
// is gone), and the details of the ones opened.
//
// Summaries live in one Map that is updated in place, with `version` bumped on every
// change: a list of 10,000 threads then costs one Map entry per thread and a change to
// one thread re-renders only the rows whose summary object changed.
import { create } from 'zustand';
import type { ParamsOf, ThreadDetail } from '../../shared/api-contract';
import type { ThreadSummary } from '../../shared/domain';
import { call, isNotFound, messageOf } from './client';

/** Resolves after the next frame has painted (at once where there are no frames, as in tests). */
function afterPaint(): Promise<void> {
  if (typeof requestAnimationFrame !== 'function') return Promise.resolve();
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

/** Summaries in the first page of a list, and in each later one. */
const FIRST_PAGE = 60;
const NEXT_PAGES = 500;

export type ThreadListKey = `conversation:${number}` | `task:${number}` | `thread:${number}` | 'peer' | 'orphaned';

export interface ThreadList {
  /** Thread ids in display order; null until the first load. */
  ids: number[] | null;
  error: string | null;
  loading: boolean;
}

interface ThreadsState {
  summaries: Map<number, ThreadSummary>;
  version: number;
  lists: Partial<Record<ThreadListKey, ThreadList>>;
  details: Record<number, ThreadDetail | undefined>;
  detailErrors: Record<number, string | undefined>;
  loadList: (key: ThreadListKey) => Promise<void>;
  loadDetail: (id: number) => Promise<void>;
  stop: (id: number) => Promise<boolean>;
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

export const useThreads = create<ThreadsState>()((set, get) => {
  const setList = (key: ThreadListKey, patch: Partial<ThreadList>) =>
    set((s) => ({
      lists: { ...s.lists, [key]: { ids: null, error: null, loading: false, ...s.lists[key], ...patch } },
    }));

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

    async loadList(key) {
      setList(key, { loading: true });
      try {
        // A first page paints at once; the rest follows in the background, in the
        // server's order (working, open, closed; latest activity first).
        performance.mark('parley:threads-requested', { detail: { key } });
        const first = await call('threads.page', { ...listParams(key), limit: FIRST_PAGE });
        // For the UI benchmark: when the list arrived, apart from when it painted.
        performance.mark('parley:threads-arrived', { detail: { key, count: first.threads.length } });
        const { summaries } = get();
        for (const thread of first.threads) summaries.set(thread.id, thread);
        const ids = first.threads.map((t) => t.id);
        set((s) => ({ version: s.version + 1 }));
        setList(key, { ids: [...ids], error: null, loading: ids.length < first.total });
        const seen = new Set(ids);
        // Let the first rows paint before parsing the rest takes the main thread.
        if (seen.size < first.total) await afterPaint();
        while (seen.size < first.total) {
          const next = await call('threads.page', { ...listParams(key), offset: seen.size, limit: NEXT_PAGES });
          if (next.threads.length === 0) break;
          for (const thread of next.threads) {
            summaries.set(thread.id, thread);
            if (!seen.has(thread.id)) {
              seen.add(thread.id);
              ids.push(thread.id);
            }
          }
          set((s) => ({ version: s.version + 1 }));
          // Threads that arrived by event meanwhile stay in the list.
          const current = get().lists[key]?.ids ?? [];
          setList(key, { ids: [...current.filter((id) => !seen.has(id)), ...ids], loading: seen.size < next.total });
        }
      } catch (error) {
        setList(key, { error: messageOf(error), loading: false });
      }
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

    async changed(id) {
      // Nothing on screen can show it: no list loaded, not opened.
      if (!watched.has(id) && !Object.values(get().lists).some((list) => list?.ids)) return;
      await get().loadDetail(id);
      // A detail nobody opened is not kept: the summary is what lists show.
      const detail = get().details[id];
      if (detail && !watched.has(id)) set((s) => ({ details: { ...s.details, [id]: undefined } }));
    },

    dropList(key) {
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
      if (!list?.ids) continue;
      const has = list.ids.includes(thread.id);
      if (belongs.has(key) && !has) {
        next[key] = { ...list, ids: reorder([thread.id, ...list.ids]) };
        changed = true;
      } else if (!belongs.has(key) && has) {
        next[key] = { ...list, ids: list.ids.filter((x) => x !== thread.id) };
        changed = true;
      } else if (has && list.ids.length <= 2000) {
        // Keep small lists in order as threads start and stop working.
        const ids = reorder(list.ids);
        if (ids.some((x, i) => x !== list.ids![i])) {
          next[key] = { ...list, ids };
          changed = true;
        }
      }
    }
    if (changed) set({ lists: next });
  }

  function forget(id: number) {
    get().summaries.delete(id);
    const lists = { ...get().lists };
    for (const [key, list] of Object.entries(lists) as [ThreadListKey, ThreadList | undefined][]) {
      if (list?.ids?.includes(id)) lists[key] = { ...list, ids: list.ids.filter((x) => x !== id) };
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
