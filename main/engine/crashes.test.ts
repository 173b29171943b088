// Crashes during traffic: two installations in separate processes, thousands of texts over
// 100 agent conversations, and kill -9 of either side at random points, each time
// started again on the same data folder. Nothing may be lost, repeated or reordered.
// Run once over the direct carrier and once over the DHT on a loopback testnet, where the
// invitation holds no address and each side finds the other only by its DHT key.
import createTestnet, { type Testnet } from '@hyperswarm/testnet';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWirePeer, type WirePeer } from '../../test-support/wire-peer';
import { makeDataDir, removeDataDir } from '../../test-support/data-folder';

interface Progress {
  running: boolean;
  sent: number;
  acked: number;
  failed: number;
}
interface Received {
  threads: Array<{ thread: string; count: number; lastSeq: number; inOrder: boolean; duplicates: number }>;
}

const THREADS = 100;

interface Carrier {
  name: string;
  perThread: number;
  crashes: number;
  /** How alice's link to bob came, as connections.list says. */
  path: 'direct' | 'holepunched';
  /** What both wire peers are started with. */
  start(): { env: NodeJS.ProcessEnv; args: string[] };
}

let testnet: Testnet | null = null;
const carriers: Carrier[] = [
  { name: 'direct', perThread: 100, crashes: 6, path: 'direct', start: () => ({ env: {}, args: [] }) },
  {
    // Smaller: two cores carry the testnet's nodes and both installations' UDP here.
    name: 'the DHT, with no address in the invitation',
    perThread: 20,
    crashes: 3,
    path: 'holepunched',
    start: () => ({
      env: { PARLEY_DHT_BOOTSTRAP: testnet!.bootstrap.map((node) => `${node.host}:${node.port}`).join(',') },
      args: ['--no-address'],
    }),
  },
];

beforeAll(async () => {
  testnet = await createTestnet(3);
});
afterAll(async () => {
  await testnet?.destroy();
});

describe.each(carriers)('crashes during traffic over $name', (carrier) => {
  const PER_THREAD = carrier.perThread;
  const CRASHES = carrier.crashes;
  const dirs: string[] = [];
  const peers = new Set<WirePeer>();
  afterEach(async () => {
    for (const peer of peers) await peer.kill();
    peers.clear();
    for (const dir of dirs.splice(0)) removeDataDir(dir);
  });

  it(`loses, repeats and reorders nothing when either side is killed -9 at random points during ${THREADS * PER_THREAD} texts over ${THREADS} agent conversations`, async () => {
    const aliceDir = makeDataDir('parley-crash-alice-');
    const bobDir = makeDataDir('parley-crash-bob-');
    dirs.push(aliceDir, bobDir);
    const start = async (side: 'alice' | 'bob') => {
      const { env, args } = carrier.start();
      const peer = await startWirePeer({
        dataDir: side === 'alice' ? aliceDir : bobDir,
        name: side,
        env,
        args: ['--budget', '1000', '--reconnect-min', '20', '--reconnect-max', '300', ...args],
      });
      peers.add(peer);
      return peer;
    };
    let alice = await start('alice');
    let bob = await start('bob');
    const { code } = await bob.request<{ code: string }>('invite', { roles: ['sink'] });
    await alice.request('accept', { code });
    await alice.request('limit', { limit: THREADS * PER_THREAD });
    await bob.request('limit', { limit: THREADS * PER_THREAD });
    await alice.request('prepare', { threads: THREADS, to: 'bob/sink' });

    const sendAll = (peer: WirePeer) =>
      peer.request('send', { threads: THREADS, perThread: PER_THREAD, concurrency: THREADS }).catch(() => undefined);
    const total = THREADS * PER_THREAD;
    let sending = sendAll(alice);
    let crashes = 0;
    const log: string[] = [];
    while (crashes < CRASHES) {
      // A random point: once this many more texts were acked since the last crash.
      const before = (await alice.request<Progress>('progress')).acked;
      const target = before + total / 50 + Math.floor(Math.random() * total * 0.12);
      for (;;) {
        const progress = await alice.request<Progress>('progress');
        if (progress.acked >= target || !progress.running) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const victim = Math.random() < 0.5 ? 'alice' : 'bob';
      const at = await alice.request<Progress>('progress');
      log.push(
        `crash ${crashes + 1}: ${victim} with ${at.acked} acked, ${at.running ? 'still sending' : 'sending done'}`,
      );
      if (process.env.PARLEY_DEBUG) console.log(log.at(-1));
      if (victim === 'alice') {
        await alice.kill();
        peers.delete(alice);
        await sending;
        alice = await start('alice');
        await alice.request('prepare', { threads: THREADS, to: 'bob/sink' });
        // Sends pick up from what the killed process had committed.
        sending = sendAll(alice);
      } else {
        await bob.kill();
        peers.delete(bob);
        bob = await start('bob');
      }
      crashes++;
    }
    await sending;
    // Whatever the crashes interrupted: finish it, then wait until everything is acked.
    await alice.request('send', { threads: THREADS, perThread: PER_THREAD, concurrency: THREADS });
    await alice.request('settle', { timeoutMs: 120_000 });

    const received = await bob.request<Received>('received');
    expect(received.threads, log.join('\n')).toHaveLength(THREADS);
    for (const thread of received.threads) {
      expect(thread, log.join('\n')).toMatchObject({
        count: PER_THREAD,
        lastSeq: PER_THREAD,
        inOrder: true,
        duplicates: 0,
      });
    }
    const progress = await alice.request<Progress>('progress');
    expect(progress.failed).toBe(0);
    const { result } = await alice.request<{ result: Array<{ address: string | null; path: string | null }> }>('call', {
      method: 'connections.list',
      params: {},
    });
    expect(result[0]).toMatchObject(
      carrier.path === 'direct' ? { path: 'direct' } : { address: null, path: carrier.path },
    );
    await alice.exit();
    await bob.exit();
    peers.clear();
  }, 300_000);
});
