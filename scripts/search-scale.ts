// How long `search` takes over many agent-conversation texts: TEXTS texts (10 per
// agent conversation) written into a real database file, indexed, then searched for a
// word in nearly every text, a word in a few, and a word in none. Prints one JSON line.
//   npx tsx scripts/search-scale.ts [texts=100000]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Person } from '../shared/domain';
import { searchHandlers } from '../main/api/search-handlers';
import { indexAllWaitingRows } from '../main/search/index-catch-up';
import { openDatabase } from '../main/store/database';

const total = Number(process.argv[2] ?? 100_000);
const words = 'the quick brown fox jumps over a lazy dog while agents ask peers for facts and numbers'.split(' ');
const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-search-scale-'));
const db = openDatabase(path.join(dir, 'parley.db'));
try {
  db.pragma('synchronous = OFF');
  db.exec(`
    INSERT INTO installation (id, name, fingerprint) VALUES (1, 'bench', 'ff');
    INSERT INTO people (id, name, kind) VALUES (1, 'ann', 'owner');
    INSERT INTO roles (id, name, agent) VALUES (1, 'assistant', '{"adapter":"scripted"}');
    INSERT INTO connections (id, fingerprint, cert, name) VALUES (1, 'aa', 'PEM', 'bob');
  `);
  const thread = db.prepare(
    `INSERT INTO threads (id, connection_id, wire_id, local_role_id, local_role, peer_role, root_kind, root_id, started_by)
     VALUES (?, 1, ?, 1, 'assistant', 'researcher', 'thread', ?, 'peer')`,
  );
  const text = db.prepare(
    "INSERT INTO texts (thread_id, direction, seq, body, state) VALUES (?, 'in', ?, ?, 'handled')",
  );
  db.transaction(() => {
    for (let t = 1; t <= total / 10; t++) {
      thread.run(t, `T${t}`, t);
      for (let s = 1; s <= 10; s++) {
        const body = Array.from({ length: 20 }, (_, w) => {
          const word = words[(t * 7 + s * 3 + w * 13) % words.length]!;
          return w % 4 === 0 ? `${word}${(t * s) % 5003}` : word;
        });
        if ((t * 10 + s) % 10_000 === 0) body.push('marmot');
        text.run(t, s, body.join(' '));
      }
    }
  })();
  let started = performance.now();
  indexAllWaitingRows(db);
  const result: Record<string, number | string> = {
    name: 'search-scale',
    texts: total,
    indexMs: Math.round(performance.now() - started),
  };
  const owner = { id: 1, kind: 'owner' } as Person;
  for (const [label, query] of [
    ['common', 'the'],
    ['prefix', 'numb'],
    ['rare', 'marmot'],
    ['none', 'zebra'],
  ] as const) {
    const times: number[] = [];
    let hits = 0;
    for (let round = 0; round < 3; round++) {
      started = performance.now();
      hits = (
        searchHandlers.search({ services: { db }, person: owner } as never, { query, limit: 20 }) as { hits: unknown[] }
      ).hits.length;
      times.push(performance.now() - started);
    }
    result[`${label}Ms`] = Math.round(Math.min(...times));
    result[`${label}Hits`] = hits;
  }
  result.loadAverage = os.loadavg()[0]!.toFixed(1);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  db.close();
  rmSync(dir, { recursive: true, force: true });
}
