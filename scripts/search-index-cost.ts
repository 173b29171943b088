// What the search index costs the wire's hot path: inserting agent-conversation texts
// into a real database file, with the index's triggers and without them, in batches as
// the group commit writes them. Prints one JSON line: microseconds per text each way.
//   npx tsx scripts/search-index-cost.ts [texts=20000] [batch=100]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../main/store/database';

const total = Number(process.argv[2] ?? 20_000);
const batch = Number(process.argv[3] ?? 100);
const words = 'the quick brown fox jumps over a lazy dog while agents ask peers for facts and numbers'.split(' ');

/** A text of about 30 words, different each time. */
function body(i: number): string {
  const out: string[] = [];
  for (let w = 0; w < 30; w++) out.push(words[(i * 7 + w * 13) % words.length]! + (w % 5 === 0 ? String(i % 997) : ''));
  return out.join(' ');
}

function setUp(db: Db): number {
  db.exec(`
    INSERT INTO installation (id, name, fingerprint) VALUES (1, 'bench', 'ff');
    INSERT INTO roles (id, name, agent) VALUES (1, 'assistant', '{"adapter":"scripted"}');
    INSERT INTO connections (id, fingerprint, cert, name) VALUES (1, 'aa', 'PEM', 'bob');
  `);
  const threadColumn = (db.prepare('PRAGMA table_info(threads)').all() as Array<{ name: string }>).some(
    (c) => c.name === 'wire_id',
  )
    ? 'wire_id'
    : 'thread_id';
  db.prepare(
    `INSERT INTO threads (id, connection_id, ${threadColumn}, local_role_id, local_role, peer_role, root_kind, root_id, started_by)
     VALUES (1, 1, 'T', 1, 'assistant', 'researcher', 'thread', 1, 'peer')`,
  ).run();
  return 1;
}

function measure(indexed: boolean, synchronous: 'FULL' | 'OFF'): number {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-fts-cost-'));
  const db = openDatabase(path.join(dir, 'parley.db'));
  try {
    db.pragma(`synchronous = ${synchronous}`);
    const thread = setUp(db);
    if (!indexed) db.exec('DROP TRIGGER texts_search_insert');
    const insert = db.prepare(
      "INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (?, 'in', ?, ?, 'received')",
    );
    const write = db.transaction((from: number) => {
      for (let i = from; i < from + batch; i++) insert.run(thread, i + 1, body(i));
    });
    const started = process.hrtime.bigint();
    for (let from = 0; from < total; from += batch) write.immediate(from);
    const elapsed = Number(process.hrtime.bigint() - started) / 1000;
    return elapsed / total;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const result: Record<string, number | string> = { name: 'search-index-cost', texts: total, batch };
for (const sync of ['OFF', 'FULL'] as const) {
  // Alternate, best of three each, so the shared machine's load touches both alike.
  const plain: number[] = [];
  const indexed: number[] = [];
  for (let round = 0; round < 3; round++) {
    plain.push(measure(false, sync));
    indexed.push(measure(true, sync));
  }
  const p = Math.min(...plain);
  const x = Math.min(...indexed);
  result[`sync${sync}_usPerTextPlain`] = Number(p.toFixed(2));
  result[`sync${sync}_usPerTextIndexed`] = Number(x.toFixed(2));
  result[`sync${sync}_usPerTextIndex`] = Number((x - p).toFixed(2));
  result[`sync${sync}_ratio`] = Number((x / p).toFixed(2));
}
process.stdout.write(`${JSON.stringify(result)}\n`);
