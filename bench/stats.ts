// Small helpers every benchmark line uses: medians, percentiles, rounding, and the two
// output streams (one JSON line per measurement on stdout, progress on stderr).

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
