// Thread lists as people page through them, on a real installation with a real SQLite
// file: agent conversations written through the store's own queries (turns running and
// being stopped, inputs and texts waiting, texts in every state, open and closed, peer-
// started and orphaned ones), then read through the app API and compared with what the
// rows hold, worked out the slow way, one agent conversation at a time.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContextKind, TextState, ThreadSummary } from '../../shared/domain';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import type { Db } from '../store/database';
import { getConnectionRow, insertConnection } from '../store/queries/connections';
import {
  adoptWaitingTexts,
  endTurn,
  ensureRun,
  findRun,
  insertInput,
  insertTurn,
  markTurnStopping,
  runSummary,
} from '../store/queries/runs';
import { insertTask } from '../store/queries/tasks';
import {
  ackTexts,
  closeThread,
  insertText,
  insertThread,
  failText,
  keepDeletedRootTitle,
  markRootGone,
  setPeerTurn,
  setTextState,
  type TextRow,
  type ThreadRow,
} from '../store/queries/threads';

/** Statements run through any connection of this process while `counting` is on. */
let counting = false;
let executed = 0;
const { prepare } = Database.prototype as unknown as {
  prepare: (this: Database.Database, sql: string) => Database.Statement;
};
Database.prototype.prepare = function (this: Database.Database, sql: string) {
  const statement = prepare.call(this, sql);
  return new Proxy(statement, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (key === 'all' || key === 'get' || key === 'run' || key === 'iterate')
        return (...params: unknown[]) => {
          if (counting) executed++;
          return (value as (...args: unknown[]) => unknown).apply(target, params);
        };
      if (key === 'pluck' || key === 'raw' || key === 'expand')
        return (...args: unknown[]) => {
          (value as (...a: unknown[]) => unknown).apply(target, args);
          return receiver as unknown;
        };
      return (value as (...args: unknown[]) => unknown).bind(target);
    },
  });
} as typeof Database.prototype.prepare;

async function statementsOf(work: () => Promise<unknown>): Promise<number> {
  executed = 0;
  counting = true;
  try {
    await work();
  } finally {
    counting = false;
  }
  return executed;
}

/** A fixed sequence of numbers in [0, 1), so every run writes the same rows. */
function numbers(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) >>> 0;
    return state / 2 ** 32;
  };
}

const STATES_OUT: TextState[] = ['queued', 'sent', 'acked', 'acked', 'failed'];
const STATES_IN: TextState[] = ['received', 'handled', 'handled'];

/**
 * Writes `count` agent conversations under `root` (null: peer-started, each its own
 * root), with texts in every state, runs, finished, running and stopping turns, and
 * waiting inputs. Returns their ids.
 */
function writeThreads(
  db: Db,
  connectionId: number,
  role: { id: number; name: string },
  root: { kind: ContextKind; id: number } | null,
  count: number,
  random: () => number,
): number[] {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const thread = insertThread(db, {
      connectionId,
      wireId: `w-${root?.kind ?? 'peer'}-${root?.id ?? 0}-${i}`,
      localRoleId: role.id,
      localRole: role.name,
      // One open agent conversation per sender key: a peer role each.
      peerRole: `role${i}`,
      rootKind: root?.kind ?? 'thread',
      rootId: root?.id ?? null,
      startedBy: root ? 'local' : 'peer',
    });
    ids.push(thread.id);
    const texts = Math.floor(random() * 5);
    let seqOut = 0;
    let seqIn = 0;
    for (let n = 0; n < texts; n++) {
      if (random() < 0.5) {
        const state = STATES_OUT[n % 5]!;
        const id = insertText(db, thread.id, 'out', ++seqOut, `out ${i}.${n}`, state);
        // Failed by either side.
        if (state === 'failed') failText(db, id, 'paused', random() < 0.5 ? 'us' : 'peer');
      } else insertText(db, thread.id, 'in', ++seqIn, `in ${i}.${n}`, STATES_IN[n % 3]!);
    }
    // What the peer said of the turn that took our texts.
    if (root && seqOut > 0 && random() < 0.4)
      setPeerTurn(db, thread.id, (['working', 'stopped', 'failed', 'ended'] as const)[n4(random)]!, seqOut);
    if (random() < 0.1) continue; // no run yet
    const run = ensureRun(db, { kind: 'thread', id: thread.id }, role.id);
    const turn = insertTurn(db, run.id, 0, `token-${thread.id}`);
    const fate = random();
    if (fate < 0.08) {
      // Still working.
    } else if (fate < 0.12) markTurnStopping(db, turn, 'stopped by alice');
    else endTurn(db, turn, 'done', `answered ${i}`, null);
    if (random() < 0.2) insertInput(db, run.id, 'notice', 'a notice', 'parley', random() < 0.7);
    if (random() < 0.2) adoptWaitingTexts(db, run);
    if (random() < 0.6) closeThread(db, thread.id, 'done');
  }
  return ids;
}

const n4 = (random: () => number) => Math.floor(random() * 4);

/** A thread's summary worked out row by row, the way it was before lists were read in one statement. */
function slowSummary(inst: TestInstallation, id: number): ThreadSummary {
  const db = inst.installation.db;
  const thread = db.prepare('SELECT * FROM threads WHERE id = ?').get(id) as ThreadRow;
  const connection = getConnectionRow(db, thread.connection_id)!;
  const counts: Record<TextState, number> = {
    held: 0,
    queued: 0,
    sent: 0,
    acked: 0,
    failed: 0,
    received: 0,
    handled: 0,
  };
  for (const row of db
    .prepare('SELECT state, count(*) AS n FROM texts WHERE thread_id = ? GROUP BY state')
    .all(id) as Array<{
    state: TextState;
    n: number;
  }>)
    counts[row.state] = row.n;
  const last = db.prepare('SELECT * FROM texts WHERE thread_id = ? ORDER BY id DESC LIMIT 1').get(id) as
    TextRow | undefined;
  return {
    id,
    threadId: thread.wire_id,
    connection: { id: connection.id, name: connection.name, fingerprint: connection.fingerprint },
    localRole: thread.local_role,
    peerRole: thread.peer_role,
    root: {
      kind: thread.root_kind,
      id: thread.root_id,
      gone: thread.root_gone === 1,
      title: thread.root_gone
        ? ((
            db
              .prepare('SELECT title FROM deleted_roots WHERE kind = ? AND id = ?')
              .get(thread.root_kind, thread.root_id) as { title: string } | undefined
          )?.title ?? null)
        : null,
    },
    startedBy: thread.started_by,
    status: thread.status,
    closeReason: thread.close_reason,
    run: runSummary(db, { kind: 'thread', id }, inst.installation.runs.stoppingTurns()),
    counts,
    lastText: last
      ? {
          id: last.id,
          direction: last.direction,
          seq: last.seq,
          body: last.body,
          state: last.state,
          reason: last.reason,
          failedBy: last.failed_by,
          sentByTurnId: last.sent_by_turn,
          takenByTurnId:
            last.direction === 'in'
              ? ((db
                  .prepare(
                    "SELECT turn_id FROM inputs WHERE text_id = ? AND state != 'pending' ORDER BY id DESC LIMIT 1",
                  )
                  .pluck()
                  .get(last.id) as number | null | undefined) ?? null)
              : null,
          createdAt: last.created_at,
        }
      : null,
    peerTurn:
      thread.started_by === 'local' && thread.peer_turn
        ? { state: thread.peer_turn, seq: thread.peer_turn_seq!, at: thread.peer_turn_at! }
        : null,
    withdrawn:
      thread.withdrawn_seq === null
        ? null
        : {
            seq: thread.withdrawn_seq,
            by: thread.withdrawn_by!,
            at: thread.withdrawn_at!,
            told: thread.withdraw_untold === 0,
          },
    createdAt: thread.created_at,
  };
}

/** A list in the order people read it, worked out from each thread: working, open, closed; newest text first. */
function slowOrder(db: Db, where: string, params: unknown[]): number[] {
  const rows = db
    .prepare(
      `SELECT threads.id, threads.status,
              EXISTS (SELECT 1 FROM runs JOIN turns ON turns.run_id = runs.id
                      WHERE runs.context_kind = 'thread' AND runs.context_id = threads.id AND turns.status = 'running') AS working,
              coalesce((SELECT max(id) FROM texts WHERE texts.thread_id = threads.id), 0) AS newest
       FROM threads WHERE ${where}`,
    )
    .all(...params) as Array<{ id: number; status: string; working: number; newest: number }>;
  return rows
    .sort(
      (a, b) =>
        b.working - a.working ||
        Number(b.status === 'open') - Number(a.status === 'open') ||
        b.newest - a.newest ||
        b.id - a.id,
    )
    .map((row) => row.id);
}

/** What the store keeps of each thread's texts and each list's size is what they hold. */
function expectKeptFactsHold(db: Db) {
  const states = ['queued', 'sent', 'acked', 'failed', 'received', 'handled'];
  const kept = db
    .prepare(`SELECT id, last_text_id, ${states.map((s) => `texts_${s}`).join(', ')} FROM threads ORDER BY id`)
    .all();
  const derived = db
    .prepare(
      `SELECT id, (SELECT max(id) FROM texts WHERE thread_id = threads.id) AS last_text_id,
       ${states.map((s) => `(SELECT count(*) FROM texts WHERE thread_id = threads.id AND state = '${s}') AS texts_${s}`).join(', ')}
       FROM threads ORDER BY id`,
    )
    .all();
  expect(kept).toEqual(derived);
}

describe('thread lists, a page at a time', () => {
  let inst: TestInstallation;
  let conversation: { id: number };
  let task: { id: number };
  let lists: Array<{ name: string; filter: [where: string, params: unknown[]]; params: Record<string, unknown> }>;

  beforeAll(async () => {
    inst = await openTestInstallation({ startTurns: false });
    const role = await inst.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    conversation = await inst.owner('conversations.open', { roleId: role.id });
    const db = inst.installation.db;
    const random = numbers(42);
    db.transaction(() => {
      const bob = insertConnection(db, 'b0'.repeat(32), 'PEM', 'bob', null, 'invitation').id;
      const carol = insertConnection(db, 'c0'.repeat(32), 'PEM', 'carol', null, 'invitation').id;
      task = insertTask(db, role.id, null, 'the report', '', inst.installation.owner().id);
      const gone = insertTask(db, role.id, null, 'deleted', '', inst.installation.owner().id);
      writeThreads(db, bob, role, { kind: 'conversation', id: conversation.id }, 180, random);
      writeThreads(db, carol, role, { kind: 'conversation', id: conversation.id }, 60, random);
      writeThreads(db, bob, role, { kind: 'task', id: task.id }, 30, random);
      writeThreads(db, carol, role, null, 40, random);
      writeThreads(db, bob, role, { kind: 'task', id: gone.id }, 25, random);
      markRootGone(db, 'task', gone.id);
      keepDeletedRootTitle(db, 'task', gone.id, 'deleted');
      // Later texts in earlier agent conversations, so the newest text is not the newest row.
      for (const id of [3, 17, 40, 41, 150]) insertText(db, id, 'in', 100, 'later', 'received');
    }).immediate();
    lists = [
      {
        name: 'under a conversation',
        filter: ['root_kind = ? AND root_id = ?', ['conversation', conversation.id]],
        params: { root: { kind: 'conversation', id: conversation.id } },
      },
      {
        name: 'under a task',
        filter: ['root_kind = ? AND root_id = ?', ['task', task.id]],
        params: { root: { kind: 'task', id: task.id } },
      },
      { name: 'started by peers', filter: ["started_by = 'peer'", []], params: { peerStarted: true } },
      { name: 'whose root is gone', filter: ['root_gone = 1', []], params: { orphaned: true } },
    ];
  }, 60_000);

  afterAll(async () => {
    await inst?.close();
  });

  const page = (params: Record<string, unknown>) =>
    inst.owner('threads.page', params as never) as Promise<{ total: number; threads: ThreadSummary[] }>;

  it('reads a page in the same few statements whatever its length: no query per row', async () => {
    const root = { kind: 'conversation' as const, id: conversation.id };
    // Warm: the first call of each statement prepares it.
    await page({ root, limit: 100 });
    const ofFive = await statementsOf(() => page({ root, limit: 5 }));
    const ofHundred = await statementsOf(() => page({ root, limit: 100 }));
    const deep = await statementsOf(() => page({ root, offset: 150, limit: 100 }));
    expect(ofHundred).toBe(ofFive);
    expect(deep).toBe(ofFive);
    // The session's person, the list's root (asked once for every row it holds), the page.
    expect(ofHundred).toBeLessThanOrEqual(4);
    const list = await statementsOf(() => inst.owner('threads.list', { root }));
    expect(list).toBe(ofFive);
  });

  it('orders every list as people read it, and any offset and limit add up to the whole list', async () => {
    const db = inst.installation.db;
    for (const { name, filter, params } of lists) {
      const expected = slowOrder(db, ...filter);
      expect(expected.length, name).toBeGreaterThan(20);
      for (const limit of [1, 7, 32, 100]) {
        const ids: number[] = [];
        for (let offset = 0; offset < expected.length; offset += limit) {
          const { total, threads } = await page({ ...params, offset, limit });
          expect(total, name).toBe(expected.length);
          ids.push(...threads.map((thread) => thread.id));
        }
        expect(ids, `${name}, ${limit} at a time`).toEqual(expected);
      }
      // Past the end: nothing, and still how many there are.
      expect(await page({ ...params, offset: expected.length + 5, limit: 10 })).toEqual({
        total: expected.length,
        threads: [],
      });
    }
    // The working ones come first.
    const [first] = (await page({ root: { kind: 'conversation', id: conversation.id }, limit: 1 })).threads;
    expect(['running', 'stopping']).toContain(first!.run.state);
  });

  it('gives each row the summary its agent conversation holds, the same in a page, the whole list and on its own', async () => {
    const states = new Set<string>();
    for (const { name, params } of lists) {
      const { threads } = await page({ ...params, limit: 500 });
      const whole = await inst.owner('threads.list', params as never);
      expect(new Set(whole.map((thread) => thread.id)), name).toEqual(new Set(threads.map((thread) => thread.id)));
      const listed = new Map(whole.map((thread) => [thread.id, thread]));
      for (const thread of threads) {
        const expected = slowSummary(inst, thread.id);
        expect(thread, `${name}: ${thread.id}`).toEqual(expected);
        expect(listed.get(thread.id)).toEqual(expected);
        expect((await inst.owner('threads.get', { id: thread.id })).thread).toEqual(expected);
        states.add(thread.run.state);
      }
    }
    // Every state a run can be in was among them.
    expect([...states].sort()).toEqual(['idle', 'queued', 'running', 'stopping']);
  });

  it('keeps each agent conversation’s newest text, its counts and each list’s size as texts and threads change', async () => {
    const db = inst.installation.db;
    const root = { kind: 'conversation' as const, id: conversation.id };
    db.transaction(() => {
      const waiting = db.prepare("SELECT id FROM texts WHERE state IN ('queued', 'sent')").pluck().all() as number[];
      ackTexts(db, waiting.slice(0, 20));
      for (const id of waiting.slice(20, 30)) setTextState(db, id, 'failed', 'paused');
      const received = db.prepare("SELECT id FROM texts WHERE state = 'received' LIMIT 10").pluck().all() as number[];
      for (const id of received) setTextState(db, id, 'handled');
      insertText(db, 5, 'out', 50, 'one more', 'queued');
      markRootGone(db, 'task', task.id);
    }).immediate();
    expectKeptFactsHold(db);
    const { total, threads } = await page({ root, limit: 500 });
    expect(total).toBe(240);
    expect(threads.map((thread) => thread.id)).toEqual(
      slowOrder(db, 'root_kind = ? AND root_id = ?', [root.kind, root.id]),
    );
    for (const thread of threads.slice(0, 40)) expect(thread).toEqual(slowSummary(inst, thread.id));
    const orphaned = await page({ orphaned: true, limit: 500 });
    expect(orphaned.total).toBe(55);
    expect(orphaned.threads.map((thread) => thread.id)).toEqual(slowOrder(db, 'root_gone = 1', []));
    expect(findRun(db, { kind: 'thread', id: 5 })).toBeDefined();
  });

  it('reads an agent conversation’s latest texts, and the ones before them, across both directions', async () => {
    const db = inst.installation.db;
    const id = (
      db.prepare('SELECT id FROM threads WHERE root_kind = ? ORDER BY id LIMIT 1').get('conversation') as {
        id: number;
      }
    ).id;
    db.transaction(() => {
      // Both directions, their seqs and ids interleaved unevenly.
      let out = 200;
      let inSeq = 200;
      for (let n = 0; n < 60; n++)
        if (n % 3 === 2 || n % 7 === 0) insertText(db, id, 'in', ++inSeq, `in ${n}`, 'handled');
        else insertText(db, id, 'out', ++out, `out ${n}`, 'acked');
    }).immediate();
    const all = (
      db.prepare('SELECT id FROM texts WHERE thread_id = ? ORDER BY id').pluck().all(id) as number[]
    ).reverse();
    const read = async (textsLimit: number, textsBefore?: number) =>
      (await inst.owner('threads.get', { id, textsLimit, ...(textsBefore ? { textsBefore } : {}) })).texts.map(
        (text) => text.id,
      );
    expect(await read(10)).toEqual(all.slice(0, 10).reverse());
    // Older and older, ten at a time, to the first.
    const seen: number[] = [];
    let before: number | undefined;
    for (;;) {
      const ids = await read(10, before);
      if (ids.length === 0) break;
      seen.unshift(...ids);
      before = ids[0];
    }
    expect(seen).toEqual([...all].reverse());
    expect(await read(1000)).toEqual([...all].reverse());
  });
});
