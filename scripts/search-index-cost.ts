// What the search index costs the wire's hot path: agent-conversation texts written
// into a real database file as the group commit writes them (batches of texts in one
// transaction, each text in its own savepoint), three ways —
//   plain:    no search index at all (its triggers dropped);
//   shipped:  migration 0014 as it is: the triggers only fire for rows already indexed,
//             new texts wait above the mark for a catch-up;
//   trigger:  an AFTER INSERT trigger that indexes every text in its own transaction,
//             the alternative 0014 did not take;
// and what the catch-up costs per text when it later indexes them in batches.
// Prints one JSON line of microseconds per text, best of three rounds each.
//   npx tsx scripts/search-index-cost.ts [texts=20000] [batch=100]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { indexAllWaitingRows } from '../main/search/index-catch-up';
import { openDatabase, type Db } from '../main/store/database';

const total = Number(process.argv[2] ?? 20_000);
const batch = Number(process.argv[3] ?? 100);
const words = 'the quick brown fox jumps over a lazy dog while agents ask peers for facts and numbers'.split(' ');

/** A text of 30 words, different each time. */
function body(i: number): string {
  const out: string[] = [];
  for (let w = 0; w < 30; w++) out.push(words[(i * 7 + w * 13) % words.length]! + (w % 5 === 0 ? String(i % 997) : ''));
  return out.join(' ');
}

type Way = 'plain' | 'shipped' | 'trigger';

function setUp(db: Db, way: Way): void {
  db.exec(`
    INSERT INTO installation (id, name, fingerprint) VALUES (1, 'bench', 'ff');
    INSERT INTO roles (id, name, agent) VALUES (1, 'assistant', '{"adapter":"scripted"}');
    INSERT INTO connections (id, fingerprint, cert, name) VALUES (1, 'aa', 'PEM', 'bob');
    INSERT INTO threads (id, connection_id, wire_id, local_role_id, local_role, peer_role, root_kind, root_id, started_by)
      VALUES (1, 1, 'T', 1, 'assistant', 'researcher', 'thread', 1, 'peer');
  `);
  if (way === 'plain')
    db.exec('DROP TRIGGER texts_search_insert; DROP TRIGGER texts_search_delete; DROP TRIGGER texts_search_update');
  if (way === 'trigger')
    db.exec(`
      DROP TRIGGER texts_search_insert;
      CREATE TRIGGER texts_search_insert AFTER INSERT ON texts BEGIN
        INSERT INTO texts_search (rowid, body) VALUES (new.id, new.body);
      END;
      UPDATE search_marks SET indexed_through = 1e12 WHERE source = 'texts';
    `);
}

function measure(way: Way): { write: number; catchUp: number } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-fts-cost-'));
  const db = openDatabase(path.join(dir, 'parley.db'));
  try {
    // The group commit's durability comes from its own WAL flush, off this thread.
    db.pragma('synchronous = NORMAL');
    setUp(db, way);
    const insert = db.prepare(
      "INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (1, 'in', ?, ?, 'received')",
    );
    const deliver = db.prepare("UPDATE texts SET state = 'handled' WHERE id = ?");
    // One savepoint per text, as the group commit gives each piece of work.
    const piece = db.transaction((i: number) => {
      const id = insert.run(i + 1, body(i)).lastInsertRowid;
      deliver.run(id);
    });
    const write = db.transaction((from: number) => {
      for (let i = from; i < from + batch; i++) piece(i);
    });
    let started = process.hrtime.bigint();
    for (let from = 0; from < total; from += batch) write.immediate(from);
    const writeUs = Number(process.hrtime.bigint() - started) / 1000 / total;
    started = process.hrtime.bigint();
    const indexed = way === 'shipped' ? indexAllWaitingRows(db, 500) : 0;
    const catchUpUs = indexed > 0 ? Number(process.hrtime.bigint() - started) / 1000 / indexed : 0;
    return { write: writeUs, catchUp: catchUpUs };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const rounds: Record<Way, Array<{ write: number; catchUp: number }>> = { plain: [], shipped: [], trigger: [] };
// Interleaved, so the shared machine's load falls on every way alike.
for (let round = 0; round < 3; round++)
  for (const way of ['plain', 'shipped', 'trigger'] as const) rounds[way].push(measure(way));
const best = (way: Way) => Math.min(...rounds[way].map((r) => r.write));
const result = {
  name: 'search-index-cost',
  texts: total,
  batch,
  usPerTextPlain: Number(best('plain').toFixed(1)),
  usPerTextShipped: Number(best('shipped').toFixed(1)),
  usPerTextTrigger: Number(best('trigger').toFixed(1)),
  usPerTextCatchUp: Number(Math.min(...rounds.shipped.map((r) => r.catchUp)).toFixed(1)),
  shippedOverPlain: Number((best('shipped') / best('plain')).toFixed(2)),
  triggerOverPlain: Number((best('trigger') / best('plain')).toFixed(2)),
  loadAverage: os.loadavg()[0]!.toFixed(1),
};
process.stdout.write(`${JSON.stringify(result)}\n`);
