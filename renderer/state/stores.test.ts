// The stores' logic under Node with a stand-in API client: list membership and order of
// agent conversations, the task tree, the view in the address, and live updates.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, type AppEvent } from '../../shared/api-contract';
import type { ApprovalView, RunSummary, Task, ThreadSummary } from '../../shared/domain';
import type { ApiClient } from '../api/client';
import { approvalOfText, approvalsForRoot, approvalsOfThread } from './approvals';
import { setApiClient } from './client';
import { startLiveUpdates } from './live';
import { taskTree } from './tasks';
import { keysOf, orderThreads, useThreads } from './threads';
import { viewFromFragment, viewToFragment, type View } from './ui';

const idle: RunSummary = { id: null, state: 'idle', pending: 0, session: null, lastTurn: null };
const counts = { held: 0, queued: 0, sent: 0, acked: 0, failed: 0, received: 0, handled: 0 };

function thread(id: number, patch: Partial<ThreadSummary> = {}): ThreadSummary {
  return {
    id,
    threadId: `wire-${id}`,
    connection: { id: 1, name: 'bob', fingerprint: 'ab'.repeat(32) },
    localRole: 'assistant',
    peerRole: 'researcher',
    root: { kind: 'conversation', id: 1, gone: false, title: null },
    startedBy: 'local',
    status: 'open',
    closeReason: null,
    run: idle,
    counts,
    lastText: null,
    peerTurn: null,
    createdAt: `2025-01-01T00:00:0${id}.000Z`,
    ...patch,
  };
}

function task(id: number, parentId: number | null, status: Task['status'] = 'open'): Task {
  return {
    id,
    roleId: 1,
    roleName: 'assistant',
    parentId,
    title: `task ${id}`,
    body: '',
    status,
    createdBy: 1,
    createdAt: '2025-01-01T00:00:00.000Z',
    finishedAt: null,
    run: idle,
  };
}

/** A client whose answers the test sets per method. */
function fakeClient(answers: Record<string, (params: unknown) => unknown>) {
  const listeners = new Set<(event: AppEvent) => void>();
  const calls: Array<[string, unknown]> = [];
  const client: ApiClient = {
    transport: 'browser',
    hasCredentials: () => true,
    tokenFromLink: false,
    linkState: () => ({ status: 'connected', retryAt: null }),
    onLinkState: () => () => undefined,
    reconnect: () => undefined,
    invoke: (async (method: string, params: unknown) => {
      await Promise.resolve();
      calls.push([method, params]);
      const answer = answers[method];
      if (!answer) throw new ApiError('invalid', `unexpected ${method}`);
      return answer(params);
    }) as ApiClient['invoke'],
    onEvent: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return { client, calls, emit: (event: AppEvent) => listeners.forEach((l) => l(event)) };
}

describe('agent conversation lists', () => {
  it('puts working threads first, then open, then closed, each by latest activity', () => {
    const threads = [
      thread(1, { status: 'closed', closeReason: 'root deleted' }),
      thread(2),
      thread(3, { run: { ...idle, state: 'running' } }),
      thread(4, {
        lastText: {
          id: 9,
          direction: 'in',
          seq: 1,
          body: 'late',
          state: 'handled',
          reason: null,
          failedBy: null,
          sentByTurnId: null,
          takenByTurnId: null,
          createdAt: '2025-01-02T00:00:00.000Z',
        },
      }),
    ];
    expect(orderThreads(threads)).toEqual([3, 4, 2, 1]);
  });

  it('knows which lists a thread is in', () => {
    expect(keysOf(thread(1))).toEqual(['conversation:1']);
    expect(keysOf(thread(2, { root: { kind: 'task', id: 7, gone: false, title: null } }))).toEqual(['task:7']);
    // A thread the peer started is its own root: it is listed under "Started by peers".
    expect(keysOf(thread(3, { startedBy: 'peer', root: { kind: 'thread', id: 3, gone: false, title: null } }))).toEqual(
      ['peer'],
    );
    // A relay for it sits under it.
    expect(keysOf(thread(4, { root: { kind: 'thread', id: 3, gone: false, title: null } }))).toEqual(['thread:3']);
    expect(keysOf(thread(5, { root: { kind: 'conversation', id: 1, gone: true, title: null } }))).toEqual(['orphaned']);
  });
});

describe('threads store', () => {
  beforeEach(() => {
    useThreads.setState({ summaries: new Map(), version: 0, lists: {}, details: {}, detailErrors: {} });
  });

  it('reads a long list a page at a time, as its rows come into view, and keeps what it read as threads come', async () => {
    // 2,500 agent conversations under the conversation, ids 1000…3499 in the server's order.
    let all = Array.from({ length: 2500 }, (_, i) => thread(1000 + i));
    const { client, calls } = fakeClient({
      'threads.page': (params) => {
        const { offset = 0, limit } = params as { offset?: number; limit: number };
        return { total: all.length, threads: all.slice(offset, offset + limit) };
      },
      'threads.get': (params) => {
        const id = (params as { id: number }).id;
        return { thread: all.find((t) => t.id === id)!, texts: [], turns: [], live: [], runLog: [] };
      },
    });
    setApiClient(client);
    const store = useThreads.getState();
    const list = () => useThreads.getState().lists['conversation:1']!;
    await store.loadList('conversation:1');
    // The first page only: the list knows its length, and the rest waits to be seen.
    expect(list().total).toBe(2500);
    expect(list().rows).toHaveLength(2500);
    expect(list().ids).toHaveLength(60);
    expect(calls.filter(([m]) => m === 'threads.page')).toHaveLength(1);

    // Scrolled to the end: the page that holds it, and nothing between — placed in one change
    // to the store, so what shows the list lays its rows out once per page.
    let changes = 0;
    const unsubscribe = useThreads.subscribe(() => changes++);
    await store.loadRange('conversation:1', 2490, 2500);
    unsubscribe();
    expect(changes).toBe(1);
    expect(calls.at(-1)).toEqual(['threads.page', { root: { kind: 'conversation', id: 1 }, offset: 2400, limit: 100 }]);
    expect(list().rows!.slice(2490)).toEqual(all.slice(2490).map((t) => t.id));
    expect(list().rows![1500]).toBe(0); // not read
    expect(list().ids).toHaveLength(160);
    // What was read is not read again.
    await store.loadRange('conversation:1', 2490, 2500);
    expect(calls.filter(([m]) => m === 'threads.page')).toHaveLength(2);

    // Pages that land together are placed together: one change, one layout of the list.
    changes = 0;
    const again = useThreads.subscribe(() => changes++);
    await store.loadRange('conversation:1', 2200, 2400);
    again();
    expect(changes).toBe(1);
    expect(calls.filter(([m]) => m === 'threads.page')).toHaveLength(4);
    expect(list().rows!.slice(2200, 2400)).toEqual(all.slice(2200, 2400).map((t) => t.id));
    expect(list().ids).toHaveLength(360);

    // A new agent conversation comes first; the rows read so far keep their threads.
    const added = thread(9000);
    all = [added, ...all];
    await store.changed(9000);
    expect(list().total).toBe(2501);
    expect(list().rows![0]).toBe(9000);
    expect(list().rows![2500]).toBe(3499);
    expect(list().ids).toHaveLength(361);

    // A page read after that lands where the rows are now, and the ids keep the rows' order.
    await store.loadRange('conversation:1', 2100, 2200);
    expect(list().rows!.slice(2100, 2200)).toEqual(all.slice(2100, 2200).map((t) => t.id));
    expect(list().ids).toEqual(list().rows!.filter((id) => id !== 0));
    expect(list().ids).toHaveLength(461);
  });

  it('reads a short list whole after its first page, so everything that links to it finds its rows', async () => {
    const all = Array.from({ length: 250 }, (_, i) => thread(1000 + i));
    const { client, calls } = fakeClient({
      'threads.page': (params) => {
        const { offset = 0, limit } = params as { offset?: number; limit: number };
        return { total: all.length, threads: all.slice(offset, offset + limit) };
      },
    });
    setApiClient(client);
    await useThreads.getState().loadList('conversation:1');
    expect(useThreads.getState().lists['conversation:1']?.ids).toEqual(all.map((t) => t.id));
    expect(calls.filter(([m]) => m === 'threads.page').map(([, p]) => p)).toEqual([
      { root: { kind: 'conversation', id: 1 }, limit: 60 },
      { root: { kind: 'conversation', id: 1 }, offset: 60, limit: 500 },
    ]);
  });

  it('loads a list, then adds, moves and forgets threads as change events come', async () => {
    let current = thread(2);
    let gone = false;
    const { client } = fakeClient({
      'threads.page': (params) => {
        const threads = 'root' in (params as object) ? [thread(1)] : [];
        return { total: threads.length, threads };
      },
      'threads.get': () => {
        if (gone) throw new ApiError('not_found', 'no agent conversation 2');
        return { thread: current, texts: [], turns: [], live: [], runLog: [] };
      },
    });
    setApiClient(client);
    const store = useThreads.getState();
    await store.loadList('conversation:1');
    await store.loadList('orphaned');
    expect(useThreads.getState().lists['conversation:1']?.ids).toEqual([1]);

    await store.changed(2); // a new thread under the conversation
    expect(useThreads.getState().lists['conversation:1']?.ids).toEqual([2, 1]);
    expect(useThreads.getState().details[2]).toBeUndefined(); // nobody opened it

    current = thread(2, { status: 'closed', root: { kind: 'conversation', id: 1, gone: true, title: null } });
    await store.changed(2); // its conversation was deleted
    expect(useThreads.getState().lists['conversation:1']?.ids).toEqual([1]);
    expect(useThreads.getState().lists.orphaned?.ids).toEqual([2]);

    gone = true;
    await store.changed(2); // no longer readable
    expect(useThreads.getState().lists.orphaned?.ids).toEqual([]);
    expect(useThreads.getState().summaries.has(2)).toBe(false);
  });
});

describe('task tree', () => {
  it('lists parents before their subtasks, open before finished', () => {
    const tree = taskTree([task(1, null, 'finished'), task(2, null), task(3, 2), task(4, 3), task(5, 2), task(6, 99)]);
    expect(tree.map((n) => [n.task.id, n.depth])).toEqual([
      [6, 0], // its parent is gone: a root
      [2, 0],
      [3, 1],
      [4, 2],
      [5, 1],
      [1, 0],
    ]);
    expect(tree.find((n) => n.task.id === 2)?.children).toBe(2);
  });
});

describe('the view in the address', () => {
  it('round-trips every view and falls back to home', () => {
    const views: View[] = [
      { kind: 'home' },
      { kind: 'conversation', id: 3 },
      { kind: 'tasks', id: null },
      { kind: 'tasks', id: 9 },
      { kind: 'peer' },
      { kind: 'orphaned' },
      { kind: 'attention' },
      { kind: 'settings', tab: 'roles' },
    ];
    for (const view of views) expect(viewFromFragment(viewToFragment(view))).toEqual(view);
    expect(viewFromFragment('settings-nonsense')).toEqual({ kind: 'home' });
    expect(viewFromFragment(null)).toEqual({ kind: 'home' });
  });
});

describe('live updates', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.stubGlobal('document', { addEventListener: () => undefined, removeEventListener: () => undefined });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('refetches once per object for a burst of events', async () => {
    const { client, calls, emit } = fakeClient({
      'threads.get': () => ({ thread: thread(5), texts: [], turns: [], live: [], runLog: [] }),
      'connections.list': () => [],
    });
    setApiClient(client);
    const stop = startLiveUpdates();
    for (let i = 0; i < 20; i++) emit({ type: 'changed', kind: 'thread', id: 5 });
    emit({ type: 'changed', kind: 'connection', id: 1 });
    emit({ type: 'changed', kind: 'connection', id: 2 });
    await vi.advanceTimersByTimeAsync(100);
    expect(calls.map(([method]) => method).sort()).toEqual(['connections.list', 'threads.get']);
    stop();
  });
});

describe('what waits for approval, by where it shows', () => {
  const approval = (id: number, patch: Partial<ApprovalView>): ApprovalView => ({
    id,
    kind: 'outgoing',
    state: 'pending',
    context: { kind: 'thread', id: 10 },
    root: { kind: 'conversation', id: 1 },
    role: 'assistant',
    thread: { id: 10, peer: 'bob/researcher', localRole: 'assistant' },
    text: { id: 100 + id, seq: id, preview: 'hello' },
    title: '',
    detail: null,
    canDecide: true,
    reason: null,
    decidedBy: null,
    createdAt: '2025-01-01T00:00:00.000Z',
    decidedAt: null,
    ...patch,
  });
  const list = [
    approval(1, {}),
    approval(2, {
      kind: 'incoming',
      thread: { id: 11, peer: 'bob/researcher', localRole: 'assistant' },
      context: { kind: 'thread', id: 11 },
    }),
    approval(3, {
      kind: 'permission',
      context: { kind: 'conversation', id: 1 },
      thread: null,
      text: null,
      title: 'npm test',
    }),
    approval(4, { kind: 'permission', context: { kind: 'thread', id: 10 }, text: null, title: 'ls' }),
    approval(5, { root: { kind: 'task', id: 1 }, thread: { id: 12, peer: 'bob/researcher', localRole: 'assistant' } }),
  ];
  it.each([
    [
      'a conversation: every one rooted there, its own tool requests too',
      { kind: 'conversation', id: 1 } as const,
      [1, 2, 3, 4],
    ],
    ['a task with the same id: only the task’s', { kind: 'task', id: 1 } as const, [5]],
  ])('%s', (_, root, ids) => {
    expect(approvalsForRoot(list, root).map((a) => a.id)).toEqual(ids);
  });
  it('an agent conversation: its held texts and its agent’s tool requests', () => {
    expect(approvalsOfThread(list, 10).map((a) => a.id)).toEqual([1, 4]);
    expect(approvalsOfThread(list, 11).map((a) => a.id)).toEqual([2]);
  });
  it('a held text: its own approval', () => {
    expect(approvalOfText(list, 102)?.id).toBe(2);
    expect(approvalOfText(list, 999)).toBeUndefined();
    expect(approvalOfText(null, 101)).toBeUndefined();
  });
});
