// turn-overhead and stop-latency: the run manager's two costs people feel.
//
//  turn-overhead  input committed → the agent process has its input, against a bare
//                 `spawn('node', [same script])` + stdin write (interleaved, medians), each once
//                 the last turn's aftermath is done (`RunManager.quiet()`).
//  stop-latency   `conversations.stop` → the agent's process tree is gone.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Person } from '../shared/domain';
import { openInstallation, type Installation } from '../main/installation';
import { groupAlive } from '../main/runs/process-tree';
import { SignalServer, writeAgentScripts, type AgentScripts } from './agents';
import { keepAlive, median, ms, percentile, round, type Emit, type Progress } from './stats';
import { removeDataDir } from '../test-support/data-folder';

const WARMUP = 3;
const ITERATIONS = 30;
const STOP_ITERATIONS = 30;
/** On a loaded machine node starts slowly: stop early (keeping at least MIN_ITERATIONS) to stay near a minute. */
const MIN_ITERATIONS = 10;
const TURN_BUDGET_MS = 35_000;
const STOP_BUDGET_MS = 15_000;

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

async function turnOverhead(
  inst: Installation,
  owner: Person,
  signals: SignalServer,
  scripts: AgentScripts,
  emit: Emit,
  progress: Progress,
  iterations: number,
) {
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
  for (let i = 0; i < WARMUP + iterations; i++) {
    if (results.bare.length >= MIN_ITERATIONS && Date.now() > deadline) {
      progress(`turn-overhead: out of time budget after ${results.bare.length} iterations`);
      break;
    }
    // Rotate the order so no variant always runs right after the same other one.
    for (let k = 0; k < variants.length; k++) {
      const variant = variants[(i + k) % variants.length]!;
      // The last turn's aftermath (its end written, the next turn's sandbox started) is
      // done first, so that it never falls into a measurement, of either side.
      await inst.runs.quiet();
      const elapsed = await measure[variant]();
      if (i >= WARMUP) results[variant].push(elapsed);
    }
  }
  const rounds = results.bare.length;
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
    iterations: rounds,
    overheadMs: round(overheadMs),
    sendPathMs: round(median(results.send)),
    startPathMs: round(median(syncStart.parley.slice(WARMUP))),
    bareSpawnCallMs: round(median(syncStart.bare.slice(WARMUP))),
  });
}

// ── stop-latency ──────────────────────────────────────────────────────────────

/**
 * The pid, as this process sees it, of a descendant that knows itself as `nsPid`: an agent
 * in the sandbox has a pid namespace of its own, so the pids it reports are that
 * namespace's (`NSpid` in /proc/PID/status lists a process's pid in each namespace). Other
 * sandboxes (another run's, waiting for its next turn) have the same small pids in theirs:
 * `inNamespaceOf`, a process of the agent's, or `running`, its command line, tells which.
 */
function hostPidOf(nsPid: number, which: { inNamespaceOf?: number; running?: string }): number | null {
  if (!existsSync('/proc/self/status')) return nsPid;
  const namespace = (pid: number | string) => {
    try {
      return readlinkSync(`/proc/${pid}/ns/pid`);
    } catch {
      return null;
    }
  };
  const wanted = which.inNamespaceOf === undefined ? null : namespace(which.inNamespaceOf);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let status: string;
    let cmdline: string;
    try {
      status = readFileSync(`/proc/${entry}/status`, 'utf8');
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    const pids = /^NSpid:\s+(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/).map(Number) ?? [];
    if (pids.at(-1) !== nsPid || !descendsFromUs(Number(entry))) continue;
    if (which.running !== undefined && !cmdline.includes(which.running)) continue;
    if (wanted !== null && namespace(entry) !== wanted) continue;
    return Number(entry);
  }
  return null;
}

function descendsFromUs(pid: number): boolean {
  for (let at = pid, hops = 0; at > 1 && hops < 64; hops++) {
    if (at === process.pid) return true;
    try {
      at = Number(/^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${at}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      return false;
    }
  }
  return false;
}

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

async function stopLatency(
  inst: Installation,
  owner: Person,
  signals: SignalServer,
  scripts: AgentScripts,
  emit: Emit,
  progress: Progress,
  iterations: number,
) {
  const chat = await openConversation(inst, owner, 'sleeper', ['node', scripts.sleeper, signals.socketPath]);
  const context = { kind: 'conversation' as const, id: chat.id };
  const linux = existsSync('/proc/self/stat');
  const samples: number[] = [];
  const deadline = Date.now() + STOP_BUDGET_MS;
  for (let i = 0; i < WARMUP + iterations; i++) {
    if (samples.length >= MIN_ITERATIONS && Date.now() > deadline) {
      progress(`stop-latency: out of time budget after ${samples.length} stops`);
      break;
    }
    inst.runs.addInput(context, chat.roleId, 'message', `work ${i}`, owner.name);
    const signal = await signals.next();
    const reported = JSON.parse(signal.text) as { pid: number; child: number };
    // Inside the sandbox the agent is not its group's leader: both processes are checked.
    const pid = linux ? hostPidOf(reported.pid, { running: scripts.sleeper }) : reported.pid;
    const child = linux && pid !== null ? hostPidOf(reported.child, { inNamespaceOf: pid }) : reported.child;
    if (pid === null || child === null || (linux ? !pidAlive(pid) || !pidAlive(child) : !groupAlive(pid)))
      throw new Error('the agent tree is not running before the stop');
    const t0 = process.hrtime.bigint();
    const result = (await inst.call({ person: owner }, 'conversations.stop', { id: chat.id })) as { stopped: boolean };
    const t1 = process.hrtime.bigint();
    if (!result.stopped) throw new Error('conversations.stop did not stop anything');
    if (linux ? pidAlive(pid) : groupAlive(pid)) throw new Error(`the agent ${pid} is still alive after the stop`);
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

/** Both lines on one installation; `scale` shrinks the iteration counts (at least MIN_ITERATIONS). */
export async function turnBench(
  emit: Emit,
  progress: Progress,
  options: { scale?: number; lines?: { turnOverhead: boolean; stopLatency: boolean } } = {},
): Promise<void> {
  const lines = options.lines ?? { turnOverhead: true, stopLatency: true };
  const scale = options.scale ?? 1;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-data-'));
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-'));
  const scripts = writeAgentScripts(scratch);
  const signals = new SignalServer(path.join(scratch, 'signal.sock'));
  await signals.listen();
  const inst = await openInstallation({ dataDir, name: 'bench', defaultRole: false });
  try {
    const owner = inst.owner();
    const count = (n: number) => Math.max(MIN_ITERATIONS, Math.round(n * scale));
    if (lines.turnOverhead) await turnOverhead(inst, owner, signals, scripts, emit, progress, count(ITERATIONS));
    if (lines.stopLatency) await stopLatency(inst, owner, signals, scripts, emit, progress, count(STOP_ITERATIONS));
    if (signals.strays() > 0) throw new Error(`${signals.strays()} signal(s) arrived that nobody waited for`);
  } finally {
    await keepAlive(() => inst.close());
    await signals.close();
    removeDataDir(dataDir);
    rmSync(scratch, { recursive: true, force: true });
  }
}
