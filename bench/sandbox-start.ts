// sandbox-start: a turn's start inside the agents' OS sandbox against outside it. Two
// installations in this process, one with the sandbox and one without, run the same echo
// agent; each iteration measures both (order alternating): input committed → the agent
// process has its input (its signal on a Unix socket), each once the previous turn's
// aftermath is done (inside: the next turn's sandbox started and waiting, as when a person
// answers after a moment). Goal: at most 1.3× (medians).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openInstallation, type Installation } from '../main/installation';
import { SignalServer, writeAgentScripts } from './agents';
import { keepAlive, median, ms, round, type Emit, type Progress } from './stats';

const WARMUP = 3;
const ITERATIONS = 30;
const MIN_ITERATIONS = 10;
const BUDGET_MS = 40_000;

async function turnEnded(inst: Installation, runId: number): Promise<string> {
  const latest = inst.db.prepare('SELECT status FROM turns WHERE run_id = ? ORDER BY id DESC LIMIT 1').pluck();
  const deadline = Date.now() + 15_000;
  for (;;) {
    const status = latest.get(runId) as string | undefined;
    if (status && status !== 'running') return status;
    if (Date.now() > deadline) throw new Error(`turn of run ${runId} did not end`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

export async function sandboxStartBench(
  emit: Emit,
  progress: Progress,
  options: { scale?: number } = {},
): Promise<void> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-sandbox-'));
  const scripts = writeAgentScripts(scratch);
  const signals = new SignalServer(path.join(scratch, 'signal.sock'));
  await signals.listen();
  const open = async (name: string, sandbox: 'on' | 'off') => {
    const inst = await openInstallation({
      dataDir: mkdtempSync(path.join(os.tmpdir(), `parley-bench-${name}-`)),
      name,
      defaultRole: false,
      sandbox: { mode: sandbox },
    });
    const owner = inst.owner();
    const role = (await inst.call({ person: owner }, 'roles.create', {
      name: 'echo',
      agent: { adapter: 'command', command: ['node', scripts.echo, signals.socketPath] },
    })) as { id: number };
    const chat = (await inst.call({ person: owner }, 'conversations.open', { roleId: role.id })) as { id: number };
    const runId = () =>
      inst.db
        .prepare("SELECT id FROM runs WHERE context_kind = 'conversation' AND context_id = ?")
        .pluck()
        .get(chat.id) as number;
    let serial = 0;
    const measure = async () => {
      const t0 = process.hrtime.bigint();
      inst.runs.addInput({ kind: 'conversation', id: chat.id }, role.id, 'message', `ping ${++serial}`, owner.name);
      const signal = await signals.next();
      const status = await turnEnded(inst, runId());
      if (status !== 'done') throw new Error(`${name}: the turn ended ${status}`);
      // As when a person answers after a moment: the turn's aftermath (its next turn's
      // wrap, inside) is done, and does not fall into the other side's measurement.
      await inst.runs.quiet();
      return ms(t0, signal.at);
    };
    return { inst, measure };
  };
  const inside = await open('sandboxed', 'on');
  const outside = await open('unsandboxed', 'off');
  try {
    if (!inside.inst.sandbox.available) {
      progress(
        `sandbox-start: skipped, the sandbox cannot start here (${inside.inst.sandbox.status.available ? '' : inside.inst.sandbox.status.reason})`,
      );
      return;
    }
    const iterations = Math.max(MIN_ITERATIONS, Math.round(ITERATIONS * (options.scale ?? 1)));
    const results = { inside: [] as number[], outside: [] as number[] };
    const deadline = Date.now() + BUDGET_MS;
    for (let i = 0; i < WARMUP + iterations; i++) {
      if (results.inside.length >= MIN_ITERATIONS && Date.now() > deadline) break;
      const order = i % 2 === 0 ? (['inside', 'outside'] as const) : (['outside', 'inside'] as const);
      for (const which of order) {
        const elapsed = await (which === 'inside' ? inside : outside).measure();
        if (i >= WARMUP) results[which].push(elapsed);
      }
    }
    const insideMs = median(results.inside);
    const outsideMs = median(results.outside);
    const ratio = insideMs / outsideMs;
    progress(
      `sandbox-start: inside  ${results.inside.map(round).join(' ')}\n` +
        `bench: sandbox-start: outside ${results.outside.map(round).join(' ')}`,
    );
    emit({
      name: 'sandbox-start',
      insideMs: round(insideMs),
      outsideMs: round(outsideMs),
      ratio: round(ratio),
      goal: '<=1.3',
      met: ratio <= 1.3,
      iterations: results.inside.length,
      overheadMs: round(median(results.inside.map((value, i) => value - results.outside[i]!))),
    });
  } finally {
    for (const { inst } of [inside, outside]) {
      await keepAlive(() => inst.close());
      rmSync(inst.dataDir, { recursive: true, force: true });
      rmSync(inst.rolesDir, { recursive: true, force: true });
    }
    await signals.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
