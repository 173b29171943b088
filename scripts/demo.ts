// `npm run demo`: three headless installations (alice, bob and carol) on loopback, each
// a real `parley serve` process with its own data folder and ports, paired over mutual
// TLS carried by the DHT (a small loopback testnet the demo starts itself, never the
// public bootstrap nodes; invitations hold only the DHT key), with scripted agents. It
// plays ADR 0035's story (scripts/demo/story.ts) and prints what happened as a plain-text
// transcript, one event per line, then the three UI addresses.
//
//   node dist/demo.js [--exit] [--data-root DIR]
//
// --exit        stop everything after the story and exit 0 (a smoke test: any state
//               other than the expected one prints expected/seen and exits 1);
// --data-root   keep the installations in DIR/alice, DIR/bob and DIR/carol (new or
//               empty folders) instead of temporary ones that are removed at the end.
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Testnet } from '@hyperswarm/testnet';
import { removeDataDir } from '../test-support/serve-process';
import { startNode, startTestnet, type Node } from './demo/cast';
import { play } from './demo/story';
import { heading, line, Unexpected, who } from './demo/transcript';

// Never the public DHT from the project's own runs: its installations (and their children) stay off it.
process.env.PARLEY_DHT_BOOTSTRAP ??= 'off';

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      exit: { type: 'boolean', default: false },
      'data-root': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write('usage: node dist/demo.js [--exit] [--data-root DIR]\n');
    return 0;
  }
  const dataRoot = values['data-root'] ? path.resolve(values['data-root']) : undefined;
  const nodes: Node[] = [];
  let testnet: Testnet | null = null;
  const cleanup = async (keepData: boolean) => {
    for (const node of nodes) node.watcher.stop();
    await Promise.all(nodes.map((node) => node.serve.stop()));
    await testnet?.destroy();
    if (!dataRoot && !keepData) for (const node of nodes) removeDataDir(node.serve.dataDir);
  };
  process.once('exit', () => {
    // A last resort if something threw past the cleanup.
    for (const node of nodes) if (node.serve.process.exitCode === null) node.serve.process.kill('SIGKILL');
  });
  try {
    heading(
      'Starting a DHT of three nodes on loopback, then alice, bob and carol (parley serve, separate data folders)',
    );
    const dht = await startTestnet();
    testnet = dht.testnet;
    line(`dht      bootstrap nodes ${dht.bootstrap} (loopback only; the public DHT is never used)`);
    for (const name of ['alice', 'bob', 'carol']) nodes.push(await startNode(name, dataRoot, dht.bootstrap));
    const [alice, bob, carol] = nodes as [Node, Node, Node];
    await play({ alice, bob, carol });
  } catch (error) {
    await Promise.all(nodes.map((node) => node.watcher.settle().catch(() => undefined)));
    if (error instanceof Unexpected) {
      process.stdout.write(`\nDEMO FAILED\n  expected: ${error.expected}\n  seen:     ${error.seen}\n`);
    } else {
      process.stdout.write(`\nDEMO FAILED\n  ${(error as Error).stack ?? String(error)}\n`);
    }
    for (const node of nodes) {
      const stderr = node.serve.stderr().trim();
      if (stderr) process.stdout.write(`\n${node.name}'s server said:\n${stderr.split('\n').slice(-20).join('\n')}\n`);
    }
    if (!dataRoot && nodes.length > 0)
      process.stdout.write(`\nData kept for a look: ${nodes.map((node) => node.serve.dataDir).join(' ')}\n`);
    await cleanup(true);
    return 1;
  }

  heading('The story is done. The three installations (open in a browser):');
  for (const node of nodes)
    process.stdout.write(`  ${who(node.name)} ${node.serve.info.ui}#token=${node.serve.info.token}\n`);
  if (values.exit) {
    process.stdout.write('\nStopping (--exit).\n');
    await cleanup(false);
    return 0;
  }
  process.stdout.write('\nRunning; what happens from now on is printed below. Ctrl-C stops all three.\n\n');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  process.stdout.write('\nStopping.\n');
  await cleanup(false);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`demo: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
