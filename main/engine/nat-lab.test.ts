// Two people at home, each behind a router that masquerades, pair and talk over the DHT
// with no port forwarded. The test builds its own small internet from network namespaces
// (test-support/nat-lab.ts): the bootstrap nodes on a "public" bridge, two homes behind
// nftables routers. Every address is inside namespaces the test made; none is public.
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../paths';
import type { ApiClient } from '../../test-support/api-client';
import { buildNatLab, natLabUnavailable, type NatLab, type RouterOptions } from '../../test-support/nat-lab';
import { removeDataDir, startServe, type ServeProcess } from '../../test-support/serve-process';
import { until } from '../../test-support/until';
import { decodeInvite, encodeInvite } from './invitation';

let unavailable: string | null = null;
beforeAll(async () => {
  unavailable = await natLabUnavailable();
  if (unavailable) console.warn(`the NAT lab is skipped: ${unavailable}`);
});

interface Home {
  serve: ServeProcess;
  api: ApiClient;
}

interface Lab {
  lab: NatLab;
  bootstrap: string;
  alice: Home;
  bob: Home;
}

const open: Lab[] = [];
/** Relays started on a lab's public side, stopped with it. */
const relays = new Map<NatLab, ServeProcess>();
afterEach(async () => {
  for (const { lab, alice, bob } of open.splice(0)) {
    for (const home of [alice, bob]) {
      home.api.close();
      await home.serve.stop();
      removeDataDir(home.serve.dataDir);
    }
    const relay = relays.get(lab);
    relays.delete(lab);
    if (relay) {
      await relay.stop();
      removeDataDir(relay.dataDir);
    }
    await lab.destroy();
  }
});

/** `parley serve --relay` on the public bridge; resolves with its relay key (from its serve.json). */
async function startRelay({ lab, bootstrap }: Lab): Promise<string> {
  const relay = await startServe({
    name: 'relay',
    wrap: lab.wrapIn(lab.ns.public),
    extraArgs: ['--relay', '--dht-bootstrap', bootstrap],
  });
  relays.set(lab, relay);
  return relay.info.relay!;
}

/**
 * Starts HyperDHT's bootstrap nodes on the public bridge; resolves with HOST:PORT,…. Six:
 * a node behind NAT learns its router's mapping from the pongs of several distinct nodes,
 * and with three it has too few samples to holepunch at all.
 */
async function startBootstrap(lab: NatLab): Promise<string> {
  const testnet = path.join(projectRoot, 'node_modules', 'hyperdht', 'testnet.js');
  const script = `require(${JSON.stringify(testnet)})(6, { host: ${JSON.stringify(lab.addresses.public)} }).then((t) => console.log('BOOTSTRAP ' + t.bootstrap.map((b) => b.host + ':' + b.port).join(',')))`;
  const child = lab.start(lab.ns.public, [process.execPath, '-e', script]);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /BOOTSTRAP (\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`the bootstrap nodes exited with ${code}: ${err}`)));
  });
}

async function startHome(lab: NatLab, name: string, ns: string, bootstrap: string): Promise<Home> {
  const serve = await startServe({
    name,
    wrap: lab.wrapIn(ns),
    extraArgs: ['--dht-bootstrap', bootstrap],
  });
  // The app API listens on the home's own loopback; the test reaches it through a bridge.
  await lab.bridgeLoopback(ns, Number(new URL(serve.info.api).port));
  return { serve, api: await serve.connect() };
}

async function buildHomes(router1: RouterOptions, router2: RouterOptions): Promise<Lab> {
  const lab = await buildNatLab({ router1, router2 });
  try {
    const bootstrap = await startBootstrap(lab);
    const alice = await startHome(lab, 'alice', lab.ns.home1, bootstrap);
    const bob = await startHome(lab, 'bob', lab.ns.home2, bootstrap);
    const opened = { lab, bootstrap, alice, bob };
    open.push(opened);
    return opened;
  } catch (error) {
    await lab.destroy();
    throw error;
  }
}

/** An invitation as a person at home sends it: the DHT key, no address. */
async function invitation(inviter: Home, roles: string[]): Promise<string> {
  await inviter.api.call('roles.create', { name: roles[0]!, description: 'answers', agent: { adapter: 'scripted' } });
  const { code } = await inviter.api.call('connections.invite', { roles });
  const invite = decodeInvite(code);
  if (invite.v !== 3) throw new Error(`expected a version 3 invitation, got ${invite.v}`);
  const { address: _address, ...keyOnly } = invite;
  return encodeInvite(keyOnly).code;
}

/** Whether anything on the public side can open a TCP connection to the home's peer port at its router. */
async function reachableFromPublic(lab: NatLab, router: string, home: Home): Promise<boolean> {
  const port = Number(home.serve.info.peer?.split(':').pop());
  try {
    await lab.sh(lab.ns.public, [
      'timeout',
      '2',
      'socat',
      '-u',
      'OPEN:/dev/null',
      `TCP:${router}:${port},connect-timeout=1`,
    ]);
    return true;
  } catch {
    return false;
  }
}

describe('two homes behind NAT routers', () => {
  it('pair over the DHT, holepunched, with neither home reachable from the public side, and exchange texts and a Stop', async (context) => {
    if (unavailable) return context.skip();
    const { lab, alice, bob } = await buildHomes({ nat: 'masquerade' }, { nat: 'masquerade' });
    expect(await reachableFromPublic(lab, lab.addresses.router1, alice)).toBe(false);
    expect(await reachableFromPublic(lab, lab.addresses.router2, bob)).toBe(false);

    const code = await invitation(bob, ['researcher']);
    const assistant = await alice.api.call('roles.create', {
      name: 'assistant',
      description: 'asks',
      agent: { adapter: 'scripted' },
    });
    await alice.api.call('connections.accept', { code, roles: ['assistant'] });
    const atAlice = await until(async () => {
      const [c] = await alice.api.call('connections.list', {});
      return c?.online && c.peerRoles.length === 1 ? c : undefined;
    }, 'alice online with bob');
    expect(atAlice.path).toBe('holepunched');
    const atBob = await until(async () => {
      const [c] = await bob.api.call('connections.list', {});
      return c?.online ? c : undefined;
    }, 'bob online with alice');
    expect(atBob.path).toBe('holepunched');

    // A question and its answer.
    const conversation = await alice.api.call('conversations.open', { roleId: assistant.id });
    await alice.api.call('conversations.send', { id: conversation.id, text: 'ask bob/researcher: are you home?' });
    await until(async () => {
      const { messages } = await alice.api.call('conversations.get', { id: conversation.id });
      return messages.some((m) => m.body === 'bob/researcher says: answer from researcher: are you home?');
    }, "bob's answer in alice's conversation");

    // A long request that bob's person stops: alice's ask ends stopped.
    await alice.api.call('conversations.send', { id: conversation.id, text: 'ask bob/researcher: sleep 60' });
    const bobThread = await until(async () => {
      const list = await bob.api.call('threads.list', { peerStarted: true });
      return list.find((t) => t.run.state === 'running');
    }, "bob's researcher working on the long request");
    expect((await bob.api.call('threads.stop', { id: bobThread.id })).stopped).toBe(true);
    await until(async () => {
      const [thread] = await alice.api.call('threads.list', { root: { kind: 'conversation', id: conversation.id } });
      return thread?.peerTurn?.state === 'stopped' ? thread : undefined;
    }, "alice's ask shown stopped by bob");
  });

  it('where both routers pick a new random port per destination, pair through the relay the inviter chose, say so on each card, and a text and a Stop cross it', async (context) => {
    if (unavailable) return context.skip();
    const labbed = await buildHomes({ nat: 'random' }, { nat: 'random' });
    const { alice, bob } = labbed;
    // A blind relay on the public side, as someone with a public address runs one.
    const relay = await startRelay(labbed);
    const added = await bob.api.call('relays.add', { key: relay, address: 'relay.public' });
    expect(added.answers).toBe(true);
    const code = await invitation(bob, ['researcher']);
    expect(decodeInvite(code)).toMatchObject({ relays: [relay] });
    const assistant = await alice.api.call('roles.create', {
      name: 'assistant',
      description: 'asks',
      agent: { adapter: 'scripted' },
    });
    await alice.api.call('connections.accept', { code, roles: ['assistant'] });
    const atAlice = await until(async () => {
      const [c] = await alice.api.call('connections.list', {});
      return c?.online && c.peerRoles.length === 1 ? c : undefined;
    }, 'alice online with bob');
    expect(atAlice).toMatchObject({ path: 'relayed', relay: { key: relay, address: null } });
    const atBob = await until(async () => {
      const [c] = await bob.api.call('connections.list', {});
      return c?.online ? c : undefined;
    }, 'bob online with alice');
    expect(atBob).toMatchObject({ path: 'relayed', relay: { key: relay, address: 'relay.public' } });

    const conversation = await alice.api.call('conversations.open', { roleId: assistant.id });
    await alice.api.call('conversations.send', { id: conversation.id, text: 'ask bob/researcher: through the relay?' });
    await until(async () => {
      const { messages } = await alice.api.call('conversations.get', { id: conversation.id });
      return messages.some((m) => m.body === 'bob/researcher says: answer from researcher: through the relay?');
    }, "bob's answer through the relay");

    // A long request that bob's person stops: the Stop crosses the relay too.
    await alice.api.call('conversations.send', { id: conversation.id, text: 'ask bob/researcher: sleep 60' });
    const bobThread = await until(async () => {
      const list = await bob.api.call('threads.list', { peerStarted: true });
      return list.find((t) => t.run.state === 'running');
    }, "bob's researcher working on the long request");
    expect((await bob.api.call('threads.stop', { id: bobThread.id })).stopped).toBe(true);
    await until(async () => {
      const threads = await alice.api.call('threads.list', { root: { kind: 'conversation', id: conversation.id } });
      return threads.find((t) => t.peerTurn?.state === 'stopped');
    }, "alice's ask shown stopped by bob");
  });

  it('where one router drops UDP, tells the acceptor in plain words what was tried and what to do', async (context) => {
    if (unavailable) return context.skip();
    const { alice, bob } = await buildHomes({ nat: 'masquerade' }, { nat: 'masquerade', blockUdp: true });
    const code = await invitation(alice, ['assistant']);
    const started = Date.now();
    const refusal = await bob.api.call('connections.accept', { code, roles: [] }).then(
      () => null,
      (error: Error) => error,
    );
    expect(refusal?.message).toMatch(
      /^could not reach alice \(tried by its DHT key: [^)]+\)\. Ask alice to check that Parley is running and online; if both of you are behind strict routers, one of you can add a relay\.$/,
    );
    // Learnt within about 10 s, not after a library's long timeout.
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
