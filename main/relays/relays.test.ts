// Relays on a loopback testnet: a third installation runs `parley serve --relay`, two
// installations that never holepunch (so they behave as two randomising routers would)
// pair through it, and texts and a Stop cross it. A relay nobody chose is refused by the
// DHT firewall before any byte reaches TLS.
import createTestnet, { type Testnet } from '@hyperswarm/testnet';
import DHT from 'hyperdht';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../paths';
import { BlindRelay } from '../engine/blind-relay-server';
import { decodeInvite } from '../engine/invitation';
import { chosenRelay, nextDhtStep, relaysToTry } from '../engine/relay-choice';
import type { DhtBootstrap } from '../net/dht-bootstrap';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer } from '../../test-support/network';
import { removeDataDir, startServe, type ServeProcess } from '../../test-support/serve-process';

let testnet: Testnet;
let bootstrap: DhtBootstrap;
let relay: ServeProcess;
let relayKey: string;
beforeAll(async () => {
  assertBuilt();
  testnet = await createTestnet(3);
  bootstrap = { kind: 'nodes', nodes: testnet.bootstrap };
  relay = await startServe({
    name: 'relay',
    extraArgs: ['--relay', '--dht-bootstrap', testnet.bootstrap.map((b) => `${b.host}:${b.port}`).join(',')],
  });
  relayKey = relay.info.relay!;
}, 60_000);
afterAll(async () => {
  await relay?.stop();
  if (relay) removeDataDir(relay.dataDir);
  await testnet?.destroy();
});

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

/** An installation on the testnet that never holepunches and has no address: only a relay can join it to another such. */
async function strict(name: string) {
  const t = await openPeer(name, { dht: bootstrap, dhtHolepunch: false });
  open.push(t);
  t.installation.engine.setAddress(null);
  return t;
}

/** A stranger's dial to `key` with an invitation open there, through `relayThrough`: 'open' or hyperdht's code. */
function dialThrough(node: DHT, key: string, relayThrough: string): Promise<string> {
  return new Promise((resolve) => {
    const stream = node.connect(Buffer.from(key, 'hex'), {
      relayThrough: Buffer.from(relayThrough, 'hex'),
      holepunch: () => false,
      localConnection: false,
      fastOpen: false,
    });
    stream.once('open', () => {
      resolve('open');
      stream.destroy();
    });
    stream.once('error', (error: Error & { code?: string }) => resolve(error.code ?? error.message));
  });
}

describe('relays', () => {
  it('says its relay key in serve.json, derived from the identity: another key than its DHT key', async () => {
    expect(relayKey).toMatch(/^[0-9a-f]{64}$/);
    const api = await relay.connect();
    try {
      const status = await api.call('network.get', {});
      expect(status.dht).toMatchObject({ state: 'on', relay: relayKey });
      expect(status.dht.key).not.toBe(relayKey);
    } finally {
      api.close();
    }
  });

  it('pairs two installations that cannot holepunch through the relay the inviter chose, and a text and a Stop cross it', async () => {
    const alice = await strict('alice');
    const bob = await strict('bob');
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });

    // Without a relay the pair cannot meet, and alice is told what to do.
    const { code: first } = await bob.owner('connections.invite', { roles: ['researcher'] });
    await expect(alice.owner('connections.accept', { code: first, roles: ['assistant'] })).rejects.toThrow(
      /could not reach bob \(tried by its DHT key: holepunching through the routers failed\)\. .*one of you can add a relay\.$/,
    );

    // bob adds the relay; it answers, and his next invitation carries it.
    const added = await bob.owner('relays.add', { key: relayKey.toUpperCase(), address: 'relay.test:49737' });
    expect(added).toMatchObject({ key: relayKey, address: 'relay.test:49737', answers: true });
    expect(await bob.owner('relays.list', {})).toEqual([added]);
    const { code } = await bob.owner('connections.invite', { roles: ['researcher'] });
    expect(decodeInvite(code)).toMatchObject({ v: 3, relays: [relayKey] });
    await alice.owner('connections.accept', { code, roles: ['assistant'] });

    const atAlice = await alice.waitFor(async () => {
      const [c] = await alice.owner('connections.list', {});
      return c?.online && c.peerRoles.length === 1 ? c : undefined;
    }, 'alice online with bob');
    // alice did not choose this relay herself: she knows it by key, from bob's invitation.
    expect(atAlice).toMatchObject({ path: 'relayed', relay: { key: relayKey, address: null }, peerRelays: [relayKey] });
    const atBob = await bob.waitFor(async () => {
      const [c] = await bob.owner('connections.list', {});
      return c?.online ? c : undefined;
    }, 'bob online with alice');
    expect(atBob).toMatchObject({ path: 'relayed', relay: { key: relayKey, address: 'relay.test:49737' } });
    // What bob's roles see of their peers (`parley peers`, `parley context`) names the relay too.
    expect(bob.installation.engine.peers()).toMatchObject([{ peer: 'alice', path: 'relayed', relay: relayKey }]);

    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: through the relay?' });
    await alice.waitFor(async () => {
      const { messages } = await alice.owner('conversations.get', { id: conversation.id });
      return messages.some((m) => m.body === 'bob/researcher says: answer from researcher: through the relay?');
    }, "bob's answer through the relay");

    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: sleep 60' });
    const bobThread = await bob.waitFor(async () => {
      const list = await bob.owner('threads.list', { peerStarted: true });
      return list.find((t) => t.run.state === 'running');
    }, "bob's researcher working on the long request");
    expect((await bob.owner('threads.stop', { id: bobThread.id })).stopped).toBe(true);
    await alice.waitFor(async () => {
      const threads = await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } });
      return threads.find((t) => t.peerTurn?.state === 'stopped');
    }, "alice's ask shown stopped by bob");

    // A dropped link comes back through the relay, whichever side dials first.
    // Seen as it happens (the redial may be quick): the change event of the link's end.
    const dropped = new Promise<void>((resolve) => {
      const off = alice.installation.events.observe(() => {
        if (alice.installation.engine.peers()[0]?.state !== 'offline') return;
        off();
        resolve();
      });
    });
    bob.installation.engine.reconnectAll();
    await dropped;
    const again = await alice.waitFor(async () => {
      const [c] = await alice.owner('connections.list', {});
      return c?.online ? c : undefined;
    }, 'alice online with bob again');
    expect(again).toMatchObject({ path: 'relayed', relay: { key: relayKey } });

    // Removed, the relay is no longer offered, and a relay that is not there is said not to answer.
    await bob.owner('relays.remove', { id: added.id });
    expect(await bob.owner('relays.list', {})).toEqual([]);
    // alice hears of it at once (a reach frame), and would no longer dial bob through it.
    await alice.waitFor(async () => {
      const [c] = await alice.owner('connections.list', {});
      return c?.peerRelays.length === 0;
    }, 'alice told that bob no longer names the relay');
    const missing = await bob.owner('relays.add', { key: 'ab'.repeat(32) });
    expect(missing).toMatchObject({ answers: false, address: null });
  }, 90_000);

  it('refuses a stream through a relay nobody chose, before any byte reaches TLS, and takes one through a chosen relay', async () => {
    const bob = await strict('bob');
    await bob.owner('relays.add', { key: relayKey });
    await bob.owner('connections.invite', {});
    // Another relay, which nobody here chose.
    const other = await openPeer('mallory', { dht: bootstrap, relay: true });
    open.push(other);
    const unchosen = other.installation.engine.relayKey!;
    const stranger = new DHT({ bootstrap: testnet.bootstrap, host: '127.0.0.1' });
    try {
      const key = bob.installation.engine.dhtKey!;
      expect(await dialThrough(stranger, key, unchosen)).toBe('PEER_CONNECTION_FAILED');
      expect(await dialThrough(stranger, key, relayKey)).toBe('open');
    } finally {
      await stranger.destroy();
    }
  }, 60_000);

  it('relays at most its bound of peers at once', async () => {
    const node = testnet.createNode();
    const owner = await openPeer('relay-owner', { dht: { kind: 'off' } });
    open.push(owner);
    const bounded = await BlindRelay.start(node, owner.installation.identity, 1);
    const clients = [0, 1].map(() => new DHT({ bootstrap: testnet.bootstrap, host: '127.0.0.1' }));
    try {
      const first = clients[0]!.connect(Buffer.from(bounded.key, 'hex'));
      await new Promise((resolve, reject) => first.once('open', resolve).once('error', reject));
      await expect.poll(() => bounded.active).toBe(1);
      const second = clients[1]!.connect(Buffer.from(bounded.key, 'hex'));
      second.on('error', () => {});
      await new Promise((resolve) => second.once('close', resolve));
      expect(bounded.active).toBe(1);
      first.destroy();
    } finally {
      await bounded.close();
      for (const client of clients) await client.destroy();
      await node.destroy();
    }
  });
});

describe('which relay, and when', () => {
  const holepunch = Object.assign(new Error('HOLEPUNCH_DOUBLE_RANDOMIZED_NATS'), {
    code: 'HOLEPUNCH_DOUBLE_RANDOMIZED_NATS',
  });
  const aborted = Object.assign(new Error('HOLEPUNCH_ABORTED'), { code: 'HOLEPUNCH_ABORTED' });
  const refused = Object.assign(new Error('PEER_CONNECTION_FAILED'), { code: 'PEER_CONNECTION_FAILED' });
  const [r1, r2] = ['1'.repeat(64), '2'.repeat(64)] as const;

  it.each([
    ['a failed holepunch goes to the first relay', holepunch, 1, 6_000, null, [r1, r2], { kind: 'relay', relay: r1 }],
    ['an aborted holepunch too', aborted, 1, 6_000, null, [r1], { kind: 'relay', relay: r1 }],
    ['with no relay, an aborted holepunch is tried once more', aborted, 1, 6_000, null, [], { kind: 'retry' }],
    ['with no relay, two randomising routers give up', holepunch, 1, 6_000, null, [], { kind: 'give up' }],
    ['a refusal by the firewall is not a holepunch to go round', refused, 1, 6_000, null, [r1], { kind: 'give up' }],
    ['a failed relay passes to the next', aborted, 2, 6_000, r1, [r1, r2], { kind: 'relay', relay: r2 }],
    ['but not without time', aborted, 2, 1_000, r1, [r1, r2], { kind: 'give up' }],
    ['the last relay gives up', aborted, 3, 6_000, r2, [r1, r2], { kind: 'give up' }],
  ] as const)('%s', (_name, error, attempt, msLeft, relay, relays, expected) => {
    expect(nextDhtStep(error, attempt, msLeft, relay, relays)).toEqual(expected);
  });

  it.each([
    [null, [], [], true],
    [r1, [r1], [], true],
    [r1, [], [r1], true],
    [r2, [r1], [r1], false],
    [r1, [], [], false],
  ] as const)('a stream through %s with ours %j and theirs %j is admitted: %s', (relay, ours, theirs, expected) => {
    expect(chosenRelay(relay, ours, theirs)).toBe(expected);
  });

  it('tries ours first, then the peer’s, each once', () => {
    expect(relaysToTry([r2, r1], [r1, '3'.repeat(64)])).toEqual([r2, r1, '3'.repeat(64)]);
  });
});
