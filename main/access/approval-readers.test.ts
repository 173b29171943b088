// The approvals list keeps what its viewer may read in SQL, before its limit: the SQL
// form of the rule agrees with ./rules.ts for every place an approval can wait, a flood
// of rows others read leaves a viewer's own in the list, and the statement's plan is
// pinned (the pending index, in id order, each join a primary-key lookup). A real
// SQLite file, the store's own writes.
import { describe, expect, it } from 'vitest';
import { scratchDatabase } from '../../test-support/scratch-database';
import type { Db } from '../store/database';
import { insertApproval, type ApprovalRow } from '../store/queries/approvals';
import { PENDING_FOR_VIEWER, pendingApprovalRows } from './pending-approvals';
import { insertConnection } from '../store/queries/connections';
import { insertConversation } from '../store/queries/conversations';
import { insertPerson } from '../store/queries/people';
import { insertRole } from '../store/queries/roles';
import { insertTask } from '../store/queries/tasks';
import { insertThread } from '../store/queries/threads';
import { APPROVAL_AUDIENCE, APPROVAL_PLACE_JOINS, EVERYONE, OWNERS } from './approval-readers';
import { approvalTarget } from './lookup';
import { audienceOf, decide, type Audience, type Viewer } from './rules';

let db: Db;
scratchDatabase('approval-readers', (opened) => (db = opened));

const encoded = (audience: Audience): number =>
  audience === 'everyone' ? EVERYONE : audience === 'owners' ? OWNERS : audience.personId;

function seed() {
  const owner = insertPerson(db, 'alice', 'owner');
  const mia = insertPerson(db, 'mia', 'member');
  const dave = insertPerson(db, 'dave', 'member');
  const role = insertRole(db, 'assistant', '', { adapter: 'scripted' });
  const connection = insertConnection(db, 'ee'.repeat(32), 'PEM', 'bob', '127.0.0.1:4100', 'invitation');
  let wire = 0;
  const thread = (rootKind: 'conversation' | 'task' | 'thread', rootId: number | null, startedBy: 'local' | 'peer') =>
    insertThread(db, {
      connectionId: connection.id,
      wireId: String(++wire).padStart(22, 'W'),
      localRoleId: role.id,
      localRole: 'assistant',
      peerRole: `researcher${wire}`,
      rootKind,
      rootId,
      startedBy,
    });
  return { owner, mia, dave, role, thread };
}

describe('who reads a pending approval, in SQL (DESIGN §11.9, §7)', () => {
  it('agrees with the access rules for every place an approval can wait', () => {
    const { owner, mia, dave, role, thread } = seed();
    const ownersConversation = insertConversation(db, owner.id, role.id);
    const miasConversation = insertConversation(db, mia.id, role.id);
    const task = insertTask(db, role.id, null, 'report', '', mia.id);
    const peerStarted = thread('thread', null, 'peer');
    const goneRoot = thread('thread', null, 'peer');
    db.prepare('UPDATE threads SET root_gone = 1 WHERE id = ?').run(goneRoot.id);
    const localSelf = thread('thread', null, 'local');
    const places: Array<{ kind: 'conversation' | 'task' | 'thread'; id: number }> = [
      { kind: 'conversation', id: ownersConversation.id },
      { kind: 'conversation', id: miasConversation.id },
      { kind: 'conversation', id: 9_999 },
      { kind: 'task', id: task.id },
      { kind: 'task', id: 9_999 },
      { kind: 'thread', id: 9_999 },
      ...[
        thread('conversation', miasConversation.id, 'local'),
        thread('conversation', 9_999, 'local'),
        thread('task', task.id, 'local'),
        thread('task', 9_999, 'local'),
        peerStarted,
        goneRoot,
        localSelf,
        thread('thread', peerStarted.id, 'local'),
        thread('thread', goneRoot.id, 'local'),
        thread('thread', localSelf.id, 'local'),
        thread('thread', 9_999, 'local'),
      ].map((row) => ({ kind: 'thread' as const, id: row.id })),
    ];
    for (const context of places) insertApproval(db, { kind: 'permission', context, runId: null, title: 'x' });
    const rows = db
      .prepare(`SELECT a.*, ${APPROVAL_AUDIENCE} AS audience FROM approvals a ${APPROVAL_PLACE_JOINS} ORDER BY a.id`)
      .all() as Array<ApprovalRow & { audience: number }>;
    expect(rows).toHaveLength(places.length);
    for (const row of rows)
      expect([row.context_kind, row.context_id, row.audience]).toEqual([
        row.context_kind,
        row.context_id,
        encoded(audienceOf(approvalTarget(db, row))),
      ]);
    // And each viewer's list is exactly what the rules let them read.
    for (const viewer of [owner, mia, dave] as Viewer[])
      expect(pendingApprovalRows(db, viewer).map((row) => row.id)).toEqual(
        rows.filter((row) => decide(viewer, approvalTarget(db, row), 'read').allowed).map((row) => row.id),
      );
  });

  it('keeps a viewer’s own behind 1,010 rows they may not read, with the pending index in id order', () => {
    const { owner, mia, role, thread } = seed();
    const miasConversation = insertConversation(db, mia.id, role.id);
    const ownersConversation = insertConversation(db, owner.id, role.id);
    const insertMany = db.transaction(() => {
      for (let i = 0; i < 1_010; i++)
        insertApproval(db, {
          kind: 'permission',
          context: { kind: 'conversation', id: miasConversation.id },
          runId: null,
          title: `deploy #${i}`,
        });
    });
    insertMany();
    const own = insertApproval(db, {
      kind: 'permission',
      context: { kind: 'conversation', id: ownersConversation.id },
      runId: null,
      title: 'mine',
    });
    const peers = insertApproval(db, {
      kind: 'permission',
      context: { kind: 'thread', id: thread('thread', null, 'peer').id },
      runId: null,
      title: 'for a peer',
    });
    expect(pendingApprovalRows(db, owner).map((row) => row.id)).toEqual([own, peers]);
    expect(pendingApprovalRows(db, mia)).toHaveLength(1_000);
    expect(pendingApprovalRows(db, mia, 2_000).at(-1)!.id).toBe(peers);

    const plan = (
      db.prepare(`EXPLAIN QUERY PLAN ${PENDING_FOR_VIEWER}`).all(0, -1, owner.id, 1000) as Array<{ detail: string }>
    ).map((line) => line.detail);
    // The rows in id order through the pending index, each checked against the readable
    // places; those decided once each, every join a lookup by primary key.
    expect(plan[0]).toBe('SEARCH a USING INDEX approvals_pending (state=?)');
    expect(plan).not.toContain('USE TEMP B-TREE FOR ORDER BY');
    const joins = plan.filter((line) => /^(SEARCH|SCAN) (pc|pk|pt|rc|rk|rt) /.test(line));
    expect(joins).toHaveLength(6);
    for (const line of joins) expect(line).toMatch(/ USING INTEGER PRIMARY KEY \(rowid=\?\) LEFT-JOIN$/);
    expect(plan.filter((line) => /^SCAN approvals\b/.test(line))).toEqual([]);
    expect(plan).toContain('SEARCH approvals USING COVERING INDEX approvals_pending_place (state=?)');
  });
});
