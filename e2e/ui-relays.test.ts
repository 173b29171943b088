// Settings → Connections → Relays in Chromium, against a real `parley serve` on a loopback
// testnet and a second one running as a relay: an owner adds the relay by its key, sees
// whether it answers, and removes it; a key that is not one is refused in plain words.
import createTestnet, { type Testnet } from '@hyperswarm/testnet';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { decodeInvite, encodeInvite, type Invite } from '../main/engine/invitation';
import { removeDataDir, startServe, type ServeProcess } from '../test-support/serve-process';
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
let relay: ServeProcess | undefined;
const nodes: Node[] = [];

beforeAll(async () => {
  assertReady();
  [browser, testnet] = await Promise.all([launchChromium(), createTestnet(3)]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await stopNodes(nodes);
  await relay?.stop();
  if (relay) removeDataDir(relay.dataDir);
  await testnet?.destroy();
});

describeInBrowser('Settings: the relays this installation trusts', () => {
  it('adds a relay by its key, says it answers, refuses a wrong key, and removes it', { timeout: 90_000 }, async () => {
    if (!browser || !testnet) throw new Error('setup failed');
    const bootstrap = testnet.bootstrap.map((n) => `${n.host}:${n.port}`).join(',');
    relay = await startServe({ name: 'relay', extraArgs: ['--relay', '--dht-bootstrap', bootstrap] });
    const key = relay.info.relay!;
    // Neither holepunches, as behind two routers that change ports on every connection: only a relay joins them.
    const strict = { PARLEY_DHT_HOLEPUNCH: 'off' };
    const serve = await startServe({ name: 'bob', extraArgs: ['--dht-bootstrap', bootstrap], env: strict });
    const api = await serve.connect();
    const { person } = await api.call('session.whoami', {});
    const bob = { name: 'bob', serve, api, owner: person };
    nodes.push(bob);
    const carolServe = await startServe({ name: 'carol', extraArgs: ['--dht-bootstrap', bootstrap], env: strict });
    const carol = await carolServe.connect();
    nodes.push({
      name: 'carol',
      serve: carolServe,
      api: carol,
      owner: (await carol.call('session.whoami', {})).person,
    });

    const { page, context, problems } = await openUi(browser, bob);
    try {
      await openSettings(page, 'Connections');
      const relays = page.getByRole('region', { name: 'Relays' });
      await visible(relays.getByText('No relays: peers behind strict routers cannot meet.'));

      const form = relays.getByRole('form', { name: 'Add a relay' });
      await form.getByLabel('Relay key').fill('not-a-key');
      await form.getByRole('button', { name: 'Add relay' }).click();
      await visible(form.getByRole('alert').getByText(/a relay key is 64 hexadecimal characters/));

      await form.getByLabel('Relay key').fill(key);
      await form.getByLabel('Where it runs (optional)').fill('relay.home.test');
      await form.getByRole('button', { name: 'Add relay' }).click();
      const item = relays.getByRole('listitem', { name: 'Relay relay.home.test' });
      await visible(item.getByText('Answers', { exact: true }));
      await visible(item.getByText(`${key.slice(0, 16)}…`));
      await shoot(page, 'settings-relays');
      // What the page shows is what the installation keeps: the next invitation carries it, and carol,
      // given only bob's key, reaches him through it; his card says so.
      expect((await api.call('relays.list', {})).map((r) => r.key)).toEqual([key]);
      const { code } = await api.call('connections.invite', {});
      const { address: _address, ...keyOnly } = decodeInvite(code) as Extract<Invite, { v: 3 }>;
      await carol.call('connections.accept', { code: encodeInvite(keyOnly).code });
      const card = page.getByRole('article', { name: 'Connection carol' });
      await visible(card.getByText(/relayed through relay\.home\.test \(the relay sees only ciphertext\)/));
      await shoot(page, 'settings-connection-relayed');

      await item.getByRole('button', { name: 'Remove' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Remove relay' }).click();
      await visible(relays.getByText('No relays: peers behind strict routers cannot meet.'));
      expect(await api.call('relays.list', {})).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
