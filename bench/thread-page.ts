// thread-page: a thread list where it gets long. An installation with 100,000 agent
// conversations and 1,000,000 texts (bench/seed-store.ts, cached between runs), opened in
// a process of its own so its memory is the installation's:
//
//   p50Ms   `threads.page` of 100 under one root (50,000 agent conversations), through the
//           app API (`installation.call`: validation, authorization, the summaries);
//   ratio   against one bare SQL statement that reads the same 100 rows' columns on the
//           same database (the columns a summary shows, by the rows' ids). Goal ≤ 3;
//   openMs  `threads.get` of the busiest agent conversation (100,000 texts), its last 100;
//   rssMb   the process's resident memory with the database open, after both. Goal ≤ 250.
//   cpuRatio the same two in CPU time (the process's, per call): steadier than wall time
//           when other work shares the cores. Reported, not a goal.
import { spawn } from 'node:child_process';
import os from 'node:os';
import type { ThreadSummary } from '../shared/domain';
import { openInstallation } from '../main/installation';
import { seededStore, type SeededStore } from './seed-store';
import { interleave, keepAlive, median, round, type Emit, type Progress } from './stats';

/** The bare statement: the same rows (by id, in the page's order) with every column their summaries show. */
const BARE_SQL = `
  SELECT threads.id, threads.wire_id, threads.connection_id, connections.name, threads.local_role, threads.peer_role,
         threads.root_kind, threads.root_id, threads.root_gone, threads.started_by, threads.status, threads.close_reason,
         threads.created_at,
         runs.id, runs.session, turns.id, turns.status, turns.attempt, turns.started_at, turns.ended_at, turns.reason,
         (SELECT count(*) FROM inputs WHERE inputs.run_id = runs.id AND inputs.state = 'pending' AND inputs.wakes = 1),
         (SELECT json_group_object(state, n) FROM
            (SELECT state, count(*) AS n FROM texts WHERE texts.thread_id = threads.id GROUP BY state)),
         last.id, last.direction, last.seq, last.body, last.state, last.reason, last.created_at, last.updated_at
  FROM json_each(?) AS page
  JOIN threads ON threads.id = page.value
  JOIN connections ON connections.id = threads.connection_id
  LEFT JOIN runs ON runs.context_kind = 'thread' AND runs.context_id = threads.id
  LEFT JOIN turns ON turns.id = (SELECT max(id) FROM turns WHERE turns.run_id = runs.id)
  LEFT JOIN texts AS last ON last.id = (SELECT max(id) FROM texts WHERE texts.thread_id = threads.id)
  ORDER BY page.key`;

const WARMUP = 3;

export interface ThreadPageFigures {
  pageMs: number[];
  bareMs: number[];
  pageCpuMs: number[];
  bareCpuMs: number[];
  deepPageMs: number[];
  openMs: number[];
  total: number;
  rows: number;
  rssMb: number;
  openInstallationMs: number;
}

/** `bench/run.js thread-page-worker DIR CONVERSATION BUSIEST ROUNDS`: measures, prints its figures as JSON. */
export async function threadPageWorker(
  dataDir: string,
  conversationId: number,
  busiestThreadId: number,
  rounds: number,
): Promise<void> {
  const t0 = performance.now();
  const inst = await openInstallation({ dataDir, startTurns: false, defaultRole: false });
  const openInstallationMs = performance.now() - t0;
  try {
    const session = { person: inst.owner() };
    const root = { kind: 'conversation' as const, id: conversationId };
    const bare = inst.db.prepare(BARE_SQL).raw();
    let total = 0;
    let ids: number[] = [];
    const cpu: Record<'page' | 'bare', number[]> = { page: [], bare: [] };
    const timed = async (fn: () => unknown, cpuOf?: number[]) => {
      const cpuStart = process.cpuUsage();
      const start = performance.now();
      await fn();
      const wall = performance.now() - start;
      const used = process.cpuUsage(cpuStart);
      cpuOf?.push((used.user + used.system) / 1000);
      return wall;
    };
    const first = (await inst.call(session, 'threads.page', { root, limit: 100 })) as {
      total: number;
      threads: ThreadSummary[];
    };
    total = first.total;
    ids = first.threads.map((thread) => thread.id);
    const samples = await interleave(
      {
        page: () => timed(() => inst.call(session, 'threads.page', { root, limit: 100 }), cpu.page),
        bare: () =>
          timed(() => {
            const rows = bare.all(JSON.stringify(ids));
            if (rows.length !== ids.length) throw new Error(`the bare statement read ${rows.length} rows`);
          }, cpu.bare),
      },
      { rounds, warmup: WARMUP },
    );
    const deep = await interleave(
      {
        deep: () =>
          timed(() => inst.call(session, 'threads.page', { root, offset: Math.floor(total / 2), limit: 100 })),
      },
      { rounds: Math.max(3, Math.round(rounds / 3)), warmup: 1 },
    );
    const open = await interleave(
      { open: () => timed(() => inst.call(session, 'threads.get', { id: busiestThreadId, textsLimit: 100 })) },
      { rounds: Math.max(3, Math.round(rounds / 3)), warmup: 1 },
    );
    const figures: ThreadPageFigures = {
      pageMs: samples.page,
      bareMs: samples.bare,
      // Without the warm-up rounds, as interleave leaves them out of the wall times.
      pageCpuMs: cpu.page.slice(WARMUP),
      bareCpuMs: cpu.bare.slice(WARMUP),
      deepPageMs: deep.deep,
      openMs: open.open,
      total,
      rows: ids.length,
      rssMb: Math.round(process.memoryUsage().rss / 2 ** 20),
      openInstallationMs,
    };
    process.stdout.write(JSON.stringify(figures));
  } finally {
    await keepAlive(() => inst.close());
  }
}

function runWorker(store: SeededStore, rounds: number): Promise<ThreadPageFigures> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        process.argv[1]!,
        'thread-page-worker',
        store.dataDir,
        String(store.conversationId),
        String(store.busiestThreadId),
        String(rounds),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) reject(new Error(`the thread-page worker failed (${code})`));
      else resolve(JSON.parse(out) as ThreadPageFigures);
    });
  });
}

export async function threadPageBench(emit: Emit, progress: Progress, options: { scale?: number } = {}): Promise<void> {
  const scale = options.scale ?? 1;
  const store = await seededStore(scale, progress);
  const figures = await runWorker(store, Math.max(10, Math.round(40 * scale)));
  if (figures.total !== store.shape.underRoot || figures.rows !== Math.min(100, store.shape.underRoot))
    throw new Error(`threads.page gave ${figures.rows} of ${figures.total}; the root holds ${store.shape.underRoot}`);
  const p50Ms = median(figures.pageMs);
  const bareMs = median(figures.bareMs);
  const ratio = p50Ms / bareMs;
  progress(
    `thread-page: page ${figures.pageMs.map(round).join(' ')}\nbench: thread-page: bare ${figures.bareMs.map(round).join(' ')}`,
  );
  emit({
    name: 'thread-page',
    scale,
    threads: store.shape.threads,
    texts: store.shape.texts,
    underRoot: store.shape.underRoot,
    p50Ms: round(p50Ms),
    bareMs: round(bareMs),
    ratio: round(ratio),
    cpuRatio: round(median(figures.pageCpuMs) / median(figures.bareCpuMs)),
    openMs: round(median(figures.openMs)),
    busiestTexts: store.shape.busiestTexts,
    rssMb: figures.rssMb,
    goal: 'ratio<=3 and rssMb<=250',
    met: ratio <= 3 && figures.rssMb <= 250,
    deepPageMs: round(median(figures.deepPageMs)),
    openInstallationMs: round(figures.openInstallationMs),
    seeded: store.cached ? 'cached' : `${store.seedSeconds} s`,
    loadAverage: round(os.loadavg()[0]!),
  });
}
