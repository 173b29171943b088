// The DHT carrier on a loopback testnet: real installations, real HyperDHT nodes and
// UDP sockets on 127.0.0.1, the same pinned mutual TLS as over TCP.
import createTestnet, { type Testnet } from '@hyperswarm/testnet';
import DHT from 'hyperdht';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DhtBootstrap } from '../net/dht-bootstrap';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import { MAX_UNAUTHENTICATED_PER_ADDRESS } from '../net/limits';
import { decodeInvite, encodeInvite } from './invitation';
import { DHT_HEAD_START_MS, dhtHeadStart } from './links';
import { acceptWorthRedialling, plainDialError, unreachableSentence } from './pairing';
import { RELAY_DIAL_MS, UnreachableError } from './reach';

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
    const accepted = await alice.owner('connections.accept', { code: invitation.code, roles: ['assistant'] });
    // What accept answers already names the key alice will redial bob by.
    expect(accepted).toMatchObject({ address: null, dhtKey: bob.installation.engine.dhtKey });
    const atBob = await online(bob, alice.installation.id);
    const atAlice = await online(alice, bob.installation.id);
    expect(atAlice).toMatchObject({ address: null, dhtKey: bob.installation.engine.dhtKey, path: 'holepunched' });
    // The inviter learned the acceptor's key from the stream its link came by, and can dial it back.
    expect(atBob).toMatchObject({ address: null, dhtKey: alice.installation.engine.dhtKey, path: 'holepunched' });
    // What roles see of their peers (`parley peers`, `parley context`) names the path too.
    expect(alice.installation.engine.peers()).toEqual([
      { peer: 'bob', state: 'online', path: 'holepunched', roles: [{ address: 'bob/researcher', description: '' }] },
    ]);

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
      /could not reach bob \(tried by its DHT key: someone else answered there \(the peer presented certificate [0-9a-f]{16}…, not the pinned/,
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
      open.splice(open.indexOf(restarting), 1);
      let started = 0;
      const back = await restarting.restart({}, async () => {
        await other.waitFor(async () => !(await other.owner('connections.list', {}))[0]!.online, `${side} offline`);
        started = Date.now();
      });
      open.push(back);
      back.installation.engine.setAddress(null);
      await online(back, other.installation.id);
      await online(other, back.installation.id);
      expect(Date.now() - started).toBeLessThan(5_000);
      if (side === 'bob') bob = back;
      else alice = back;
    }
  });

  it.each([
    [{ address: '127.0.0.1:1', dhtKey: 'k', lastPath: null }, DHT_HEAD_START_MS],
    [{ address: '127.0.0.1:1', dhtKey: 'k', lastPath: 'direct' }, DHT_HEAD_START_MS],
    [{ address: '127.0.0.1:1', dhtKey: 'k', lastPath: 'dht' }, 0],
    [{ address: null, dhtKey: 'k', lastPath: null }, 0],
  ] as const)('gives the address of %j a head start of %i ms over the DHT', (target, ms) => {
    expect(dhtHeadStart(target)).toBe(ms);
  });

  it('races the address and the DHT: the address wins when it answers, the DHT when it does not, and the peer learns our key by a reach frame', async () => {
    const alice = await peer('alice');
    const bob = await peer('bob');
    const { acceptorConnectionId, inviterConnectionId } = await pair(bob, alice);
    const atAlice = () => alice.owner('connections.list', {}).then((list) => list[0]!);
    const atBob = () => bob.owner('connections.list', {}).then((list) => list[0]!);
    // Both paths open, the address wins on loopback and the DHT dial is cancelled before any frame.
    expect(await atAlice()).toMatchObject({ path: 'direct', dhtKey: bob.installation.engine.dhtKey });
    expect(
      alice.installation.db.prepare('SELECT last_path FROM connections WHERE id = ?').get(acceptorConnectionId),
    ).toEqual({ last_path: 'direct' });
    // The link came by TCP, yet bob knows alice's DHT key: her reach frame told him.
    await bob.waitFor(async () => (await atBob()).dhtKey === alice.installation.engine.dhtKey, "alice's key at bob");
    // Now bob has no address to give, and the one alice has refuses: both find each other by the DHT.
    bob.installation.engine.setAddress(null);
    bob.installation.db.prepare('UPDATE connections SET address = NULL WHERE id = ?').run(inviterConnectionId);
    alice.installation.db
      .prepare("UPDATE connections SET address = '127.0.0.1:1' WHERE id = ?")
      .run(acceptorConnectionId);
    alice.installation.engine.reconnectAll();
    await alice.waitFor(async () => (await atAlice()).path === 'holepunched', 'the link over the DHT');
    await bob.waitFor(async () => {
      const c = await atBob();
      return c.online && c.path === 'holepunched';
    }, 'bob over the DHT');
  });

  it('still takes a version 2 invitation (an address, no DHT key) on an installation that is on the DHT', async () => {
    const alice = await peer('alice');
    const bob = await peer('bob');
    const invitation = await bob.owner('connections.invite', {});
    const {
      v: _v,
      dht: _dht,
      relays: _relays,
      address,
      ...rest
    } = decodeInvite(invitation.code) as Extract<ReturnType<typeof decodeInvite>, { v: 3 }>;
    const v2 = encodeInvite({ v: 2, ...rest, address: address! }).code;
    const accepted = await alice.owner('connections.accept', { code: v2 });
    expect(accepted).toMatchObject({ address: invitation.address, dhtKey: null, online: true, path: 'direct' });
  });

  it(`gives the DHT's strangers ${MAX_UNAUTHENTICATED_PER_ADDRESS} places per host, for a few seconds, while known peers come and go`, async () => {
    const alice = await keyOnly('alice');
    const bob = await keyOnly('bob');
    await pair(bob, alice);
    await bob.owner('connections.invite', {});
    const stranger = new DHT({ bootstrap: testnet.bootstrap, host: '127.0.0.1' });
    const many = MAX_UNAUTHENTICATED_PER_ADDRESS + 8;
    try {
      const key = Buffer.from(bob.installation.engine.dhtKey!, 'hex');
      const streams = Array.from({ length: many }, () => stranger.connect(key, { keyPair: DHT.keyPair() }));
      const closed = streams.map(
        (stream) =>
          new Promise<number>((resolve) => {
            stream.on('error', () => {});
            stream.once('close', () => resolve(Date.now()));
          }),
      );
      // Those over the cap are refused (by the firewall, or dropped on arrival)...
      let ended = 0;
      await new Promise<void>((resolve) => {
        for (const c of closed) void c.then(() => ++ended === many - MAX_UNAUTHENTICATED_PER_ADDRESS && resolve());
      });
      const heldAt = Date.now();
      expect(streams.filter((stream) => !stream.destroyed).length).toBe(MAX_UNAUTHENTICATED_PER_ADDRESS);
      // ...while a known peer's key holds no stranger's place and gets in at once.
      alice.installation.engine.reconnectAll();
      await alice.waitFor(
        async () => (await alice.owner('connections.list', {}))[0]!.path === 'holepunched',
        'alice back',
      );
      // The places are given back when the TLS handshake's time is up.
      const times = await Promise.all(closed);
      expect(Math.max(...times) - heldAt).toBeLessThan(6_000);
    } finally {
      await stranger.destroy();
    }
  });

  it('tells an acceptor who cannot reach the inviter, within about 10 s, what was tried and what each side can do', async () => {
    const alice = await peer('alice');
    const bob = await keyOnly('bob');
    // An address that takes the connection and never answers, and bob gone from the DHT.
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const address = `127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
      const invite = decodeInvite((await bob.owner('connections.invite', {})).code);
      open.splice(open.indexOf(bob), 1);
      await bob.close();
      const code = encodeInvite({ ...invite, v: 3, dht: (invite as { dht: string }).dht, address }).code;
      const started = Date.now();
      const error = (await alice.owner('connections.accept', { code }).catch((e: unknown) => e)) as Error;
      const took = Date.now() - started;
      expect(error.message).toMatch(
        new RegExp(
          `^could not reach bob \\(tried at ${address}: no answer within 8 s; by its DHT key: (it is not on the DHT now|it did not let this installation in|no answer within 8 s)\\)\\. Ask bob to check that Parley is running and online; if both of you are behind strict routers, one of you can add a relay\\.$`,
        ),
      );
      expect(took).toBeLessThan(10_000);
    } finally {
      silent.close();
    }
  });

  it('tells an acceptor who is off the DHT, at once, that a key-only invitation needs the DHT on here', async () => {
    const bob = await keyOnly('bob');
    // alice is kept off the DHT (the suite's PARLEY_DHT_BOOTSTRAP=off), so the key is all she has and cannot use.
    const alice = await openPeer('alice');
    open.push(alice);
    const { code } = await bob.owner('connections.invite', {});
    const started = Date.now();
    await expect(alice.owner('connections.accept', { code })).rejects.toThrow(
      'could not reach bob (tried not by its DHT key, because this installation is not on the DHT). Turn the DHT on here (Settings, or parley serve without --no-dht); ask bob to check that Parley is running and online; if both of you are behind strict routers, one of you can add a relay.',
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await alice.owner('connections.list', {})).toEqual([]);
  });

  it.each([
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), 'nothing listens there'],
    [new Error('Opening handshake has timed out'), 'no answer within 8 s'],
    [Object.assign(new Error('Peer not found'), { code: 'PEER_NOT_FOUND' }), 'it is not on the DHT now'],
    [
      Object.assign(new Error('Both remote and local NATs are randomized'), {
        code: 'HOLEPUNCH_DOUBLE_RANDOMIZED_NATS',
      }),
      'both routers change ports on every connection, so only a relay can join you',
    ],
    [
      Object.assign(new Error('Holepunching probe did not finish in time'), { code: 'HOLEPUNCH_PROBE_TIMEOUT' }),
      'holepunching through the routers failed',
    ],
    [
      Object.assign(new Error('Could not connect to peer'), { code: 'PEER_CONNECTION_FAILED' }),
      'it did not let this installation in',
    ],
  ])('says %s as %j', (error, words) => {
    expect(plainDialError(error)).toBe(words);
  });

  it.each([
    ['every dial by key went unanswered', [['dht', new Error('Opening handshake has timed out')]], true],
    [
      'the key timed out and the relay too',
      [
        ['dht', new Error('Opening handshake has timed out')],
        ['relay', new Error('Opening handshake has timed out')],
      ],
      false,
    ],
    [
      'the inviter is not on the DHT',
      [['dht', Object.assign(new Error('Peer not found'), { code: 'PEER_NOT_FOUND' })]],
      false,
    ],
    [
      'the address refused and the key timed out',
      [
        ['address', Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })],
        ['dht', new Error('Opening handshake has timed out')],
      ],
      false,
    ],
    ['nothing was tried', [], false],
  ] as const)('accepts again once when %s: %s', (_, tried, again) => {
    const attempts = tried.map(([path, error]) => ({ path, target: 'k'.repeat(64), error, timeoutMs: 8_000 }));
    expect(acceptWorthRedialling(new UnreachableError(attempts))).toBe(again);
  });

  it('tells a relay that ran out of time by the longer time it had, not the 8 s of a direct dial', () => {
    const timedOut = new Error('Opening handshake has timed out');
    const sentence = unreachableSentence(
      'bob',
      { address: null, dhtKey: 'k'.repeat(64), relays: ['r'.repeat(64)] },
      new UnreachableError([
        {
          path: 'dht',
          target: 'k'.repeat(64),
          error: Object.assign(new Error('x'), { code: 'HOLEPUNCH_ABORTED' }),
          timeoutMs: 8_000,
        },
        { path: 'relay', target: 'r'.repeat(64), error: timedOut, timeoutMs: RELAY_DIAL_MS },
      ]),
      'o'.repeat(64),
    );
    expect(sentence).toContain(`through the relay rrrrrrrrrrrr…: no answer within ${RELAY_DIAL_MS / 1000} s`);
    expect(RELAY_DIAL_MS).toBeGreaterThan(8_000);
  });

  it('has a switch in the desktop app’s settings: off leaves the DHT and stays off after a restart, on joins it again', async () => {
    const alice = await peer('alice', { peers: { kind: 'remembered' }, peerPort: undefined });
    expect((await alice.owner('network.get', {})).dht).toMatchObject({
      state: 'on',
      key: alice.installation.engine.dhtKey,
    });
    expect((await alice.owner('network.update', { dht: false })).dht).toEqual({
      state: 'off',
      key: null,
      bootstrap: '127.0.0.1:' + testnet.bootstrap[0]!.port,
      problem: null,
      relay: null,
    });
    open.splice(open.indexOf(alice), 1);
    const again = await alice.restart();
    open.push(again);
    expect((await again.owner('network.get', {})).dht.state).toBe('off');
    const on = await again.owner('network.update', { dht: true });
    expect(on.dht).toMatchObject({ state: 'on', key: again.installation.engine.dhtKey });
    // Where the environment keeps it off the DHT (as the test suite does), the switch cannot turn it on.
    const bob = await openPeer('bob', { peers: { kind: 'remembered' } });
    open.push(bob);
    await expect(bob.owner('network.update', { dht: true })).rejects.toThrow(/PARLEY_DHT_BOOTSTRAP=off keeps/);
  });

  it('refuses a code of a version it does not know with the words an older Parley gives a version 3 code', () => {
    const v3 = {
      v: 3,
      name: 'bob',
      fingerprint: 'a'.repeat(64),
      dht: 'b'.repeat(64),
      secret: 's'.repeat(32),
      expires: new Date().toISOString(),
    };
    expect(decodeInvite(Buffer.from(JSON.stringify(v3)).toString('base64url'))).toMatchObject({ v: 3 });
    expect(() => decodeInvite(Buffer.from(JSON.stringify({ ...v3, v: 4 })).toString('base64url'))).toThrow(
      'this is not a Parley invitation code (or it comes from another version of Parley)',
    );
  });
});
