// The asker always learns how its ask ended (DESIGN §12.5): the side whose agent works
// on a peer's texts keeps each `turn` state until the peer acknowledges it (revision 2),
// sends it again on every new link, the latest per agent conversation, after its own
// restart too; a peer of revision 1 hears each state once, as before. And a text a pause
// here failed on the wire is known to have arrived once the peer's turn names it. Real
// installations over mutual TLS; where the peer must do what a real one would not (not
// acknowledge, die at a chosen frame), the test speaks for it.
import { afterEach, describe, expect, it } from 'vitest';
import type { ConnectionSummary, TextView, ThreadSummary } from '../../shared/domain';
import { getRoleByName } from '../store/queries/roles';
import { ensureRun } from '../store/queries/runs';
import { makeDataDir, removeDataDir } from '../../test-support/data-folder';
import type { TestInstallation } from '../../test-support/installation';
import { HoldProxy } from '../../test-support/hold-proxy';
import { openPeer } from '../../test-support/network';
import { newThreadId, RawPeer, standInIdentity } from '../../test-support/raw-peer';
import { until } from '../../test-support/until';
import { startWirePeer, type WirePeer } from '../../test-support/wire-peer';
import type { Identity } from './identity';
import type { Frame } from './wire';

const open: TestInstallation[] = [];
const raws: RawPeer[] = [];
const dirs: string[] = [];
const processes: WirePeer[] = [];
const proxies: HoldProxy[] = [];
afterEach(async () => {
  for (const raw of raws.splice(0)) raw.close();
  for (const proxy of proxies.splice(0)) await proxy.close();
  for (const p of processes.splice(0)) {
    // A frozen process is thawed first, so that it can die.
    p.process.kill('SIGCONT');
    await p.kill();
  }
  for (const t of open.splice(0)) await t.close();
  for (const dir of dirs.splice(0)) removeDataDir(dir);
});

function tempDir(name: string): string {
  const dir = makeDataDir(`parley-turnacks-${name}-`);
  dirs.push(dir);
  return dir;
}

async function peer(name: string, dataDir?: string) {
  const t = await openPeer(name, dataDir ? { dataDir } : {});
  open.push(t);
  return t;
}

async function close(t: TestInstallation) {
  open.splice(open.indexOf(t), 1);
  await t.close();
}

type TurnFrame = Extract<Frame, { type: 'turn' }>;
const turns = (raw: RawPeer, from = 0) => raw.frames.slice(from).filter((f): f is TurnFrame => f.type === 'turn');

/** bob (a scripted researcher, exposed) on a data folder of his own, and a mallory the test speaks for. */
async function bobAndMallory() {
  const bobDir = tempDir('bob');
  const bob = await peer('bob', bobDir);
  await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
  const { code } = await bob.owner('connections.invite', { roles: ['researcher'] });
  const mallory = await standInIdentity('mallory', code, { roles: ['helper'], exposes: ['helper'] });
  return { bob, bobDir, identity: mallory.identity };
}

/** A new link from mallory to `bob`, speaking up to `revision`; resolves once bob's roles came. */
async function link(bob: TestInstallation, identity: Identity, revision: number | null) {
  const raw = await RawPeer.dial(
    identity,
    bob.installation.peerAddress!,
    bob.installation.id,
    { type: 'hello', protocol: 2, name: 'mallory', address: null },
    { revision },
  );
  raws.push(raw);
  await raw.next('hello');
  await raw.next('roles');
  return raw;
}

/** The link dies under mallory; bob has noticed once the connection reads offline. */
async function drop(bob: TestInstallation, raw: RawPeer, how: 'terminate' | 'duplicate') {
  if (how === 'terminate') raw.close();
  // What the duplicate rule does to a link: a close with 4005 before anything on it is read.
  else raw.ws.close(4005, 'duplicate connection');
  await bob.waitFor(async () => !(await bob.owner('connections.list', {}))[0]?.online, 'mallory offline at bob');
}

const text = (thread: string, seq: number, body: string) =>
  ({ type: 'text', thread, seq, from: 'helper', to: 'researcher', body }) as const;

describe('turn states are acknowledged and sent again until they are', { timeout: 90_000 }, () => {
  it('revision 2: a state goes again on every new link until acknowledged, the latest per thread, after bob restarts too', async () => {
    const { bob, bobDir, identity } = await bobAndMallory();
    const first = await link(bob, identity, 2);
    const thread = newThreadId();
    first.send(text(thread, 1, 'sleep 60'));
    await first.next('turn', (f) => f.thread === thread && f.state === 'working');
    // Never acknowledged: the link is closed the way the duplicate rule closes one.
    await drop(bob, first, 'duplicate');

    const second = await link(bob, identity, 2);
    const again = await second.next('turn', (f) => f.thread === thread);
    expect(again).toEqual({ type: 'turn', thread, seq: 1, state: 'working' });
    // It comes before the roles' texts are resent, right after the roles.
    expect(second.frames.map((f) => f.type).slice(0, 3)).toEqual(['hello', 'roles', 'turn']);
    second.send({ type: 'turn-ack', thread, seq: 1, state: 'working' });
    await second.roundTrip();
    await drop(bob, second, 'terminate');

    // Acknowledged: a new link does not hear it again.
    const third = await link(bob, identity, 2);
    await third.roundTrip();
    expect(turns(third)).toEqual([]);
    await drop(bob, third, 'terminate');

    // bob's person stops the turn while mallory is away, and bob restarts before she is back.
    const [working] = await bob.owner('threads.list', { peerStarted: true });
    await bob.owner('threads.stop', { id: working!.id });
    await close(bob);
    const bobAgain = await peer('bob', bobDir);
    const fourth = await link(bobAgain, identity, 2);
    expect(await fourth.next('turn', (f) => f.thread === thread)).toEqual({
      type: 'turn',
      thread,
      seq: 1,
      state: 'stopped',
    });
    // An acknowledgement of an older state leaves the newer one to be sent again.
    fourth.send({ type: 'turn-ack', thread, seq: 1, state: 'working' });
    await fourth.roundTrip();
    await drop(bobAgain, fourth, 'terminate');
    const fifth = await link(bobAgain, identity, 2);
    expect((await fifth.next('turn', (f) => f.thread === thread)).state).toBe('stopped');
    fifth.send({ type: 'turn-ack', thread, seq: 1, state: 'stopped' });
    await fifth.roundTrip();
    await drop(bobAgain, fifth, 'terminate');
    const sixth = await link(bobAgain, identity, 2);
    await sixth.roundTrip();
    expect(turns(sixth)).toEqual([]);
  });

  it('revision 2, the asking side: a state is acknowledged once recorded, one for a thread it did not start too', async () => {
    const { bob, identity } = await bobAndMallory();
    const raw = await link(bob, identity, 2);
    const db = bob.installation.db;
    const researcher = getRoleByName(db, 'researcher')!;
    const task = await bob.owner('tasks.create', { roleId: researcher.id, title: 'ask mallory' });
    const run = ensureRun(db, { kind: 'task', id: task.id }, researcher.id);
    const sent = await bob.installation.engine.sendAs(run, researcher, 'mallory/helper', 'numbers?');
    const frame = await raw.next('text', (f) => f.thread === sent.thread);
    raw.send({ type: 'ack', thread: sent.thread, seq: frame.seq });
    const stranger = newThreadId();
    raw.sendTogether([
      { type: 'turn', thread: sent.thread, seq: 1, state: 'working' },
      { type: 'turn', thread: stranger, seq: 1, state: 'ended' },
    ]);
    expect(await raw.next('turn-ack', (f) => f.thread === sent.thread)).toEqual({
      type: 'turn-ack',
      thread: sent.thread,
      seq: 1,
      state: 'working',
    });
    // Ignored, and still acknowledged: the peer must not send it for ever.
    await raw.next('turn-ack', (f) => f.thread === stranger);
    const [summary] = await bob.owner('threads.list', { root: { kind: 'task', id: task.id } });
    expect(summary!.peerTurn).toMatchObject({ state: 'working', seq: 1 });
  });

  it('revision 1: each state goes once, as before; nothing is resent and no acknowledgement is asked', async () => {
    const { bob, identity } = await bobAndMallory();
    const first = await link(bob, identity, 1);
    const thread = newThreadId();
    first.send(text(thread, 1, 'sleep 60'));
    await first.next('turn', (f) => f.thread === thread && f.state === 'working');
    await drop(bob, first, 'terminate');
    const second = await link(bob, identity, 1);
    await second.roundTrip();
    expect(turns(second)).toEqual([]);
    await drop(bob, second, 'terminate');
    // A state made while it was away still reaches it on the next link, once.
    const [working] = await bob.owner('threads.list', { peerStarted: true });
    await bob.owner('threads.stop', { id: working!.id });
    const third = await link(bob, identity, 1);
    expect((await third.next('turn', (f) => f.thread === thread)).state).toBe('stopped');
    await third.roundTrip();
    expect(third.frames.some((f) => (f.type as string) === 'turn-ack')).toBe(false);
    await drop(bob, third, 'terminate');
    const fourth = await link(bob, identity, 1);
    await fourth.roundTrip();
    expect(turns(fourth)).toEqual([]);
    expect(fourth.closed).toBeNull();
  });
});

describe('a frozen, then killed asker', () => {
  it('bob stops the turn while alice is frozen (SIGSTOP); alice is killed -9 and restarted: her ask says stopped', async () => {
    const aliceDir = tempDir('alice');
    const start = async () => {
      const p = await startWirePeer({ dataDir: aliceDir, name: 'alice', args: ['--start-turns'] });
      processes.push(p);
      return p;
    };
    let alice = await start();
    const call = <T>(method: string, params: object = {}) =>
      alice.request<{ result: T }>('call', { method, params }).then((r) => r.result);
    const bob = await peer('bob');
    await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    const { code } = await bob.owner('connections.invite', { roles: ['researcher'] });
    const assistant = await call<{ id: number }>('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await call('connections.accept', { code, roles: [] });
    await until(
      async () => (await call<Array<{ peerRoles: unknown[] }>>('connections.list'))[0]?.peerRoles.length === 1,
      'bob’s roles at alice',
      30_000,
    );
    const conversation = await call<{ id: number }>('conversations.open', { roleId: assistant.id });
    await call('conversations.send', { id: conversation.id, text: 'ask bob/researcher: sleep 120' });
    const aliceThread = (check: (t: ThreadSummary) => boolean, what: string) =>
      until(
        async () =>
          (await call<ThreadSummary[]>('threads.list', { root: { kind: 'conversation', id: conversation.id } })).find(
            check,
          ),
        what,
        60_000,
      );
    const asked = await aliceThread((t) => t.peerTurn?.state === 'working', 'working at alice');
    const working = await bob.waitFor(
      async () => (await bob.owner('threads.list', { peerStarted: true })).find((t) => t.run.state === 'running'),
      'bob’s agent to work',
      30_000,
    );

    // The laptop sleeps: bob's link to it still looks open, and what bob sends sits in the socket.
    alice.process.kill('SIGSTOP');
    await bob.owner('threads.stop', { id: working.id });
    await bob.waitFor(async () => {
      const { turns } = await bob.owner('threads.get', { id: working.id });
      return turns.at(-1)?.status === 'stopped';
    }, 'the stop at bob');
    // Killed while frozen, and started again.
    await alice.kill();
    processes.splice(processes.indexOf(alice), 1);
    alice = await start();
    const stopped = await until(
      async () => {
        const { thread } = await call<{ thread: ThreadSummary }>('threads.get', { id: asked.id });
        return thread.peerTurn?.state === 'stopped' ? thread : undefined;
      },
      'the stop to reach alice after her restart',
      30_000,
    );
    expect(stopped.peerTurn?.seq).toBe(1);
  }, 120_000);
});

describe('a text a pause failed on the wire', { timeout: 90_000 }, () => {
  it('is delivered once the peer’s turn names it, though its ack never came: the pause is not the last word', async () => {
    const { bob, bobDir, identity } = await bobAndMallory();
    let raw = await link(bob, identity, 2);
    const db = bob.installation.db;
    const researcher = getRoleByName(db, 'researcher')!;
    const task = await bob.owner('tasks.create', { roleId: researcher.id, title: 'ask mallory' });
    const run = ensureRun(db, { kind: 'task', id: task.id }, researcher.id);
    const sent = await bob.installation.engine.sendAs(run, researcher, 'mallory/helper', 'numbers?');
    // On the wire, and mallory takes it; her ack is lost with bob, who pauses first.
    await raw.next('text', (f) => f.thread === sent.thread);
    const [connection] = await bob.owner('connections.list', {});
    await bob.owner('connections.pause', { id: connection!.id });
    const failed = async () =>
      (await bob.owner('threads.get', { id: sent.threadRowId })).texts.map((t) => [t.state, t.reason, t.failedBy]);
    expect(await failed()).toEqual([['failed', 'paused', 'us']]);
    raw.close();
    await close(bob);
    const bobAgain = await peer('bob', bobDir);
    raw = await link(bobAgain, identity, 2);
    // mallory's agent works on it: that names bob's text #1.
    raw.send({ type: 'turn', thread: sent.thread, seq: 1, state: 'working' });
    await raw.next('turn-ack', (f) => f.thread === sent.thread);
    const texts = (await bobAgain.owner('threads.get', { id: sent.threadRowId })).texts;
    expect(texts.map((t) => [t.state, t.reason, t.failedBy])).toEqual([['acked', null, null]]);
    const [summary] = await bobAgain.owner('threads.list', { root: { kind: 'task', id: task.id } });
    expect(summary!.counts).toMatchObject({ acked: 1, failed: 0 });
    expect(summary!.peerTurn).toMatchObject({ state: 'working', seq: 1 });
  });
});

describe('a text a pause failed on the wire, then kill -9 of its sender', () => {
  it('bob took it once and worked on it; his `turn` reaches the restarted alice, who shows it delivered', async () => {
    // bob in this process, reached only through a proxy that can keep his bytes from alice.
    const bob = await peer('bob');
    await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    const proxy = await HoldProxy.start(bob.installation.peerAddress!);
    proxies.push(proxy);
    bob.installation.engine.setAddress(proxy.address);
    const { code } = await bob.owner('connections.invite', { roles: ['researcher'] });
    // alice in a process of her own (so she can die), with no address: only she dials, through the proxy.
    const aliceDir = tempDir('alice');
    const start = async () => {
      const p = await startWirePeer({ dataDir: aliceDir, name: 'alice', args: ['--start-turns', '--no-address'] });
      processes.push(p);
      return p;
    };
    let alice = await start();
    const call = <T>(method: string, params: object = {}) =>
      alice.request<{ result: T }>('call', { method, params }).then((r) => r.result);
    const assistant = await call<{ id: number }>('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await call('connections.accept', { code, roles: [] });
    const aliceConnection = await until(
      async () => (await call<ConnectionSummary[]>('connections.list')).find((c) => c.peerRoles.length === 1),
      'bob’s roles at alice',
    );
    const conversation = await call<{ id: number }>('conversations.open', { roleId: assistant.id });

    // What bob writes to alice from now on stays in the proxy: his ack, and his `working`.
    proxy.hold('toDialler');
    await call('conversations.send', { id: conversation.id, text: 'ask bob/researcher: sleep 60' });
    const working = await bob.waitFor(
      async () => (await bob.owner('threads.list', { peerStarted: true })).find((t) => t.run.state === 'running'),
      'bob’s agent to work on alice’s text',
      30_000,
    );
    await proxy.waitFor(() => proxy.heldBytes('toDialler') > 0, 'bob’s ack to be on its way');
    const asked = await until(
      async () =>
        (await call<ThreadSummary[]>('threads.list', { root: { kind: 'conversation', id: conversation.id } }))[0],
      'alice’s ask',
    );
    const aliceTexts = async () =>
      (await call<{ texts: TextView[] }>('threads.get', { id: asked.id })).texts.map((t) => [
        t.state,
        t.reason,
        t.failedBy,
      ]);
    expect(await aliceTexts()).toEqual([['sent', null, null]]);

    // alice pauses with the text on the wire: it fails here as paused, and is never sent again.
    await call('connections.pause', { id: aliceConnection.id });
    expect(await aliceTexts()).toEqual([['failed', 'paused', 'us']]);
    // And alice dies before bob's bytes reach her: what the proxy held goes with her socket.
    await alice.kill();
    processes.splice(processes.indexOf(alice), 1);
    proxy.release('toDialler');
    await bob.waitFor(async () => !(await bob.owner('connections.list', {}))[0]?.online, 'alice offline at bob');

    alice = await start();
    const delivered = await until(async () => {
      const { thread, texts } = await call<{ thread: ThreadSummary; texts: TextView[] }>('threads.get', {
        id: asked.id,
      });
      return texts[0]?.state === 'acked' ? { thread, texts } : undefined;
    }, 'bob’s turn to tell the restarted alice that he has her text');
    expect(delivered.texts.map((t) => [t.state, t.reason, t.failedBy])).toEqual([['acked', null, null]]);
    expect(delivered.thread.peerTurn).toMatchObject({ state: 'working', seq: 1 });
    // Still paused at alice: nothing was sent again, and bob took it once, in one turn.
    const atBob = await bob.owner('threads.get', { id: working.id });
    expect(atBob.texts.filter((t) => t.direction === 'in').map((t) => [t.seq, t.body])).toEqual([[1, 'sleep 60']]);
    expect(atBob.turns).toHaveLength(1);
  }, 120_000);
});

describe('simultaneous dials', () => {
  it('alice comes back five times while bob dials her too: each stop bob made meanwhile reaches her', async () => {
    const aliceDir = tempDir('alice');
    let alice = await peer('alice', aliceDir);
    const bob = await peer('bob');
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    const { code } = await bob.owner('connections.invite', { roles: ['researcher'] });
    await alice.owner('connections.accept', { code, roles: [] });
    await alice.waitFor(
      async () => (await alice.owner('connections.list', {}))[0]?.peerRoles.length === 1,
      'bob’s roles',
    );
    // alice listens where bob dials her again, so both sides dial when she is back.
    const alicePort = Number(alice.installation.peerAddress!.split(':').at(-1));
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    const bobConnection = (await bob.owner('connections.list', {}))[0]!.id;
    for (let round = 1; round <= 5; round++) {
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: sleep 60' });
      const asked = await alice.waitFor(
        async () =>
          (await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } })).find(
            (t) => t.peerTurn?.state === 'working' && t.peerTurn.seq === round,
          ),
        `round ${round}: working`,
        30_000,
      );
      const working = await bob.waitFor(
        async () => (await bob.owner('threads.list', { peerStarted: true })).find((t) => t.run.state === 'running'),
        `round ${round}: bob’s agent to work`,
        30_000,
      );
      await close(alice);
      await bob.waitFor(
        async () => !(await bob.owner('connections.list', {})).find((c) => c.id === bobConnection)?.online,
        'alice offline at bob',
      );
      await bob.owner('threads.stop', { id: working.id });
      alice = await openPeer('alice', { dataDir: aliceDir, peerPort: alicePort });
      open.push(alice);
      const stopped = await alice.waitFor(
        async () => {
          const t = (await alice.owner('threads.get', { id: asked.id })).thread;
          return t.peerTurn?.state === 'stopped' && t.peerTurn.seq === round ? t : undefined;
        },
        `round ${round}: the stop to reach alice`,
        20_000,
      );
      expect(stopped.peerTurn?.seq).toBe(round);
    }
  }, 180_000);
});
