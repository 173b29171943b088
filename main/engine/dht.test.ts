// The DHT carrier on a loopback testnet: real installations, real HyperDHT nodes and
// UDP sockets on 127.0.0.1, the same pinned mutual TLS as over TCP.
import createTestnet, { type Testnet } from '@hyperswarm/testnet';
import DHT from 'hyperdht';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DhtBootstrap } from '../net/dht-bootstrap';
import type { TestInstallation } from '../testing/installation';
import { openPeer, pair } from '../testing/network';
import { decodeInvite, encodeInvite } from './invitation';

let testnet: Testnet;
let bootstrap: DhtBootstrap;
beforeAll(async () => {
  testnet = await createTestnet(3);
  bootstrap = { kind: 'nodes', nodes: testnet.bootstrap };
});
afterAll(async () => {
  await testnet?.destroy();
});

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

async function peer(name: string, options: Parameters<typeof openPeer>[1] = {}) {
  const t = await openPeer(name, { dht: bootstrap, ...options });
  open.push(t);
  return t;
}

/** An installation that listens, yet has no address to put in an invitation: only its DHT key. */
async function keyOnly(name: string, options: Parameters<typeof openPeer>[1] = {}) {
  const t = await peer(name, options);
  t.installation.engine.setAddress(null);
  return t;
}

async function online(t: TestInstallation, fingerprint: string) {
  return t.waitFor(
    async () => {
      const list = await t.owner('connections.list', {});
      return list.find((c) => c.fingerprint === fingerprint && c.online);
    },
    `the link to ${fingerprint.slice(0, 8)}`,
  );
}

describe('the DHT carrier', () => {
  it('pairs by an invitation with no address, holepunched, and texts go both ways over it', async () => {
    const alice = await keyOnly('alice');
    const bob = await keyOnly('bob');
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    const invitation = await bob.owner('connections.invite', { roles: ['researcher'] });
    expect(invitation.address).toBeNull();
    const invite = decodeInvite(invitation.code);
    expect(invite).toMatchObject({ v: 3, dht: bob.installation.engine.dhtKey });
    expect(invite).not.toHaveProperty('address');
    await alice.owner('connections.accept', { code: invitation.code, roles: ['assistant'] });
    const atBob = await online(bob, alice.installation.id);
    const atAlice = await online(alice, bob.installation.id);
    expect(atAlice).toMatchObject({ address: null, dhtKey: bob.installation.engine.dhtKey, path: 'holepunched' });
    // The inviter learned the acceptor's key from the stream its link came by, and can dial it back.
    expect(atBob).toMatchObject({ address: null, dhtKey: alice.installation.engine.dhtKey, path: 'holepunched' });

    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: over the DHT?' });
    const answer = await alice.waitFor(async () => {
      const { messages } = await alice.owner('conversations.get', { id: conversation.id });
      return messages.find((m) => m.body.startsWith('bob/researcher says'))?.body;
    }, 'the answer over the DHT');
    expect(answer).toBe('bob/researcher says: answer from researcher: over the DHT?');
  });

  it('refuses a DHT key that leads to another certificate: the pin holds over the DHT', async () => {
    const bob = await keyOnly('bob');
    const carol = await keyOnly('carol');
    const alice = await keyOnly('alice');
    const { code } = await bob.owner('connections.invite', {});
    // carol has an invitation open too, so her firewall lets a stranger's key through to TLS.
    await carol.owner('connections.invite', {});
    // carol's key with bob's fingerprint: whoever answers at carol's key is not bob.
    const forged = encodeInvite({ ...decodeInvite(code), v: 3, dht: carol.installation.engine.dhtKey! }).code;
    await expect(alice.owner('connections.accept', { code: forged })).rejects.toThrow(
      /could not reach bob: tried by its DHT key \(the peer presented certificate [0-9a-f]{16}…, not the pinned/,
    );
    expect(await alice.owner('connections.list', {})).toEqual([]);
    expect(await carol.owner('connections.list', {})).toEqual([]);
  });

  it('refuses a stranger’s DHT key before any byte while no invitation is open, and takes it while one is', async () => {
    const bob = await keyOnly('bob');
    const stranger = new DHT({ bootstrap: testnet.bootstrap, host: '127.0.0.1' });
    try {
      const tryOnce = () =>
        new Promise<string>((resolve) => {
          const stream = stranger.connect(Buffer.from(bob.installation.engine.dhtKey!, 'hex'));
          stream.once('open', () => {
            resolve('open');
            stream.destroy();
          });
          stream.once('error', (error: Error & { code?: string }) => resolve(error.code ?? error.message));
        });
      expect(await tryOnce()).toBe('PEER_CONNECTION_FAILED');
      await bob.owner('connections.invite', {});
      expect(await tryOnce()).toBe('open');
    } finally {
      await stranger.destroy();
    }
  });

  it('is back online within 5 s of a restart of either side, dialling by key', async () => {
    let alice = await keyOnly('alice');
    let bob = await keyOnly('bob');
    await pair(bob, alice);
    for (const side of ['bob', 'alice'] as const) {
      const restarting = side === 'bob' ? bob : alice;
      const other = side === 'bob' ? alice : bob;
      const dataDir = restarting.installation.dataDir;
      open.splice(open.indexOf(restarting), 1);
      await restarting.installation.close();
      await other.waitFor(async () => !(await other.owner('connections.list', {}))[0]!.online, `${side} offline`);
      const started = Date.now();
      const back = await keyOnly(side, { dataDir });
      await online(back, other.installation.id);
      await online(other, back.installation.id);
      expect(Date.now() - started).toBeLessThan(5_000);
      if (side === 'bob') bob = back;
      else alice = back;
    }
  });
});
