// Small helpers every benchmark line uses: medians, percentiles, rounding, the two
// output streams (one JSON line per measurement on stdout, progress on stderr), and a
// wait until processes have nothing left to do.
import { existsSync } from 'node:fs';
import { liveProcesses } from '../main/runs/process-tree';

export const round = (value: number) => Math.round(value * 100) / 100;

export const ms = (from: bigint, to: bigint) => Number(to - from) / 1e6;

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export type Emit = (line: Record<string, unknown>) => void;
export type Progress = (message: string) => void;

export const progress: Progress = (message) => process.stderr.write(`bench: ${message}\n`);
export const emit: Emit = (line) => process.stdout.write(JSON.stringify(line) + '\n');

/**
 * Runs each variant once per round, rotating the order so none always follows the same
 * other one, for `rounds` rounds after `warmup` unrecorded ones (or until `budgetMs` has
 * passed and at least `minRounds` were recorded). Returns each variant's samples.
 */
export async function interleave<K extends string>(
  variants: Record<K, () => Promise<number>>,
  options: { rounds: number; warmup?: number; minRounds?: number; budgetMs?: number },
): Promise<Record<K, number[]>> {
  const names = Object.keys(variants) as K[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  const warmup = options.warmup ?? 2;
  const deadline = Date.now() + (options.budgetMs ?? Infinity);
  for (let i = 0; i < warmup + options.rounds; i++) {
    const recorded = Math.max(0, i - warmup);
    if (recorded >= (options.minRounds ?? options.rounds) && Date.now() > deadline) break;
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length]!;
      const value = await variants[name]();
      if (i >= warmup) samples[name].push(value);
    }
  }
  return samples;
}

/**
 * Runs `fn` with the event loop held open. `Installation.close()` waits for the
 * checkpoint worker to exit, and that worker is unref'd: in a process with nothing else
 * alive, Node may exit before close() resolves (and skip what follows it).
 */
export async function keepAlive<T>(fn: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => {}, 1000);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

/** CPU clock ticks (user + system) of `roots` and every live process under them. */
function treeTicks(roots: readonly number[]): number {
  const processes = liveProcesses();
  const parentOf = new Map(processes.map((stat) => [stat.pid, stat.ppid]));
  const inTree = (pid: number): boolean => {
    for (let at = pid, hops = 0; at > 1 && hops < 64; at = parentOf.get(at) ?? 0, hops++)
      if (roots.includes(at)) return true;
    return false;
  };
  let total = 0;
  for (const stat of processes) if (inTree(stat.pid)) total += stat.cpuTicks;
  return total;
}

/**
 * Resolves once `roots` and the processes under them used no CPU for `quietMs` (the
 * clock's tick is 10 ms, so a few polls in a row), or after `withinMs` at the latest;
 * with whether they went quiet. Work an installation does in the background after an
 * answer (a run's next sandbox starting, its search index catching up) would otherwise
 * fall into whatever is measured next: a person's next question, or the baseline.
 * Where /proc is missing it resolves at once.
 */
export async function untilIdle(roots: readonly number[], quietMs = 60, withinMs = 3_000): Promise<boolean> {
  if (roots.length === 0 || !existsSync('/proc/self/stat')) return true;
  const poll = 20;
  const deadline = performance.now() + withinMs;
  let last = treeTicks(roots);
  let quietFor = 0;
  while (performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, poll));
    const now = treeTicks(roots);
    quietFor = now === last ? quietFor + poll : 0;
    last = now;
    if (quietFor >= quietMs) return true;
  }
  return false;
}
