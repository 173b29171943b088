// `npm run bench`: Parley's benchmarks, one JSON object per line on stdout, each with a
// `name`, a `goal` and whether it was `met`; progress and problems go to stderr.
//
//   node dist/bench/run.js [LINE...] [--scale S] [--threads 1,100,1000] [--profile DIR]
//
// LINE is any of the names below (default: all, in this order). `--scale` (default 1)
// shrinks a run for development: iteration counts, the seeded database of thread-page,
// the wire's measuring time. `--threads` and `--profile` are the wire's and wire-dht's
// (with --profile, CPU profiles of both installations per measurement go to DIR).
//
//  turn-overhead  input committed → the agent has it, against a bare spawn (bench/turns.ts)
//  stop-latency   conversations.stop → the agent's process tree is gone (bench/turns.ts)
//  sandbox-start  a turn's start inside the agents' sandbox against outside it (bench/sandbox-start.ts)
//  cli-start      `parley context` against `node -e 0` (bench/cli-start.ts)
//  ask            a person → a peer's role → the answer in the person's conversation,
//                 two `parley serve` processes, against a bare node spawn (bench/ask.ts)
//  thread-page    threads.page of 100 among 100,000 agent conversations and 1,000,000
//                 texts, against the bare SQL; opening the busiest one; RSS (bench/thread-page.ts)
//  wire           texts between two installations, against raw wss, the store alone and
//                 the A2A JS SDK (bench/wire.ts)
//  approvals      approvals.list with 100,000 pending, most of them others', against the
//                 unfiltered 1,000 oldest (bench/approvals.ts)
//  wire-dht       the same over the DHT carrier (a loopback testnet) next to direct, and
//                 connections.accept → online (bench/wire-dht.ts)
//
// The UI line runs on its own (dist/bench/ui.js, Chromium).
import { parseArgs } from 'node:util';
import { log } from '../main/log';
import { approvalsBench } from './approvals';
import { askBench } from './ask';
import { cliStartBench } from './cli-start';
import { emit, progress } from './stats';
import { threadPageBench, threadPageWorker } from './thread-page';
import { sandboxStartBench } from './sandbox-start';
import { turnBench } from './turns';
import { a2aClient, a2aServer } from './wire-a2a';
import { baselineClient, baselineServer, wireBench } from './wire';
import { wireDhtBench } from './wire-dht';
import { storeReceiver, storeSender } from './wire-store';

// Never the public DHT from the project's own runs: its installations (and their children) stay off it.
process.env.PARLEY_DHT_BOOTSTRAP ??= 'off';

const LINES = [
  'turn-overhead',
  'stop-latency',
  'sandbox-start',
  'cli-start',
  'ask',
  'thread-page',
  'wire',
  'wire-dht',
  'approvals',
] as const;
type Line = (typeof LINES)[number];

/** The baselines' processes are this script in another mode. */
async function baselineMode(mode: string, rest: string[]): Promise<boolean> {
  const forever = () => new Promise<never>(() => {}); // serves until the bench kills it
  switch (mode) {
    case 'ws-baseline-server':
      await baselineServer(rest[0]!, rest[1]!);
      return forever();
    case 'ws-baseline-client':
      await baselineClient(Number(rest[0]), rest[1]!, Number(rest[2]), Number(rest[3]));
      return true;
    case 'store-baseline-receiver':
      await storeReceiver(rest[0]!, Number(rest[1]));
      return forever();
    case 'store-baseline-sender':
      await storeSender(rest[0]!, Number(rest[1]), Number(rest[2]), Number(rest[3]));
      return true;
    case 'thread-page-worker':
      await threadPageWorker(rest[0]!, Number(rest[1]), Number(rest[2]), Number(rest[3]));
      return true;
    case 'a2a-server':
      await a2aServer();
      return forever();
    case 'a2a-client':
      await a2aClient(Number(rest[0]), Number(rest[1]), Number(rest[2]));
      return true;
    default:
      return false;
  }
}

async function main(): Promise<void> {
  log.setQuiet(true);
  const started = Date.now();
  const argv = process.argv.slice(2);
  if (argv[0] && (await baselineMode(argv[0], argv.slice(1)))) return;
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { scale: { type: 'string' }, threads: { type: 'string' }, profile: { type: 'string' } },
  });
  for (const name of positionals)
    if (!(LINES as readonly string[]).includes(name))
      throw new Error(`unknown benchmark "${name}"; the lines are ${LINES.join(', ')}`);
  const selected = new Set<Line>(positionals.length ? (positionals as Line[]) : LINES);
  const scale = values.scale === undefined ? 1 : Number(values.scale);
  if (!(scale > 0 && scale <= 1)) throw new Error('--scale must be a number in (0, 1]');
  const threads = values.threads?.split(',').map(Number);

  if (selected.has('turn-overhead') || selected.has('stop-latency'))
    await turnBench(emit, progress, {
      scale,
      lines: { turnOverhead: selected.has('turn-overhead'), stopLatency: selected.has('stop-latency') },
    });
  if (selected.has('sandbox-start')) await sandboxStartBench(emit, progress, { scale });
  if (selected.has('cli-start')) await cliStartBench(emit, progress, { scale });
  if (selected.has('ask')) await askBench(emit, progress, { scale });
  if (selected.has('thread-page')) await threadPageBench(emit, progress, { scale });
  if (selected.has('wire')) await wireBench(emit, progress, { threads, profileDir: values.profile, scale });
  if (selected.has('approvals')) await approvalsBench(emit, progress, { scale });
  if (selected.has('wire-dht'))
    await wireDhtBench(emit, progress, { threads: threads?.filter((t) => t > 1), scale, profileDir: values.profile });
  progress(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
