// `approvals`: what waits for a person's word, with 100,000 approvals pending, most of
// them in what the person asking may not read. The list keeps what each person may read
// before its limit, so it must stay right (a member's one held text is in their list,
// the owner's own are in theirs) and cheap although the statement now passes over every
// pending row the person cannot read.
//
// Seeded through Parley's own queries in one transaction, in a fresh data folder:
//   - 90,000 held texts in 1,000 agent conversations under mia's conversation (a
//     member: nobody else reads them);
//   - 9,000 in 100 under the owner's conversation;
//   - 450 held incoming texts in agent conversations peers started (everyone reads them)
//     and 499 permission requests on a task (everyone), 50 in mia's conversation;
//   - last, dave's one held text, under his own conversation.
// Measured as the list is made (`pendingApprovalsFor`: the statement and the views), for
// dave and for the owner, against a baseline in the same rounds: the old list's
// statement, the 1,000 oldest pending rows with no regard to who reads them, made into
// the same views. Also through the app API (`approvals.list`, `attention.list`) for dave.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openInstallation } from '../main/installation';
import { transaction } from '../main/store/database';
import { all } from '../main/store/sql';
import { approvalView, pendingApprovalsFor } from '../main/access/pending-approvals';
import { insertApproval, type ApprovalRow } from '../main/store/queries/approvals';
import { insertConnection } from '../main/store/queries/connections';
import { insertConversation } from '../main/store/queries/conversations';
import { insertPerson } from '../main/store/queries/people';
import { insertTask } from '../main/store/queries/tasks';
import { insertText, insertThread } from '../main/store/queries/threads';
import { interleave, keepAlive, median, percentile, round, type Emit, type Progress } from './stats';
import { removeDataDir } from '../test-support/data-folder';

export async function approvalsBench(emit: Emit, progress: Progress, options: { scale?: number } = {}): Promise<void> {
  const scale = options.scale ?? 1;
  const n = (value: number) => Math.max(1, Math.round(value * scale));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-approvals-'));
  const inst = await openInstallation({ dataDir, name: 'bench', defaultRole: false, startTurns: false });
  try {
    const owner = inst.owner();
    const role = (await inst.call({ person: owner }, 'roles.create', {
      name: 'assistant',
      agent: { adapter: 'scripted' },
    })) as { id: number };
    const db = inst.db;
    const started = performance.now();
    const shape = { mias: n(1_000), perThread: 90, owners: n(100), peers: n(450), tasks: n(499) };
    const seeded = transaction(db, () => {
      const mia = insertPerson(db, 'mia', 'member');
      const dave = insertPerson(db, 'dave', 'member');
      const connection = insertConnection(db, 'bb'.repeat(32), 'PEM', 'bob', '127.0.0.1:4100', 'invitation');
      let wire = 0;
      const thread = (
        rootKind: 'conversation' | 'task' | 'thread',
        rootId: number | null,
        startedBy: 'local' | 'peer',
      ) =>
        insertThread(db, {
          connectionId: connection.id,
          wireId: String(++wire).padStart(22, 'A'),
          localRoleId: role.id,
          localRole: 'assistant',
          peerRole: `researcher${wire}`,
          rootKind,
          rootId,
          startedBy,
        });
      const held = (threadId: number, count: number, direction: 'out' | 'in') => {
        for (let seq = 1; seq <= count; seq++) {
          const textId = insertText(db, threadId, direction, seq, `held text ${seq}`, 'held');
          insertApproval(db, {
            kind: direction === 'out' ? 'outgoing' : 'incoming',
            context: { kind: 'thread', id: threadId },
            textId,
            runId: null,
          });
        }
      };
      const miasConversation = insertConversation(db, mia.id, role.id);
      for (let i = 0; i < shape.mias; i++) held(thread('conversation', miasConversation.id, 'local').id, 90, 'out');
      const ownersConversation = insertConversation(db, owner.id, role.id);
      for (let i = 0; i < shape.owners; i++) held(thread('conversation', ownersConversation.id, 'local').id, 90, 'out');
      for (let i = 0; i < shape.peers; i++) held(thread('thread', null, 'peer').id, 1, 'in');
      const task = insertTask(db, role.id, null, 'release', '', owner.id);
      for (let i = 0; i < shape.tasks; i++)
        insertApproval(db, {
          kind: 'permission',
          context: { kind: 'task', id: task.id },
          runId: null,
          title: `tool #${i}`,
        });
      for (let i = 0; i < n(50); i++)
        insertApproval(db, {
          kind: 'permission',
          context: { kind: 'conversation', id: miasConversation.id },
          runId: null,
          title: `mia's tool #${i}`,
        });
      held(thread('conversation', insertConversation(db, dave.id, role.id).id, 'local').id, 1, 'out');
      return { dave };
    });
    const pending = db.prepare("SELECT count(*) FROM approvals WHERE state = 'pending'").pluck().get() as number;
    progress(`approvals: seeded ${pending} pending in ${round((performance.now() - started) / 1000)} s`);

    // Right first: dave sees the peers' and the tasks' and his own; the owner every one but mia's and dave's, up to 1,000.
    const { dave } = seeded;
    const davesList = (await inst.call({ person: dave }, 'approvals.list', {})) as Array<{ id: number }>;
    const davesExpected = shape.peers + shape.tasks + 1;
    if (davesList.length !== Math.min(1000, davesExpected))
      throw new Error(`dave's list has ${davesList.length}, not ${Math.min(1000, davesExpected)}`);
    const lastId = db.prepare('SELECT max(id) FROM approvals').pluck().get() as number;
    if (davesExpected <= 1000 && davesList.at(-1)!.id !== lastId) throw new Error("dave's own held text is missing");
    const ownersList = (await inst.call({ person: owner }, 'approvals.list', {})) as unknown[];
    if (ownersList.length !== Math.min(1000, shape.owners * 90 + shape.peers + shape.tasks))
      throw new Error(`the owner's list has ${ownersList.length}`);

    const time = async (work: () => unknown) => {
      const from = process.hrtime.bigint();
      await work();
      return Number(process.hrtime.bigint() - from) / 1e6;
    };
    const samples = await interleave(
      {
        dave: () => time(() => pendingApprovalsFor(db, dave)),
        owner: () => time(() => pendingApprovalsFor(db, owner)),
        daveApi: () => time(() => inst.call({ person: dave }, 'approvals.list', {})),
        daveAttention: () => time(() => inst.call({ person: dave }, 'attention.list', {})),
        baseline: () =>
          time(() =>
            all<ApprovalRow>(db, "SELECT * FROM approvals WHERE state = 'pending' ORDER BY id LIMIT 1000").map((row) =>
              approvalView(db, row, owner),
            ),
          ),
      },
      { rounds: Math.max(5, Math.round(30 * scale)) },
    );
    const p50 = (name: keyof typeof samples) => median(samples[name]);
    const ratio = Math.max(p50('dave'), p50('owner')) / p50('baseline');
    emit({
      name: 'approvals',
      scale,
      pending,
      daveMs: round(p50('dave')),
      daveP99Ms: round(percentile(samples.dave, 99)),
      ownerMs: round(p50('owner')),
      daveApiMs: round(p50('daveApi')),
      daveAttentionMs: round(p50('daveAttention')),
      baselineMs: round(p50('baseline')),
      ratio: round(ratio),
      daveItems: davesList.length,
      ownerItems: ownersList.length,
      goal: 'ratio<=3 (the slower of dave and the owner against the unfiltered 1,000 oldest)',
      met: ratio <= 3,
      loadAverage: round(os.loadavg()[0]!),
    });
  } finally {
    await keepAlive(() => inst.close());
    removeDataDir(dataDir);
  }
}
