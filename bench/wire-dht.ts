// The wire over the DHT carrier next to the direct one, in the same run: two wire peers
// paired by an invitation with no address on a loopback HyperDHT testnet (holepunched
// over UDP on 127.0.0.1), against two paired by address, at the same agent conversation
// counts. Also the time from `connections.accept` to the link being online.
import createTestnet from '@hyperswarm/testnet';
import { measureWire, openWirePair, profiling } from './wire';

export type WireDhtLine = {
  name: 'wire-dht';
  threads: number;
  textsPerSec: number;
  p50Ms: number | null;
  p99Ms: number | null;
  directPerSec: number;
  directP99Ms: number | null;
  ratio: number;
  acceptToOnlineMs: number;
  directAcceptToOnlineMs: number;
  goal: string;
  met: boolean;
  scale?: number;
};

const round = (value: number) => Math.round(value * 100) / 100;

export async function wireDhtBench(
  emit: (line: WireDhtLine) => void,
  progress: (message: string) => void,
  options: { threads?: number[]; scale?: number; profileDir?: string } = {},
): Promise<void> {
  const counts = options.threads ?? [100];
  const scale = options.scale ?? 1;
  const measureMs = Math.max(500, Math.round(5_000 * scale));
  const testnet = await createTestnet(3);
  try {
    const bootstrap = testnet.bootstrap.map((node) => `${node.host}:${node.port}`).join(',');
    const direct = await openWirePair();
    const dht = await openWirePair({ env: { PARLEY_DHT_BOOTSTRAP: bootstrap }, args: ['--no-address'] });
    try {
      for (const pair of [direct, dht])
        await pair.alice.request('prepare', { threads: Math.max(...counts), to: 'bob/sink', role: 'source' });
      for (const threads of counts) {
        const over = (what: 'direct' | 'dht', pair: typeof direct) =>
          measureWire(
            pair.alice,
            pair.bob,
            threads,
            measureMs,
            profiling(options.profileDir, `wire-dht-${threads}-${what}`, pair.alice, pair.bob),
          );
        const overDirect = await over('direct', direct);
        const overDht = await over('dht', dht);
        for (const [what, stats] of [
          ['direct', overDirect],
          ['dht', overDht],
        ] as const)
          if (stats.failed > 0 || Object.keys(stats.errors).length > 0)
            throw new Error(
              `wire-dht ${threads} (${what}): ${stats.failed} failed, errors ${JSON.stringify(stats.errors)}`,
            );
        const ratio = round(overDht.textsPerSec / overDirect.textsPerSec);
        progress(
          `wire-dht ${threads}: dht ${overDht.textsPerSec}/s p99 ${overDht.p99Ms} ms, direct ${overDirect.textsPerSec}/s ` +
            `p99 ${overDirect.p99Ms} ms; accept→online ${dht.acceptMs} ms over the DHT, ${direct.acceptMs} ms direct`,
        );
        emit({
          name: 'wire-dht',
          threads,
          textsPerSec: overDht.textsPerSec,
          p50Ms: overDht.p50Ms,
          p99Ms: overDht.p99Ms,
          directPerSec: overDirect.textsPerSec,
          directP99Ms: overDirect.p99Ms,
          ratio,
          acceptToOnlineMs: dht.acceptMs,
          directAcceptToOnlineMs: direct.acceptMs,
          goal: 'ratio>=0.8 and acceptToOnlineMs<=2000',
          met: ratio >= 0.8 && dht.acceptMs <= 2_000,
          ...(scale === 1 ? {} : { scale }),
        });
      }
    } finally {
      await Promise.all([direct.close(), dht.close()]);
    }
  } finally {
    await testnet.destroy();
  }
}
