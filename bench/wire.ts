// The wire benchmark: two installations in separate processes (the wire peer
// driver, test-support/wire-peer.ts), texts sent through the engine's real send path
// (`ConnectionEngine.sendAs`, what `parley send` runs) from N agent conversations at
// once, each committed by the receiving engine before its ack — against raw `ws`
// stop-and-wait between two processes on the same machine, in the same run.
//
// Parley: alice's role `source` has N tasks (N roots, so N agent conversations) and
// sends to bob/sink. Each agent conversation sends its next text when the previous one
// is acked (the text row committed as `acked` at alice): one text in flight per agent
// conversation, like the baseline. Latency is sendAs called → the ack committed. bob
// runs with turns disabled: its inputs commit and wait, no agent starts. Both
// databases synchronous=FULL (the store's setting), WAL, on the same disk.
//
// Baseline: a `ws` server process answering each message with an ack, and a client
// process keeping one message in flight per "thread" over one connection (Parley keeps
// one connection per peer), frames of the same JSON shape and size, no database. The
// ratio's baseline is `wss` (TLS 1.3, self-signed: Parley's own transport), which here is
// also the faster of the two — Node's TLS layer coalesces small writes, plain `ws` makes
// one syscall per message; the plain figure is reported alongside as baselinePlainPerSec.
// The machine's speed drifts from one second to the next (shared cores), so wss is measured
// just before and just after Parley and the ratio uses their mean; both are reported.
//
// A third figure, `storePerSec`, is the same durable work through Parley's store and group
// commit with no engine at all (bench/wire-store.ts), measured in turns with Parley (five
// rounds each, each going first in turn): `ratioStore`, the median of each round's Parley
// ÷ the store run beside it, is what the engine costs, and the store's own ratio to wss
// (`storeRatio`) bounds what any engine on this store could reach here. A fourth,
// `a2aPerSec`, is the peer people would pick instead: an A2A server and client of the
// official JS SDK echoing messages, in memory, over plain HTTP (bench/wire-a2a.ts);
// `ratioA2a` is Parley ÷ it.
//
// Goals at 100 and at 1000 agent conversations: ratioStore ≥ 0.9 (the engine costs at most
// a tenth over the durable work alone), ratioA2a ≥ 3, and p99 ≤ 15 ms at 100. Raw ws is
// reported, not a goal: no durable store comes near it on this disk.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';
import { loadOrCreateIdentity } from '../main/engine/identity';
import { startWirePeer, type WirePeer } from '../test-support/wire-peer';
import { runProcessPair } from './process-pair';
import { measureA2a } from './wire-a2a';
import { measureStoreBaseline, type StoreStats } from './wire-store';

export const WIRE_THREADS = [1, 100, 1000];
/** Each of Parley's rounds: send for this long, after a warm-up (the first opens the agent conversations). */
const MEASURE_MS = 1_500;
const WARMUP_MS = 600;
const BASELINE_MS = 1_500;
const BODY_BYTES = 64;
/** The receiver's queue limit (the largest allowed): bob's agent never takes its texts. */
const QUEUE_LIMIT = 100_000;
/** bob is drained as each measurement begins; its warm-up and its sends together must stay under the limit. */
const MAX_TEXTS_PER_MEASUREMENT = 80_000;
/** A warm-up's texts, shared out: each agent conversation goes its share past the one furthest ahead. */
const WARMUP_TEXTS = 10_000;

export interface WireStats {
  sent: number;
  acked: number;
  failed: number;
  errors: Record<string, number>;
  elapsedMs: number;
  textsPerSec: number;
  p50Ms: number | null;
  p90Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  cpuMs: number;
  /** Pages the sender touched for the first time (new memory, or memory given back and taken again). */
  minorFaults: number;
  /** The sender's garbage-collector pauses. */
  gcMs: number;
}

export interface BaselineStats {
  threads: number;
  tls: boolean;
  msgsPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

const round2 = (value: number) => Math.round(value * 100) / 100;

/** Two wire peers, paired: alice sends to bob/sink. */
export async function openWirePair(
  /** Extra environment and arguments for both peers (the DHT carrier's line gives a testnet and no address). */
  extra: { env?: NodeJS.ProcessEnv; args?: string[] } = {},
): Promise<{
  alice: WirePeer;
  bob: WirePeer;
  /** How long `connections.accept` took, until the link was online. */
  acceptMs: number;
  close(): Promise<void>;
}> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-wire-'));
  const env = { PARLEY_LOG: 'silent', ...extra.env };
  const args = extra.args ?? [];
  const [alice, bob] = await Promise.all([
    startWirePeer({ dataDir: path.join(root, 'alice'), name: 'alice', env, args }),
    startWirePeer({ dataDir: path.join(root, 'bob'), name: 'bob', env, args }),
  ]);
  const close = async () => {
    await Promise.all([alice.exit(), bob.exit()]);
    rmSync(root, { recursive: true, force: true });
  };
  let acceptMs = 0;
  try {
    const { code } = await bob.request<{ code: string }>('invite', { roles: ['sink'] });
    const accepting = performance.now();
    await alice.request('accept', { code, roles: [] });
    acceptMs = round2(performance.now() - accepting);
    await bob.request('waitOnline', {});
    await alice.request('limit', { limit: QUEUE_LIMIT });
    await bob.request('limit', { limit: QUEUE_LIMIT });
  } catch (error) {
    await close();
    throw error;
  }
  return { alice, bob, acceptMs, close };
}

/**
 * With a folder: a CPU profile of each installation around the measured sends (not the
 * warm-up, which opens the agent conversations), as DIR/NAME-alice.cpuprofile and -bob.
 */
export function profiling(
  dir: string | undefined,
  name: string,
  alice: WirePeer,
  bob: WirePeer,
): { before(): Promise<void>; after(): Promise<void> } | null {
  if (!dir) return null;
  mkdirSync(dir, { recursive: true });
  const peers = [
    ['alice', alice],
    ['bob', bob],
  ] as const;
  return {
    before: async () => {
      for (const [, peer] of peers) await peer.request('profile', { action: 'start' });
    },
    after: async () => {
      for (const [who, peer] of peers)
        await peer.request('profile', { action: 'stop', file: path.join(dir, `${name}-${who}.cpuprofile`) });
    },
  };
}

/** One Parley measurement at `threads` agent conversations (prepared beforehand). */
export async function measureWire(
  alice: WirePeer,
  bob: WirePeer,
  threads: number,
  durationMs = MEASURE_MS,
  /** Run just before and just after the measured sends, the drain and the warm-up left out (a profile). */
  around: { before(): Promise<void>; after(): Promise<void> } | null = null,
): Promise<WireStats & { receiverCpuMs: number }> {
  // bob is drained before the warm-up, not after it: the drain writes outside the engine's
  // group commits, which drops what the engine keeps in memory about its agent
  // conversations, and the warm-up is there to fill that again before the measured sends.
  await bob.request('drain');
  const committed = async () =>
    Math.max(
      0,
      ...(await alice.request<{ threads: Array<{ committed: number }> }>('sent')).threads.map((t) => t.committed),
    );
  // Opens every agent conversation (the first text of each makes it on both sides).
  const warm = await committed();
  await alice.request('send', { threads, perThread: warm + Math.ceil(WARMUP_TEXTS / threads), durationMs: WARMUP_MS });
  // perThread counts what each agent conversation has committed so far: add the warm-up's.
  const most = await committed();
  const perThread = Math.max(1, Math.floor(MAX_TEXTS_PER_MEASUREMENT / threads));
  await around?.before();
  const cpuBefore = (await bob.request<{ cpuMs: number }>('cpu')).cpuMs;
  const stats = await alice.request<WireStats>('send', {
    threads,
    perThread: most + perThread,
    durationMs,
    bodyBytes: BODY_BYTES,
  });
  const receiverCpuMs = (await bob.request<{ cpuMs: number }>('cpu')).cpuMs - cpuBefore;
  await around?.after();
  // What the installations left for later (the search index catches up once they are
  // quiet) is done now, not while a baseline is measured beside them.
  await Promise.all([alice.request('quiet'), bob.request('quiet')]);
  return { ...stats, receiverCpuMs };
}

// ── raw ws baseline ───────────────────────────────────────────────────────────

/** Runs the baseline server and client as two processes; resolves with the client's figures. */
export function measureBaseline(threads: number, tls: boolean, durationMs = BASELINE_MS): Promise<BaselineStats> {
  const mode = tls ? 'tls' : 'plain';
  return runProcessPair<BaselineStats>(
    'baseline',
    (scratch) => ['ws-baseline-server', scratch, mode],
    (_scratch, port) => ['ws-baseline-client', String(port), mode, String(threads), String(durationMs)],
  );
}

/** A text frame like Parley's: the same JSON shape and sizes. */
function textFrame(thread: string, seq: number): string {
  const body = `0:${seq}|`.padEnd(BODY_BYTES, 'x');
  return JSON.stringify({ type: 'text', thread, seq, from: 'source', to: 'sink', body });
}

/** `bench/run.js ws-baseline-server DIR tls|plain`: acks every text; prints its port. */
export async function baselineServer(dir: string, mode: string): Promise<void> {
  const onConnection = (ws: WebSocket) => {
    ws.on('message', (data: Buffer) => {
      const frame = JSON.parse(data.toString()) as { thread: string; seq: number };
      ws.send(JSON.stringify({ type: 'ack', thread: frame.thread, seq: frame.seq }));
    });
  };
  if (mode === 'tls') {
    const identity = await loadOrCreateIdentity(dir, 'baseline');
    const server = https.createServer({ key: identity.key, cert: identity.cert, minVersion: 'TLSv1.3' });
    new WebSocketServer({ server }).on('connection', onConnection);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    process.stdout.write(`${(server.address() as { port: number }).port}\n`);
  } else {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    wss.on('connection', onConnection);
    process.stdout.write(`${(wss.address() as { port: number }).port}\n`);
  }
}

/** `bench/run.js ws-baseline-client PORT tls|plain THREADS MS`: stop-and-wait per thread over one socket. */
export async function baselineClient(port: number, mode: string, threads: number, durationMs: number): Promise<void> {
  const ws = new WebSocket(`${mode === 'tls' ? 'wss' : 'ws'}://127.0.0.1:${port}/`, {
    rejectUnauthorized: false,
    perMessageDeflate: false,
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const ids = Array.from({ length: threads }, (_, i) => `baseline-thread-${String(i).padStart(6, '0')}`);
  const index = new Map(ids.map((id, i) => [id, i]));
  const sentAt = new Float64Array(threads);
  const seqs = new Array<number>(threads).fill(0);
  const latencies: number[] = [];
  let acked = 0;
  let stopping = false;
  let inFlight = 0;
  let start = 0;
  let last = 0;
  const sendNext = (i: number) => {
    seqs[i]!++;
    sentAt[i] = performance.now();
    inFlight++;
    ws.send(textFrame(ids[i]!, seqs[i]!));
  };
  const done = new Promise<void>((resolve) => {
    ws.on('message', (data: Buffer) => {
      const at = performance.now();
      const ack = JSON.parse(data.toString()) as { thread: string; seq: number };
      const i = index.get(ack.thread)!;
      inFlight--;
      if (at >= start) {
        latencies.push(at - sentAt[i]!);
        acked++;
        last = at;
      }
      if (!stopping) sendNext(i);
      else if (inFlight === 0) resolve();
    });
  });
  // A short warm-up, then the measured run.
  start = Infinity;
  for (let i = 0; i < threads; i++) sendNext(i);
  await new Promise((resolve) => setTimeout(resolve, 200));
  start = performance.now();
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  stopping = true;
  await done;
  ws.close();
  latencies.sort((a, b) => a - b);
  const pct = (q: number) => round2(latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)]!);
  const result: BaselineStats = {
    threads,
    tls: mode === 'tls',
    msgsPerSec: Math.round((acked / (last - start)) * 1000),
    p50Ms: pct(0.5),
    p99Ms: pct(0.99),
  };
  process.stdout.write(JSON.stringify(result));
}

// ── the benchmark ─────────────────────────────────────────────────────────────

export interface WireLine {
  name: 'wire';
  threads: number;
  textsPerSec: number;
  p50Ms: number | null;
  p99Ms: number | null;
  baselinePerSec: number;
  ratio: number;
  [extra: string]: unknown;
}

/**
 * Parley and the store alone take turns this many times at each thread count, each
 * going first in every other round: the machine's speed drifts between one second and
 * the next, and a figure measured beside the other, again and again and in both orders,
 * drifts with it. Single rounds at 1000 gave ratios 0.72–1.21 in one run.
 */
const STORE_ROUNDS = 5;

/** Every thread count: Parley and the store alone in turns, then the other baselines; one line each, via `emit`. */
export async function wireBench(
  emit: (line: WireLine) => void,
  progress: (message: string) => void,
  options: { threads?: number[]; profileDir?: string; scale?: number } = {},
): Promise<void> {
  const counts = options.threads ?? WIRE_THREADS;
  const scale = options.scale ?? 1;
  const measureMs = Math.max(500, Math.round(MEASURE_MS * scale));
  const baselineMs = Math.max(500, Math.round(BASELINE_MS * scale));
  const pair = await openWirePair();
  // The store alone keeps its databases for the line, as the pair keeps its installations.
  const storeDir = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-store-'));
  try {
    const { alice, bob } = pair;
    await alice.request('prepare', { threads: Math.max(...counts), to: 'bob/sink', role: 'source' });
    for (const threads of counts) {
      const tlsBefore = await measureBaseline(threads, true, baselineMs);
      const rounds: Array<{ parley: WireStats & { receiverCpuMs: number }; store: StoreStats }> = [];
      for (let round = 0; round < STORE_ROUNDS; round++) {
        // Only the first round is profiled (one profile per thread count); the profiler slows that round.
        const around = round === 0 ? profiling(options.profileDir, `wire-${threads}`, alice, bob) : null;
        const storeFirst = round % 2 === 1 ? await measureStoreBaseline(storeDir, threads, baselineMs) : null;
        const parley = await measureWire(alice, bob, threads, measureMs, around);
        if (parley.failed > 0 || Object.keys(parley.errors).length > 0)
          throw new Error(`wire ${threads}: ${parley.failed} failed, errors ${JSON.stringify(parley.errors)}`);
        rounds.push({ parley, store: storeFirst ?? (await measureStoreBaseline(storeDir, threads, baselineMs)) });
      }
      const plain = await measureBaseline(threads, false, baselineMs);
      const a2a = await measureA2a(threads, baselineMs);
      const tlsAfter = await measureBaseline(threads, true, baselineMs);
      const tls = meanOf(tlsBefore, tlsAfter);
      const parley = combined(rounds.map((r) => r.parley));
      const store = {
        msgsPerSec: median(rounds.map((r) => r.store.msgsPerSec)),
        p50Ms: median(rounds.map((r) => r.store.p50Ms)),
        p99Ms: median(rounds.map((r) => r.store.p99Ms)),
        senderCpuUsPerText: median(rounds.map((r) => r.store.senderCpuUsPerText)),
        senderFaultsPerText: median(rounds.map((r) => r.store.senderFaultsPerText)),
        senderGcUsPerText: median(rounds.map((r) => r.store.senderGcUsPerText)),
      };
      // Each round's Parley against the store beside it; the line's ratio is their median.
      const roundRatios = rounds.map((r) => round2(r.parley.textsPerSec / r.store.msgsPerSec));
      const ratioStore = median(roundRatios);
      progress(
        `wire ${threads}: parley ${parley.textsPerSec}/s p50 ${parley.p50Ms} p99 ${parley.p99Ms} ms (${parley.acked} texts, ` +
          `sender cpu ${parley.cpuMs} ms); ws ${plain.msgsPerSec}/s p50 ${plain.p50Ms} p99 ${plain.p99Ms}; ` +
          `wss ${tlsBefore.msgsPerSec}/s before, ${tlsAfter.msgsPerSec}/s after; store only ` +
          `${rounds.map((r) => r.store.msgsPerSec).join(', ')}/s against parley ` +
          `${rounds.map((r) => r.parley.textsPerSec).join(', ')}/s (ratios ${roundRatios.join(', ')}); ` +
          `a2a ${a2a.msgsPerSec}/s p50 ${a2a.p50Ms} p99 ${a2a.p99Ms}`,
      );
      emit({
        name: 'wire',
        threads,
        textsPerSec: parley.textsPerSec,
        p50Ms: parley.p50Ms,
        p99Ms: parley.p99Ms,
        baselinePerSec: tls.msgsPerSec,
        ratio: round2(parley.textsPerSec / tls.msgsPerSec),
        baseline: 'wss (TLS 1.3), stop-and-wait per thread, one connection',
        baselineP50Ms: tls.p50Ms,
        baselineP99Ms: tls.p99Ms,
        baselineBeforeAfterPerSec: [tlsBefore.msgsPerSec, tlsAfter.msgsPerSec],
        baselinePlainPerSec: plain.msgsPerSec,
        ratioPlain: round2(parley.textsPerSec / plain.msgsPerSec),
        storePerSec: store.msgsPerSec,
        storeP50Ms: store.p50Ms,
        storeP99Ms: store.p99Ms,
        storeRatio: round2(store.msgsPerSec / tls.msgsPerSec),
        storeSenderCpuUsPerText: store.senderCpuUsPerText,
        storeSenderFaultsPerText: store.senderFaultsPerText,
        storeSenderGcUsPerText: store.senderGcUsPerText,
        ratioStore,
        rounds: rounds.map((r, i) => ({
          parleyPerSec: r.parley.textsPerSec,
          parleyP99Ms: r.parley.p99Ms,
          storePerSec: r.store.msgsPerSec,
          ratioStore: roundRatios[i],
        })),
        a2aPerSec: a2a.msgsPerSec,
        a2aP50Ms: a2a.p50Ms,
        a2aP99Ms: a2a.p99Ms,
        ratioA2a: round2(parley.textsPerSec / a2a.msgsPerSec),
        texts: parley.acked,
        senderCpuUsPerText: parley.acked ? Math.round((parley.cpuMs * 1000) / parley.acked) : null,
        receiverCpuUsPerText: parley.acked ? Math.round((parley.receiverCpuMs * 1000) / parley.acked) : null,
        senderFaultsPerText: parley.acked ? round2(parley.minorFaults / parley.acked) : null,
        senderGcUsPerText: parley.acked ? round2((parley.gcMs * 1000) / parley.acked) : null,
        loadAverage: round2(os.loadavg()[0]!),
        ...(threads === 1 ? {} : goals(threads, parley, ratioStore, a2a)),
        ...(scale === 1 ? {} : { scale }),
      });
    }
  } finally {
    await pair.close();
    rmSync(storeDir, { recursive: true, force: true });
  }
}

/**
 * Parley's rounds as one measurement: texts over the time they took, CPU summed; the
 * latencies' percentiles are the median of the rounds' (each round's own are exact).
 */
function combined(rounds: Array<WireStats & { receiverCpuMs: number }>): WireStats & { receiverCpuMs: number } {
  const sum = (pick: (r: WireStats & { receiverCpuMs: number }) => number) =>
    rounds.reduce((total, r) => total + pick(r), 0);
  const med = (pick: (r: WireStats) => number | null) => {
    const values = rounds.map(pick).filter((v): v is number => v !== null);
    return values.length ? median(values) : null;
  };
  const acked = sum((r) => r.acked);
  const elapsedMs = sum((r) => r.elapsedMs);
  return {
    sent: sum((r) => r.sent),
    acked,
    failed: sum((r) => r.failed),
    errors: {},
    elapsedMs: round2(elapsedMs),
    textsPerSec: elapsedMs > 0 ? Math.round((acked / elapsedMs) * 1000) : 0,
    p50Ms: med((r) => r.p50Ms),
    p90Ms: med((r) => r.p90Ms),
    p99Ms: med((r) => r.p99Ms),
    maxMs: rounds.reduce<number | null>((most, r) => (r.maxMs === null ? most : Math.max(most ?? 0, r.maxMs)), null),
    cpuMs: sum((r) => r.cpuMs),
    minorFaults: sum((r) => r.minorFaults),
    gcMs: sum((r) => r.gcMs),
    receiverCpuMs: sum((r) => r.receiverCpuMs),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : round2((sorted[mid - 1]! + sorted[mid]!) / 2);
}

/** Two baseline runs as one: the mean of their rates and latencies. */
function meanOf(a: BaselineStats, b: BaselineStats): BaselineStats {
  return {
    threads: a.threads,
    tls: a.tls,
    msgsPerSec: Math.round((a.msgsPerSec + b.msgsPerSec) / 2),
    p50Ms: round2((a.p50Ms + b.p50Ms) / 2),
    p99Ms: round2((a.p99Ms + b.p99Ms) / 2),
  };
}

function goals(
  threads: number,
  parley: WireStats,
  ratioStore: number,
  a2a: { msgsPerSec: number },
): Record<string, unknown> {
  const ratiosMet = ratioStore >= 0.9 && parley.textsPerSec / a2a.msgsPerSec >= 3;
  if (threads === 100) {
    return {
      goal: 'ratioStore>=0.9 and ratioA2a>=3 and p99<=15ms',
      met: ratiosMet && parley.p99Ms !== null && parley.p99Ms <= 15,
    };
  }
  return { goal: 'ratioStore>=0.9 and ratioA2a>=3', met: ratiosMet };
}
