// The hot queries of agent conversations — every text, ack and turn runs them — use
// an index for the big tables (texts, inputs, turns, threads): their cost follows what
// waits, never the history. So do the reads people make of them, a thread list's page
// and an agent conversation's latest texts: their cost follows the page, never the list
// or the thread. Pinned with EXPLAIN QUERY PLAN on the statements the real functions
// prepare, with the parameters they bind.
import type Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { scratchDatabase } from '../../../test-support/scratch-database';
import { pendingApprovalRows } from '../../access/pending-approvals';
import { WireCounters } from '../../engine/wire-counters';
import type { Db } from '../database';
import {
  dropUntakenIncoming,
  cancelContextApprovals,
  cancelTextApprovals,
  cancelTurnApprovals,
  getApproval,
  insertApproval,
  pendingPermissionCounts,
  settleApproval,
} from './approvals';
import { conversationAsks, rootAsks } from './asks';
import { insertConnection } from './connections';
import { insertRole } from './roles';
import {
  ensureRun,
  insertInput,
  insertTurn,
  lastTurnStopped,
  pendingInputs,
  runnableRuns,
  runSummary,
  takeInputs,
} from './runs';
import { listThreads, pageThreads, threadListRow } from './thread-lists';
import {
  ackTexts,
  heldIncoming,
  heldIncomingOfThread,
  insertText,
  failText,
  insertThread,
  lastSeq,
  lastText,
  listTexts,
  lastSeqTakenBy,
  openLocalThread,
  outgoingWaiting,
  setPeerTurn,
  threadByWireId,
  undeliveredHeads,
  unsentTextsOfThread,
  waitingOutgoing,
} from './threads';

const BIG_TABLES = ['texts', 'inputs', 'turns', 'threads', 'runs', 'approvals'];

interface Captured {
  sql: string;
  params: unknown[];
}

/** Runs `work`, recording every statement it prepares and what it binds first. */
function capture(db: Db, work: () => void): Captured[] {
  const seen = new Map<string, Captured>();
  const prepare = db.prepare.bind(db);
  const wrap = (sql: string, statement: Database.Statement): Database.Statement =>
    new Proxy(statement, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (typeof value !== 'function') return value;
        if (key === 'all' || key === 'get' || key === 'run' || key === 'iterate')
          return (...params: unknown[]) => {
            if (!seen.has(sql)) seen.set(sql, { sql, params });
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
  (db as { prepare: (sql: string) => Database.Statement }).prepare = (sql: string) => wrap(sql, prepare(sql));
  try {
    work();
  } finally {
    (db as { prepare: (sql: string) => Database.Statement }).prepare = prepare;
  }
  return [...seen.values()];
}

interface PlanLine {
  id: number;
  parent: number;
  detail: string;
}
const planOf = (db: Db, { sql, params }: Captured) =>
  db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as PlanLine[];

/**
 * How a statement reads `index`: the plan lines that search or scan it, each with
 * whether the rows it gives are sorted again after (a temporary b-tree for ORDER BY in
 * the same subquery) — which for a list means sorting every row of the list.
 */
function readsOf(db: Db, statement: Captured, index: string) {
  const plan = planOf(db, statement);
  return plan
    .filter((line) => /^(SEARCH|SCAN) \w+ USING (COVERING )?INDEX (\w+)/.exec(line.detail)?.[3] === index)
    .map((line) => ({
      detail: line.detail,
      sortedAfter: plan.some(
        (other) => other.parent === line.parent && other.detail === 'USE TEMP B-TREE FOR ORDER BY',
      ),
    }));
}

/** Plan lines that read a big table from start to end. */
function fullScans(db: Db, statement: Captured): string[] {
  return planOf(db, statement)
    .map((row) => row.detail)
    .filter((detail) => {
      const match = /^SCAN (\w+)/.exec(detail);
      return (
        match !== null &&
        BIG_TABLES.includes(match[1]!) &&
        !/USING (COVERING )?INDEX|USING INTEGER PRIMARY KEY/.test(detail)
      );
    });
}

describe('query plans of the hot paths', () => {
  let db: Db;
  scratchDatabase('plans', (opened) => {
    // A fresh database for every test: statements are prepared (and so captured) anew.
    db = opened;
  });

  function seed() {
    const connection = insertConnection(db, 'ff'.repeat(32), 'PEM', 'bob', '127.0.0.1:4100', 'invitation');
    const role = insertRole(db, 'assistant', '', { adapter: 'scripted' });
    const local = insertThread(db, {
      connectionId: connection.id,
      wireId: 'L'.repeat(22),
      localRoleId: role.id,
      localRole: 'assistant',
      peerRole: 'researcher',
      rootKind: 'task',
      rootId: 1,
      startedBy: 'local',
    });
    const peer = insertThread(db, {
      connectionId: connection.id,
      wireId: 'P'.repeat(22),
      localRoleId: role.id,
      localRole: 'assistant',
      peerRole: 'researcher',
      rootKind: 'thread',
      rootId: null,
      startedBy: 'peer',
    });
    return { connection, role, local, peer };
  }

  it('for a text sent and acked: no full scan of texts or threads', () => {
    const { connection, role, local } = seed();
    const counters = new WireCounters(db);
    const captured = capture(db, () => {
      threadByWireId(db, connection.id, local.wire_id);
      openLocalThread(db, connection.id, 'task', 1, role.id, 'researcher');
      lastSeq(db, local.id, 'out');
      counters.overBudget(local.id, 0);
      counters.outgoingFull(connection.id, 0);
      counters.countUndelivered(local.id);
      const id = insertText(db, local.id, 'out', 1, 'hi', 'sent');
      insertText(db, local.id, 'out', 2, 'next', 'queued');
      ackTexts(db, [id]);
      counters.nextUndelivered(local.id);
      undeliveredHeads(db, connection.id);
      outgoingWaiting(db, connection.id);
      waitingOutgoing(db, connection.id);
      unsentTextsOfThread(db, local.id);
    });
    expect(captured.length).toBeGreaterThan(8);
    for (const statement of captured) expect(fullScans(db, statement), statement.sql).toEqual([]);
  });

  it('for a text received and taken by a turn: no full scan of texts, inputs, turns or runs', () => {
    const { connection, role, peer } = seed();
    const counters = new WireCounters(db);
    const captured = capture(db, () => {
      counters.incomingFull(connection.id, 0);
      lastSeq(db, peer.id, 'in');
      insertText(db, peer.id, 'in', 1, 'question', 'received');
      const run = ensureRun(db, { kind: 'thread', id: peer.id }, role.id);
      insertInput(db, run.id, 'notice', 'a notice', 'parley', true);
      runnableRuns(db, 4);
      lastTurnStopped(db, run.id);
      pendingInputs(db, run);
      runSummary(db, { kind: 'thread', id: peer.id });
    });
    expect(captured.length).toBeGreaterThan(6);
    for (const statement of captured) expect(fullScans(db, statement), statement.sql).toEqual([]);
  });

  it('for a page of a thread list: its rows come off the list’s index in order, each with its summary, and no full scan', () => {
    const { local, peer } = seed();
    insertText(db, local.id, 'out', 1, 'question', 'acked');
    insertText(db, peer.id, 'in', 1, 'question', 'received');
    const root = { kind: 'task' as const, id: 1 };
    const pages = {
      threads_root: capture(db, () => pageThreads(db, { root }, 0, 100))[0]!,
      threads_peer_started: capture(db, () => pageThreads(db, { peerStarted: true }, 100, 100))[0]!,
      threads_orphaned: capture(db, () => pageThreads(db, { orphaned: true }, 0, 50))[0]!,
    };
    for (const [index, statement] of Object.entries(pages)) {
      expect(readsOf(db, statement, index), `${index}: ${statement.sql}`).toEqual([
        { detail: expect.stringMatching(/USING COVERING INDEX/) as unknown, sortedAfter: false },
      ]);
      expect(fullScans(db, statement), statement.sql).toEqual([]);
    }
    // A whole list, one agent conversation, and their texts: through an index too.
    const others = capture(db, () => {
      listThreads(db, { root });
      listThreads(db, { peerStarted: true });
      listThreads(db, { orphaned: true });
      threadListRow(db, peer.id);
      lastText(db, local.id);
    });
    expect(others.length).toBe(5);
    for (const statement of others) expect(fullScans(db, statement), statement.sql).toEqual([]);
  });

  it('for an agent conversation’s latest texts: each direction’s newest off the (thread, direction, seq) index, never a sort of the thread', () => {
    const { local } = seed();
    insertText(db, local.id, 'out', 1, 'question', 'acked');
    const [statement] = capture(db, () => listTexts(db, local.id, 100, 1_000));
    expect(readsOf(db, statement!, 'sqlite_autoindex_texts_1')).toEqual([
      { detail: expect.stringContaining('(thread_id=? AND direction=?)') as unknown, sortedAfter: false },
      { detail: expect.stringContaining('(thread_id=? AND direction=?)') as unknown, sortedAfter: false },
    ]);
    // The turn that took each incoming text: its input, by the text.
    const inputReads = readsOf(db, statement!, 'inputs_text');
    expect(inputReads.length).toBeGreaterThan(0);
    for (const read of inputReads) expect(read.detail).toMatch(/^SEARCH inputs USING INDEX inputs_text \(text_id=\?\)/);
    expect(fullScans(db, statement!)).toEqual([]);
  });

  it('for the asks of a conversation or a task: the agent conversations started here under the root off their own index, of each only the texts a turn sent since the page’s first line', () => {
    const { connection, role } = seed();
    const thread = insertThread(db, {
      connectionId: connection.id,
      wireId: 'C'.repeat(22),
      localRoleId: role.id,
      localRole: 'assistant',
      peerRole: 'researcher',
      rootKind: 'conversation',
      rootId: 1,
      startedBy: 'local',
    });
    const run = ensureRun(db, { kind: 'conversation', id: 1 }, role.id);
    const turn = insertTurn(db, run.id, 0, 'hash');
    const ask = insertText(db, thread.id, 'out', 1, 'numbers?', 'acked', turn);
    insertText(db, thread.id, 'in', 1, 'here', 'handled');
    const captured = capture(db, () => {
      expect(conversationAsks(db, 1, null).map((a) => a.textId)).toEqual([ask]);
      expect(conversationAsks(db, 1, '2000-01-01T00:00:00.000Z').map((a) => a.textId)).toEqual([ask]);
      expect(rootAsks(db, 'task', 1, null)).toEqual([]);
    });
    // One statement for both kinds of root and either page.
    expect(captured).toHaveLength(1);
    const statement = captured[0]!;
    expect(fullScans(db, statement)).toEqual([]);
    // The root's agent conversations without a read of their rows (a root may hold 50,000)…
    const threadReads = readsOf(db, statement, 'threads_local_root').map((read) => read.detail);
    expect(threadReads).toHaveLength(1);
    expect(threadReads[0]).toMatch(
      /^SEARCH threads USING COVERING INDEX threads_local_root \(root_kind=\? AND root_id=\?\)/,
    );
    // …and of each only the asks from the page's first line on, not every text it holds.
    const textReads = readsOf(db, statement, 'texts_asks').map((read) => read.detail);
    expect(textReads).toHaveLength(1);
    expect(textReads[0]).toMatch(/^SEARCH texts USING INDEX texts_asks \(thread_id=\? AND created_at>\?\)/);
  });

  it('for the state of a turn, told by the side that works and kept by the side that asked: no full scan', () => {
    const { role, local, peer } = seed();
    const captured = capture(db, () => {
      insertText(db, peer.id, 'in', 1, 'question', 'received');
      const run = ensureRun(db, { kind: 'thread', id: peer.id }, role.id);
      const turn = insertTurn(db, run.id, 0, 'hash');
      takeInputs(
        db,
        turn,
        pendingInputs(db, run).map((input) => input.id),
      );
      lastSeqTakenBy(db, turn);
      setPeerTurn(db, local.id, 'working', 1);
      failText(db, insertText(db, local.id, 'out', 1, 'hi', 'sent'), 'paused', 'us');
    });
    expect(captured.length).toBeGreaterThan(5);
    for (const statement of captured) expect(fullScans(db, statement), statement.sql).toEqual([]);
  });

  it('for a text that waits behind a held one: the held ones are read by agent conversation and seq', () => {
    const { role, peer } = seed();
    const run = ensureRun(db, { kind: 'thread', id: peer.id }, role.id);
    insertText(db, peer.id, 'in', 1, 'first', 'held');
    insertText(db, peer.id, 'in', 2, 'second', 'received');
    const captured = capture(db, () => {
      runnableRuns(db, 10);
      pendingInputs(db, run);
    });
    for (const statement of captured) expect(fullScans(db, statement), statement.sql).toEqual([]);
    const waiting = captured.filter((statement) => statement.sql.includes('earlier.seq < texts.seq'));
    expect(waiting).toHaveLength(2);
    for (const statement of waiting)
      expect(readsOf(db, statement, 'texts_held_in').map((read) => read.detail)).toEqual([
        'SEARCH earlier USING COVERING INDEX texts_held_in (thread_id=? AND seq<?)',
      ]);
    expect(runnableRuns(db, 10)).toEqual([]);
  });

  it('for a text held for a person and decided: no full scan of texts or approvals', () => {
    const { connection, role, local, peer } = seed();
    const run = ensureRun(db, { kind: 'thread', id: peer.id }, role.id);
    const captured = capture(db, () => {
      const out = insertText(db, local.id, 'out', 1, 'may I?', 'held');
      const into = insertText(db, peer.id, 'in', 1, 'let me in', 'held');
      const id = insertApproval(db, {
        kind: 'outgoing',
        context: { kind: 'thread', id: local.id },
        textId: out,
        runId: run.id,
      });
      insertApproval(db, { kind: 'incoming', context: { kind: 'thread', id: peer.id }, textId: into, runId: run.id });
      pendingApprovalRows(db, { id: 1, kind: 'owner' });
      pendingApprovalRows(db, { id: 2, kind: 'member' });
      getApproval(db, id);
      settleApproval(db, id, 'approved', { id: null, name: 'alice' });
      heldIncoming(db, connection.id);
      heldIncomingOfThread(db, peer.id);
      cancelTextApprovals(db, [into], 'revoke');
      cancelTurnApprovals(db, 1, 'stopped');
      pendingPermissionCounts(db, 1, run.id);
      cancelContextApprovals(db, { kind: 'conversation', id: 1 }, 'deleted');
    });
    expect(captured.length).toBeGreaterThan(8);
    for (const statement of captured) expect(fullScans(db, statement), statement.sql).toEqual([]);
  });

  // Searching a connection's agent conversations and then each one's texts is no full scan,
  // but it reads the connection's whole history: half a second at 200,000 texts, for a
  // queue-limit check every hundred sends, each connection summary and each reconnect.
  it('for what waits on a whole connection: the texts come off the waiting index, never each agent conversation’s history', () => {
    const { connection, local, peer } = seed();
    insertText(db, local.id, 'out', 1, 'on the wire', 'sent');
    insertText(db, peer.id, 'in', 1, 'not taken yet', 'received');
    const counters = new WireCounters(db);
    const captured = capture(db, () => {
      counters.outgoingFull(connection.id, 0);
      counters.incomingFull(connection.id, 0);
      outgoingWaiting(db, connection.id);
      waitingOutgoing(db, connection.id);
      heldIncoming(db, connection.id);
      undeliveredHeads(db, connection.id);
      dropUntakenIncoming(db, connection.id, 'revoke', 'revoked');
    });
    const wide = captured.filter((statement) => /threads\.connection_id = \?/.test(statement.sql));
    expect(wide).toHaveLength(6);
    for (const statement of wide) {
      const textsReads = planOf(db, statement)
        .map((line) => line.detail)
        .filter((detail) => /^(SEARCH|SCAN) texts /.test(detail));
      expect(textsReads, statement.sql).toEqual(['SEARCH texts USING INDEX texts_waiting (state=?)']);
    }
  });
});
