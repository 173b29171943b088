// The DHT carrier between two `parley serve` processes on a loopback testnet: kill -9 of
// either side, restarted on another port (its address changes, its DHT key does not),
// and both are back online within 5 s of the restart.
import createTestnet, { type Testnet } from '@hyperswarm/testnet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../test-support/api-client';
import { removeDataDir, startServe, type ServeProcess } from '../../test-support/serve-process';
import { until } from '../../test-support/until';

let testnet: Testnet;
let dhtArgs: string[];
beforeAll(async () => {
  testnet = await createTestnet(3);
  dhtArgs = ['--dht-bootstrap', testnet.bootstrap.map((node) => `${node.host}:${node.port}`).join(',')];
});
afterAll(async () => {
  await testnet?.destroy();
});

async function start(name: string, dataDir?: string): Promise<{ serve: ServeProcess; api: ApiClient }> {
  const serve = await startServe({ name, extraArgs: dhtArgs, ...(dataDir ? { dataDir } : {}) });
  return { serve, api: await serve.connect() };
}

const list = (api: ApiClient) => api.call('connections.list', {});

describe('the DHT carrier across kill -9', () => {
  it('brings either side back online within 5 s of its restart at a new port, both on the DHT', async () => {
    let alice = await start('alice');
    let bob = await start('bob');
    try {
      expect(await bob.api.call('network.get', {})).toMatchObject({ dht: { state: 'on' } });
      const { code } = await bob.api.call('connections.invite', {});
      await alice.api.call('connections.accept', { code });
      await until(async () => (await list(bob.api))[0]?.online === true, 'bob sees alice');
      for (const side of ['bob', 'alice'] as const) {
        const crashed = side === 'bob' ? bob : alice;
        const other = side === 'bob' ? alice : bob;
        const oldAddress = (await crashed.api.call('network.get', {})).listening;
        crashed.api.close();
        await crashed.serve.crash();
        await until(async () => (await list(other.api))[0]?.online === false, `${side} seen offline`);
        const back = await start(side, crashed.serve.dataDir);
        // From the moment the restarted process serves.
        const restarted = Date.now();
        expect((await back.api.call('network.get', {})).listening).not.toBe(oldAddress);
        await until(async () => (await list(back.api))[0]?.online === true, `${side} back`, 5_000);
        await until(async () => (await list(other.api))[0]?.online === true, `${side} seen back`, 5_000);
        expect(Date.now() - restarted).toBeLessThan(5_000);
        if (side === 'bob') bob = back;
        else alice = back;
      }
      // Both keep working on the link they came back on.
      const [atAlice] = await list(alice.api);
      expect(atAlice?.online).toBe(true);
      expect(atAlice?.dhtKey).toBe((await bob.api.call('network.get', {})).dht.key);
    } finally {
      for (const { serve, api } of [alice, bob]) {
        api.close();
        await serve.stop();
        removeDataDir(serve.dataDir);
      }
    }
  });
});
