// Whether an inviter can be reached by its DHT key, as Settings shows it: the real page in
// Chromium, served by `parley serve` on a loopback testnet and by one kept off the DHT.
import createTestnet, { type Testnet } from '@hyperswarm/testnet';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServe } from '../test-support/serve-process';
import {
  assertReady,
  describeInBrowser,
  launchChromium,
  openSettings,
  openUi,
  shoot,
  stopNodes,
  visible,
  type Node,
} from './support/ui-harness';

let browser: Browser | undefined;
let testnet: Testnet | undefined;
const nodes: Node[] = [];

async function node(name: string, extraArgs: string[]): Promise<Node> {
  const serve = await startServe({ name, extraArgs });
  const api = await serve.connect();
  const { person } = await api.call('session.whoami', {});
  const started = { name, serve, api, owner: person };
  nodes.push(started);
  return started;
}

beforeAll(async () => {
  assertReady();
  [browser, testnet] = await Promise.all([launchChromium(), createTestnet(3)]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stopNodes(nodes);
  await testnet?.destroy();
});

describeInBrowser('Settings on whether peers can reach this installation by DHT', () => {
  it(
    'says reachable from anywhere by its key on the DHT, and off when it is kept off',
    { timeout: 60_000 },
    async () => {
      if (!browser || !testnet) throw new Error('setup failed');
      const bootstrap = testnet.bootstrap.map((n) => `${n.host}:${n.port}`).join(',');
      const [onDht, offDht] = await Promise.all([
        node('bob', ['--dht-bootstrap', bootstrap]),
        node('carol', ['--no-dht']),
      ]);
      const { dht } = await onDht.api.call('network.get', {});
      expect(dht.state).toBe('on');
      for (const [who, line] of [
        [onDht, `reachable from anywhere by key ${dht.key!.slice(0, 16)}… (${bootstrap})`],
        [offDht, 'off: peers reach you only at the address above'],
      ] as const) {
        const { page, context, problems } = await openUi(browser, who);
        try {
          await openSettings(page, 'Connections');
          const card = page.getByRole('article', { name: 'How peers reach you' });
          await visible(card.getByText(line, { exact: true }));
          if (who === onDht) await shoot(page, 'settings-reachable-by-dht');
          expect(problems).toEqual([]);
        } finally {
          await context.close();
        }
      }
    },
  );
});
