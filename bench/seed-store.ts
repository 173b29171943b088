// A large installation for the thread-page benchmark, written through Parley's own
// queries (insertThread, insertText, ensureRun, insertTurn…) in big transactions, and
// kept between runs: building it takes a while, so the data folder is cached under the
// bench's scratch folder, keyed by the schema version, this recipe's version and the
// scale. A folder without its `seed.json` (a run cut short) is built again.
//
// At scale 1: 100,000 agent conversations and 1,000,000 texts over five connections.
//   - 50,000 under one root, the owner's conversation with `assistant` (the list people
//     open), the first of them the busiest agent conversation of all: 100,000 texts;
//   - 40,000 under 400 tasks, 100 each;
//   - 10,000 that peers started (each its own root);
//   - the other 900,000 texts spread evenly, alternating a question out (acked) and an
//     answer in (handled);
//   - of those we started, only the latest per (connection, root, peer role) is open (the
//     sender key allows one), the rest closed as done; one in ten peers started closed;
//   - every agent conversation has its run with one finished turn, as after an answer.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openInstallation } from '../main/installation';
import { openDatabase, transaction, type Db } from '../main/store/database';
import { latestVersion } from '../main/store/migrate';
import { insertConnection, setPeerRoles } from '../main/store/queries/connections';
import { insertTask } from '../main/store/queries/tasks';
import { closeThread, insertText, insertThread } from '../main/store/queries/threads';
import { endTurn, ensureRun, insertTurn } from '../main/store/queries/runs';
import { keepAlive, type Progress } from './stats';
import { removeDataDir } from '../test-support/data-folder';

/** Bump when the recipe changes, so cached folders of the old recipe are not reused. */
const RECIPE = 2;
const BATCH = 20_000;

export interface SeedShape {
  threads: number;
  texts: number;
  underRoot: number;
  tasks: number;
  perTask: number;
  peerStarted: number;
  busiestTexts: number;
}

export function seedShape(scale: number): SeedShape {
  const n = (value: number) => Math.max(1, Math.round(value * scale));
  const tasks = n(400);
  const shape = {
    underRoot: n(50_000),
    tasks,
    perTask: 100,
    peerStarted: n(10_000),
    texts: n(1_000_000),
    busiestTexts: n(100_000),
  };
  return { ...shape, threads: shape.underRoot + tasks * shape.perTask + shape.peerStarted };
}

export interface SeededStore {
  dataDir: string;
  shape: SeedShape;
  /** The root the page is read under: the owner's conversation with `assistant`. */
  conversationId: number;
  /** The agent conversation with the most texts. */
  busiestThreadId: number;
  seedSeconds: number;
  cached: boolean;
}

/** The bench's scratch folder: PARLEY_BENCH_CACHE, or parley-bench-cache in the temporary folder. */
export function benchCacheDir(): string {
  return process.env.PARLEY_BENCH_CACHE ?? path.join(os.tmpdir(), 'parley-bench-cache');
}

/** A deterministic body of 40–400 characters, different per text. */
function body(i: number, kind: 'question' | 'answer'): string {
  const words = ['numbers', 'weekly', 'report', 'revenue', 'forecast', 'draft', 'review', 'risk', 'plan', 'budget'];
  const length = 40 + ((i * 7919) % 361);
  let text = `${kind} ${i}:`;
  for (let k = 0; text.length < length; k++) text += ' ' + words[(i + k * 31) % words.length];
  return text.slice(0, length);
}

export async function seededStore(scale: number, progress: Progress): Promise<SeededStore> {
  const shape = seedShape(scale);
  const dataDir = path.join(benchCacheDir(), `thread-page-schema${latestVersion}-recipe${RECIPE}-scale${scale}`);
  const marker = path.join(dataDir, 'seed.json');
  if (existsSync(marker)) {
    const saved = JSON.parse(readFileSync(marker, 'utf8')) as Omit<SeededStore, 'dataDir' | 'cached'>;
    return { ...saved, dataDir, cached: true };
  }
  // Folders of another schema or recipe will never be read again.
  const current = `thread-page-schema${latestVersion}-recipe${RECIPE}-`;
  for (const name of existsSync(benchCacheDir()) ? readdirSync(benchCacheDir()) : [])
    if (name.startsWith('thread-page-') && !name.startsWith(current))
      rmSync(path.join(benchCacheDir(), name), { recursive: true, force: true });
  removeDataDir(dataDir);
  mkdirSync(dataDir, { recursive: true });
  const started = performance.now();
  progress(`thread-page: seeding ${shape.threads} agent conversations, ${shape.texts} texts in ${dataDir}`);

  // The installation itself (identity, owner, a role and the owner's conversation with it) as people make it.
  const inst = await openInstallation({ dataDir, name: 'bench', defaultRole: false, startTurns: false });
  const owner = inst.owner();
  const session = { person: owner };
  const assistant = (await inst.call(session, 'roles.create', {
    name: 'assistant',
    agent: { adapter: 'scripted' },
  })) as { id: number; name: string };
  const conversation = (await inst.call(session, 'conversations.open', { roleId: assistant.id })) as { id: number };
  await keepAlive(() => inst.close());

  const db = openDatabase(path.join(dataDir, 'parley.db'));
  try {
    const busiestThreadId = seedRows(db, shape, { id: assistant.id, name: assistant.name }, owner.id, conversation.id);
    // No ANALYZE: installations never run it, so the planner sees here what it sees there.
    db.pragma('wal_checkpoint(TRUNCATE)');
    const seeded = {
      shape,
      conversationId: conversation.id,
      busiestThreadId,
      seedSeconds: Math.round((performance.now() - started) / 100) / 10,
    };
    writeFileSync(marker, JSON.stringify(seeded));
    progress(`thread-page: seeded in ${seeded.seedSeconds} s`);
    return { ...seeded, dataDir, cached: false };
  } finally {
    db.close();
  }
}

function seedRows(
  db: Db,
  shape: SeedShape,
  role: { id: number; name: string },
  ownerId: number,
  conversationId: number,
): number {
  const peers = ['bob', 'carol', 'dave', 'erin', 'frank'];
  const peerRoleNames = ['researcher', 'analyst', 'writer', 'reviewer'];
  const connections = transaction(db, () =>
    peers.map((name, i) => {
      const row = insertConnection(
        db,
        `seeded-${i}`.padEnd(64, '0'),
        'seeded: no certificate',
        name,
        null,
        'invitation',
      );
      setPeerRoles(
        db,
        row.id,
        peerRoleNames.map((peerRole) => ({ name: peerRole, description: `${name}'s ${peerRole}` })),
      );
      return row.id;
    }),
  );
  const tasks = transaction(db, () =>
    Array.from({ length: shape.tasks }, (_, i) => insertTask(db, role.id, null, `task ${i + 1}`, '', ownerId).id),
  );

  // Which root each agent conversation answers for, in the order they are made.
  const roots: Array<{ kind: 'conversation' | 'task' | 'thread'; id: number | null; startedBy: 'local' | 'peer' }> = [];
  for (let i = 0; i < shape.underRoot; i++)
    roots.push({ kind: 'conversation', id: conversationId, startedBy: 'local' });
  for (const task of tasks)
    for (let i = 0; i < shape.perTask; i++) roots.push({ kind: 'task', id: task, startedBy: 'local' });
  for (let i = 0; i < shape.peerStarted; i++) roots.push({ kind: 'thread', id: null, startedBy: 'peer' });
  // Interleave the groups so ids and activity are mixed as they would be over time,
  // except the busiest one, which comes first (its texts are the oldest).
  const order = [0, ...shuffle(roots.length - 1).map((i) => i + 1)];

  const otherTexts = shape.texts - shape.busiestTexts;
  const perThread = Math.floor(otherTexts / (shape.threads - 1));
  let extra = otherTexts - perThread * (shape.threads - 1);
  let textNo = 0;
  let busiestThreadId = 0;
  let done = 0;
  /** The open agent conversation per sender key: a new one on the same key closes it first. */
  const openByKey = new Map<string, number>();
  for (let from = 0; from < order.length; from += BATCH) {
    transaction(db, () => {
      for (const index of order.slice(from, from + BATCH)) {
        const root = roots[index]!;
        const k = done++;
        const connectionId = connections[k % connections.length]!;
        const peerRole = peerRoleNames[Math.floor(k / connections.length) % peerRoleNames.length]!;
        const key = `${connectionId} ${root.kind} ${root.id} ${peerRole}`;
        if (root.startedBy === 'local' && openByKey.has(key)) closeThread(db, openByKey.get(key)!, 'done');
        const thread = insertThread(db, {
          connectionId,
          wireId: `seeded-${String(k).padStart(8, '0')}`,
          localRoleId: role.id,
          localRole: role.name,
          peerRole,
          rootKind: root.kind,
          rootId: root.id,
          startedBy: root.startedBy,
        });
        if (k === 0) busiestThreadId = thread.id;
        let count = k === 0 ? shape.busiestTexts : perThread;
        if (k > 0 && extra > 0) {
          count++;
          extra--;
        }
        // A peer-started one begins with the peer's text; a local one with ours.
        const first = root.startedBy === 'peer' ? 'in' : 'out';
        for (let n = 0; n < count; n++) {
          const direction = n % 2 === 0 ? first : first === 'in' ? 'out' : 'in';
          const seq = Math.floor(n / 2) + 1;
          insertText(
            db,
            thread.id,
            direction,
            seq,
            body(textNo++, direction === 'out' ? 'question' : 'answer'),
            direction === 'out' ? 'acked' : 'handled',
          );
        }
        const run = ensureRun(db, { kind: 'thread', id: thread.id }, role.id);
        const turn = insertTurn(db, run.id, 0, `seeded-turn-${thread.id}`);
        endTurn(db, turn, 'done', `reported the answer of thread ${thread.id}`, null);
        if (root.startedBy === 'local') openByKey.set(key, thread.id);
        else if (k % 10 === 9) closeThread(db, thread.id, 'done');
      }
    });
  }
  return busiestThreadId;
}

/** 0..n-1 in a fixed pseudo-random order. */
function shuffle(n: number): number[] {
  const values = Array.from({ length: n }, (_, i) => i);
  let seed = 0x2545f491;
  for (let i = n - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    const j = seed % (i + 1);
    [values[i], values[j]] = [values[j]!, values[i]!];
  }
  return values;
}
