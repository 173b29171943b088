// `npm run bench`: Parley's run-manager benchmarks. One JSON object per line on
// stdout, each with a `name`; progress and problems go to stderr.
//
//  turn-overhead  input committed → the agent process has its input, against a bare
//                 `spawn('node', [same script])` + stdin write (interleaved, medians).
//  stop-latency   `conversations.stop` → the agent's process tree is gone.
//  wire           texts between two installations in separate processes through the
//                 engine's send path, 1/100/1000 agent conversations, against raw ws
//                 stop-and-wait between two processes (bench/wire.ts) and against the
//                 same durable work done by the store alone (bench/wire-store.ts).
//
// `node dist/bench/run.js wire [--threads 1,100] [--profile DIR]` runs the wire part alone
// (with --profile, CPU profiles of both installations per measurement go to DIR).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Person } from '../shared/domain';
import { openInstallation, type Installation } from '../main/installation';
import { log } from '../main/log';
import { groupAlive } from '../main/runs/process-tree';
import { SignalServer, writeAgentScripts, type AgentScripts } from './agents';
import { baselineClient, baselineServer, wireBench } from './wire';
import { storeReceiver, storeSender } from './wire-store';

const WARMUP = 3;
const ITERATIONS = 30;
const STOP_ITERATIONS = 30;
/** On a loaded machine node starts slowly: stop early (keeping at least MIN_ITERATIONS) to stay near a minute. */
const MIN_ITERATIONS = 10;
const TURN_BUDGET_MS = 35_000;
const STOP_BUDGET_MS = 15_000;

const ms = (from: bigint, to: bigint) => Number(to - from) / 1e6;
const round = (value: number) => Math.round(value * 100) / 100;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const emit = (line: Record<string, unknown>) => process.stdout.write(JSON.stringify(line) + '\n');

interface Conversation {
  id: number;
  roleId: number;
  runId: () => number;
}

async function openConversation(
  inst: Installation,
  owner: Person,
  name: string,
  command: string[],
): Promise<Conversation> {
  const session = { person: owner };
  const role = (await inst.call(session, 'roles.create', { name, agent: { adapter: 'command', command } })) as {
    id: number;
  };
  const conversation = (await inst.call(session, 'conversations.open', { roleId: role.id })) as { id: number };
  const runOf = inst.db.prepare("SELECT id FROM runs WHERE context_kind = 'conversation' AND context_id = ?").pluck();
  return {
    id: conversation.id,
    roleId: role.id,
    runId: () => runOf.get(conversation.id) as number,
  };
}

/** Waits until the run's latest turn has ended; returns it. */
async function turnEnded(inst: Installation, runId: number): Promise<{ status: string; output: string | null }> {
  const latest = inst.db.prepare('SELECT status, output FROM turns WHERE run_id = ? ORDER BY id DESC LIMIT 1');
  const deadline = Date.now() + 10_000;
  for (;;) {
    const turn = latest.get(runId) as { status: string; output: string | null } | undefined;
    if (turn && turn.status !== 'running') return turn;
    if (Date.now() > deadline) throw new Error(`turn of run ${runId} did not end`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

// ── turn-overhead ─────────────────────────────────────────────────────────────

type Variant = 'parley' | 'send' | 'bare';

/**
 * The synchronous part of each start: Parley schedules its turn on a microtask queued by
 * addInput, so by the time `await Promise.resolve()` resumes the whole start path (queries, token,
 * adapter, spawn) has run; for the bare spawn it is the `spawn()` + `stdin.end()` call.
 * Much less noisy than the end-to-end figure, and it says where the difference goes.
 */
const syncStart: Record<'parley' | 'bare', number[]> = { parley: [], bare: [] };

async function turnOverhead(inst: Installation, owner: Person, signals: SignalServer, scripts: AgentScripts) {
  const command = ['node', scripts.echo, signals.socketPath];
  const chat = await openConversation(inst, owner, 'echo', command);
  const context = { kind: 'conversation' as const, id: chat.id };
  let serial = 0;

  const measure: Record<Variant, () => Promise<number>> = {
    // runs.addInput returns → the input is committed (autocommit) and a turn is scheduled.
    async parley() {
      const text = `ping ${++serial}`;
      inst.runs.addInput(context, chat.roleId, 'message', text, owner.name);
      const t0 = process.hrtime.bigint();
      await Promise.resolve(); // runs after the microtask that starts the turn
      syncStart.parley.push(ms(t0, process.hrtime.bigint()));
      const signal = await signals.next();
      const turn = await turnEnded(inst, chat.runId());
      if (turn.status !== 'done' || turn.output !== `echo: ${owner.name}: ${text}`)
        throw new Error(`unexpected turn end: ${JSON.stringify(turn)}`);
      return ms(t0, signal.at);
    },
    // The whole app-API path as a person's Send: validation, the message and the input
    // in one transaction. Timed from the call, because the turn is scheduled on a
    // microtask that runs before an awaiting caller would resume.
    async send() {
      const text = `ping ${++serial}`;
      const t0 = process.hrtime.bigint();
      await inst.call({ person: owner }, 'conversations.send', { id: chat.id, text });
      const signal = await signals.next();
      const turn = await turnEnded(inst, chat.runId());
      if (turn.status !== 'done' || turn.output !== `echo: ${owner.name}: ${text}`)
        throw new Error(`unexpected turn end: ${JSON.stringify(turn)}`);
      return ms(t0, signal.at);
    },
    // Baseline: the same script, the same input, the same signal, no Parley.
    async bare() {
      const text = `${owner.name}: ping ${++serial}\n`;
      const t0 = process.hrtime.bigint();
      const child = spawn('node', command.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
      child.stdin.on('error', () => {});
      child.stdin.end(text);
      syncStart.bare.push(ms(t0, process.hrtime.bigint()));
      let stdout = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.resume();
      const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
      const signal = await signals.next();
      const code = await closed;
      if (code !== 0 || stdout !== `echo: ${text}`)
        throw new Error(`bare agent: code ${code}, stdout ${JSON.stringify(stdout)}`);
      return ms(t0, signal.at);
    },
  };

  const variants: Variant[] = ['parley', 'bare', 'send'];
  const results: Record<Variant, number[]> = { parley: [], send: [], bare: [] };
  const deadline = Date.now() + TURN_BUDGET_MS;
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    if (results.bare.length >= MIN_ITERATIONS && Date.now() > deadline) {
      progress(`turn-overhead: out of time budget after ${results.bare.length} iterations`);
      break;
    }
    // Rotate the order so no variant always runs right after the same other one.
    for (let k = 0; k < variants.length; k++) {
      const variant = variants[(i + k) % variants.length]!;
      const elapsed = await measure[variant]();
      if (i >= WARMUP) results[variant].push(elapsed);
    }
  }
  const iterations = results.bare.length;
  const parleyMs = median(results.parley);
  const bareMs = median(results.bare);
  const ratio = parleyMs / bareMs;
  // Each iteration measures both back to back: the paired difference cancels most of
  // the drift in machine load that the two medians each carry.
  const overheadMs = median(results.parley.map((value, i) => value - results.bare[i]!));
  progress(
    `turn-overhead: parley ${results.parley.map(round).join(' ')}\n` +
      `bench: turn-overhead: bare   ${results.bare.map(round).join(' ')}\n` +
      `bench: turn-overhead: send   ${results.send.map(round).join(' ')}`,
  );
  emit({
    name: 'turn-overhead',
    parleyMs: round(parleyMs),
    bareMs: round(bareMs),
    ratio: round(ratio),
    goal: '<=1.3',
    met: ratio <= 1.3,
    iterations,
    overheadMs: round(overheadMs),
    sendPathMs: round(median(results.send)),
    startPathMs: round(median(syncStart.parley.slice(WARMUP))),
    bareSpawnCallMs: round(median(syncStart.bare.slice(WARMUP))),
  });
}

// ── stop-latency ──────────────────────────────────────────────────────────────

/** True while the pid is a live (non-zombie) process. */
function pidAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

async function stopLatency(inst: Installation, owner: Person, signals: SignalServer, scripts: AgentScripts) {
  const chat = await openConversation(inst, owner, 'sleeper', ['node', scripts.sleeper, signals.socketPath]);
  const context = { kind: 'conversation' as const, id: chat.id };
  const linux = existsSync('/proc/self/stat');
  const samples: number[] = [];
  const deadline = Date.now() + STOP_BUDGET_MS;
  for (let i = 0; i < WARMUP + STOP_ITERATIONS; i++) {
    if (samples.length >= MIN_ITERATIONS && Date.now() > deadline) {
      progress(`stop-latency: out of time budget after ${samples.length} stops`);
      break;
    }
    inst.runs.addInput(context, chat.roleId, 'message', `work ${i}`, owner.name);
    const signal = await signals.next();
    const { pid, child } = JSON.parse(signal.text) as { pid: number; child: number };
    if (!groupAlive(pid) || (linux && !pidAlive(child)))
      throw new Error('the agent tree is not running before the stop');
    const t0 = process.hrtime.bigint();
    const result = (await inst.call({ person: owner }, 'conversations.stop', { id: chat.id })) as { stopped: boolean };
    const t1 = process.hrtime.bigint();
    if (!result.stopped) throw new Error('conversations.stop did not stop anything');
    if (groupAlive(pid)) throw new Error(`process group ${pid} still has a live member after the stop`);
    if (linux && pidAlive(child)) throw new Error(`the agent's child ${child} is still alive after the stop`);
    const turn = await turnEnded(inst, chat.runId());
    if (turn.status !== 'stopped') throw new Error(`stopped turn ended as ${turn.status}`);
    if (i >= WARMUP) samples.push(ms(t0, t1));
  }
  const p50 = percentile(samples, 50);
  progress(`stop-latency: ${samples.map(round).join(' ')}`);
  emit({
    name: 'stop-latency',
    p50Ms: round(p50),
    p99Ms: round(percentile(samples, 99)),
    goal: 'p50<=100',
    met: p50 <= 100,
    iterations: samples.length,
    treeGone: true,
  });
}

// ── main ──────────────────────────────────────────────────────────────────────

async function main(): Promise<void> {
  log.setQuiet(true);
  const started = Date.now();
  const [mode, ...rest] = process.argv.slice(2);
  // The raw ws baseline's two processes are this script in another mode.
  if (mode === 'ws-baseline-server') {
    await baselineServer(rest[0]!, rest[1]!);
    return new Promise<never>(() => {}); // serves until the bench kills it
  }
  if (mode === 'ws-baseline-client') return baselineClient(Number(rest[0]), rest[1]!, Number(rest[2]), Number(rest[3]));
  // So are the store-only baseline's.
  if (mode === 'store-baseline-receiver') {
    await storeReceiver(rest[0]!, Number(rest[1]));
    return new Promise<never>(() => {});
  }
  if (mode === 'store-baseline-sender') return storeSender(rest[0]!, Number(rest[1]), Number(rest[2]), Number(rest[3]));
  if (mode === 'wire') {
    const flag = (name: string) => (rest.includes(name) ? rest[rest.indexOf(name) + 1] : undefined);
    const threads = flag('--threads')?.split(',').map(Number);
    await wireBench(emit, progress, { threads, profileDir: flag('--profile') });
    progress(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return;
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-data-'));
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-'));
  const scripts = writeAgentScripts(scratch);
  const signals = new SignalServer(path.join(scratch, 'signal.sock'));
  await signals.listen();
  const inst = await openInstallation({ dataDir, name: 'bench' });
  try {
    const owner = inst.owner();
    await turnOverhead(inst, owner, signals, scripts);
    await stopLatency(inst, owner, signals, scripts);
    if (signals.strays() > 0) throw new Error(`${signals.strays()} signal(s) arrived that nobody waited for`);
  } finally {
    await inst.close();
    await signals.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
  await wireBench(emit, progress);
  progress(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
