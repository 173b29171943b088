// The wire over the DHT carrier next to the direct one, in the same run: two wire peers
// paired by an invitation with no address on a loopback HyperDHT testnet (holepunched
// over UDP on 127.0.0.1), against two paired by address, at the same agent conversation
// counts, in rounds taken in turn; the ratio is the median round's. Also the time from
// `connections.accept` to the link being online.
import createTestnet from '@hyperswarm/testnet';
import { measureWire, openWirePair, profiling, type WireStats } from './wire';

export type WireDhtLine = {
  name: 'wire-dht';
  threads: number;
  textsPerSec: number;
  p50Ms: number | null;
  p99Ms: number | null;
  directPerSec: number;
  directP99Ms: number | null;
  /** The median of the rounds' ratios. */
  ratio: number;
  rounds: Array<{ dhtPerSec: number; directPerSec: number; ratio: number }>;
  acceptToOnlineMs: number;
  directAcceptToOnlineMs: number;
  goal: string;
  met: boolean;
  scale?: number;
};

const round2 = (value: number) => Math.round(value * 100) / 100;

/**
 * Direct and over the DHT take turns this many times: measured once each, seconds apart,
 * the same build gave 0.69–0.84 within minutes, as the machine's speed drifted.
 */
const ROUNDS = 3;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
}

export async function wireDhtBench(
  emit: (line: WireDhtLine) => void,
  progress: (message: string) => void,
  options: { threads?: number[]; scale?: number; profileDir?: string } = {},
): Promise<void> {
  const counts = options.threads ?? [100];
  const scale = options.scale ?? 1;
  // Three rounds of each take as long as one of 5 s did.
  const measureMs = Math.max(500, Math.round((5_000 / ROUNDS) * scale));
  const testnet = await createTestnet(3);
  try {
    const bootstrap = testnet.bootstrap.map((node) => `${node.host}:${node.port}`).join(',');
    const direct = await openWirePair();
    const dht = await openWirePair({ env: { PARLEY_DHT_BOOTSTRAP: bootstrap }, args: ['--no-address'] });
    try {
      for (const pair of [direct, dht])
        await pair.alice.request('prepare', { threads: Math.max(...counts), to: 'bob/sink', role: 'source' });
      for (const threads of counts) {
        const over = (what: 'direct' | 'dht', pair: typeof direct, round: number) =>
          measureWire(
            pair.alice,
            pair.bob,
            threads,
            measureMs,
            // One profile per carrier: the first round's.
            round === 0 ? profiling(options.profileDir, `wire-dht-${threads}-${what}`, pair.alice, pair.bob) : null,
          );
        const rounds: Array<{ direct: WireStats; dht: WireStats; ratio: number }> = [];
        for (let r = 0; r < ROUNDS; r++) {
          // Each goes first in turn, so neither always follows the other's aftermath.
          const measured: Partial<Record<'direct' | 'dht', WireStats>> = {};
          for (const what of r % 2 === 0 ? (['direct', 'dht'] as const) : (['dht', 'direct'] as const))
            measured[what] = await over(what, what === 'direct' ? direct : dht, r);
          const overDirect = measured.direct!;
          const overDht = measured.dht!;
          for (const [what, stats] of [
            ['direct', overDirect],
            ['dht', overDht],
          ] as const)
            if (stats.failed > 0 || Object.keys(stats.errors).length > 0)
              throw new Error(
                `wire-dht ${threads} (${what}): ${stats.failed} failed, errors ${JSON.stringify(stats.errors)}`,
              );
          rounds.push({
            direct: overDirect,
            dht: overDht,
            ratio: round2(overDht.textsPerSec / overDirect.textsPerSec),
          });
        }
        const ratio = median(rounds.map((r) => r.ratio));
        // The figures shown are the median round's.
        const { direct: overDirect, dht: overDht } = rounds.find((r) => r.ratio === ratio)!;
        progress(
          `wire-dht ${threads}: dht ${overDht.textsPerSec}/s p99 ${overDht.p99Ms} ms, direct ${overDirect.textsPerSec}/s ` +
            `p99 ${overDirect.p99Ms} ms (ratios ${rounds.map((r) => r.ratio).join(', ')}); ` +
            `accept→online ${dht.acceptMs} ms over the DHT, ${direct.acceptMs} ms direct`,
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
          rounds: rounds.map((r) => ({
            dhtPerSec: r.dht.textsPerSec,
            directPerSec: r.direct.textsPerSec,
            ratio: r.ratio,
          })),
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
