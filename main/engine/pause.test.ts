// Pause at its edges (DESIGN §11.5, "Paused means nothing moves"): a text on the wire
// when the owner pauses, a rejection that comes late, a crash during the pause's grace.
// alice and bob are real installations; where the test must hold back an ack or send
// a late rejection, one side is driven by hand with a real, paired identity.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ThreadSummary, TextView, TurnSummary } from '../../shared/domain';
import { processAlive } from '../runs/process-tree';
import { runnableRuns } from '../store/queries/runs';
import { agentPidsIn, edgeAgent, killAgentsIn } from '../../test-support/edge-agent';
import { makeDataDir, removeDataDir } from '../../test-support/data-folder';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer } from '../../test-support/network';
import { RawPeer, standInIdentity } from '../../test-support/raw-peer';
import { until } from '../../test-support/until';
import { startWirePeer, type WirePeer } from '../../test-support/wire-peer';

const open: TestInstallation[] = [];
const processes: WirePeer[] = [];
const dirs: string[] = [];
const pidFiles: string[] = [];
const raws: RawPeer[] = [];
afterEach(async () => {
  for (const raw of raws.splice(0)) raw.close();
  for (const p of processes.splice(0)) await p.kill();
  for (const t of open.splice(0)) await t.close();
  for (const file of pidFiles.splice(0)) killAgentsIn(file);
  for (const dir of dirs.splice(0)) removeDataDir(dir);
});

function tempDir(prefix: string): string {
  const dir = makeDataDir(prefix);
  dirs.push(dir);
  return dir;
}

/**
 * alice (in this process, scripted `assistant`) paired with a bob we speak for by hand:
 * bob exposes `researcher`, alice exposes `assistant`. Returns the raw link, open.
 */
async function aliceWithHandDrivenBob() {
  const alice = await openPeer('alice');
  open.push(alice);
  const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
  const { code } = await alice.owner('connections.invite', { roles: ['assistant'] });
  const bob = await standInIdentity('bob', code, { roles: ['researcher'], exposes: ['researcher'] });
  const [connection] = await alice.owner('connections.list', {});
  const dial = async () => {
    const raw = await RawPeer.dial(bob.identity, alice.installation.peerAddress!, alice.installation.id, {
      type: 'hello',
      protocol: 2,
      name: 'bob',
      address: null,
    });
    raws.push(raw);
    await raw.next('hello');
    await raw.next('roles');
    return raw;
  };
  const raw = await dial();
  const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
  return { alice, assistant, connectionId: connection!.id, conversation, bob, raw, dial };
}

async function threadOf(t: TestInstallation, conversationId: number): Promise<ThreadSummary> {
  return t.waitFor(async () => {
    const [thread] = await t.owner('threads.list', { root: { kind: 'conversation', id: conversationId } });
    return thread;
  }, 'the agent conversation');
}

const outgoing = async (t: TestInstallation, threadRowId: number): Promise<TextView[]> =>
  (await t.owner('threads.get', { id: threadRowId })).texts.filter((text) => text.direction === 'out');

describe('pause: a text on the wire (DESIGN §11.5)', () => {
  it('“a text that was on the wire fails with paused and is never sent again”: not when the peer reconnects, and an ack that still arrives marks it delivered', async () => {
    const { alice, connectionId, conversation, raw, dial } = await aliceWithHandDrivenBob();
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: are you there?' });
    // bob has the text and holds back its ack: it is on the wire.
    const sent = await raw.next('text', (f) => f.body === 'are you there?');
    const thread = await threadOf(alice, conversation.id);
    expect((await outgoing(alice, thread.id)).map((t) => t.state)).toEqual(['sent']);

    await alice.owner('connections.pause', { id: connectionId });
    expect(await outgoing(alice, thread.id)).toMatchObject([{ state: 'failed', reason: 'paused' }]);
    expect((await alice.owner('connections.list', {}))[0]!.queue.used).toBe(0);

    // The link drops and bob dials again while the connection is paused.
    raw.close();
    await alice.waitFor(async () => !(await alice.owner('connections.list', {}))[0]!.online, 'bob offline');
    const again = await dial();
    await again.roundTrip();
    expect(again.frames.filter((f) => f.type === 'text')).toEqual([]);

    // bob's ack for the text still comes: it was delivered after all.
    again.send({ type: 'ack', thread: sent.thread, seq: sent.seq });
    await alice.waitFor(
      async () => (await outgoing(alice, thread.id))[0]?.state === 'acked',
      'the late ack to mark it delivered',
    );
    expect((await alice.owner('threads.get', { id: thread.id })).turns).toEqual([]);
  });

  it('“a text that was on the wire fails with paused and is never sent again”: not after the pausing side is killed -9 and restarted', async () => {
    const dataDir = tempDir('parley-pause-alice-');
    const start = async () => {
      const p = await startWirePeer({ dataDir, name: 'alice', args: ['--start-turns'] });
      processes.push(p);
      return p;
    };
    let alice = await start();
    const call = <T>(method: string, params: object = {}) =>
      alice.request<{ result: T }>('call', { method, params }).then((r) => r.result);
    const assistant = await call<{ id: number }>('roles.create', {
      name: 'assistant',
      agent: { adapter: 'scripted' },
    });
    const { code } = await call<{ code: string }>('connections.invite', { roles: ['assistant'] });
    const bob = await standInIdentity('bob', code, { roles: ['researcher'], exposes: ['researcher'] });
    const dial = async () => {
      const raw = await RawPeer.dial(bob.identity, alice.ready.address, alice.ready.fingerprint, {
        type: 'hello',
        protocol: 2,
        name: 'bob',
        address: null,
      });
      raws.push(raw);
      await raw.next('hello');
      await raw.next('roles');
      return raw;
    };
    const raw = await dial();
    const conversation = await call<{ id: number }>('conversations.open', { roleId: assistant.id });
    await call('conversations.send', { id: conversation.id, text: 'ask bob/researcher: still there?' });
    await raw.next('text', (f) => f.body === 'still there?');
    const [connection] = await call<Array<{ id: number }>>('connections.list');
    await call('connections.pause', { id: connection!.id });

    await alice.kill();
    processes.splice(processes.indexOf(alice), 1);
    alice = await start();
    expect(alice.ready.restarted).toBe(true);
    const again = await dial();
    await again.roundTrip();
    expect(again.frames.filter((f) => f.type === 'text')).toEqual([]);
    const [thread] = await call<ThreadSummary[]>('threads.list', {
      root: { kind: 'conversation', id: conversation.id },
    });
    const detail = await call<{ texts: TextView[] }>('threads.get', { id: thread!.id });
    expect(detail.texts).toMatchObject([{ direction: 'out', state: 'failed', reason: 'paused' }]);
  }, 90_000);
});

describe('pause: agents (DESIGN §11.5)', () => {
  it('“no turn starts in its agent conversations (notices wait)”: a rejection that comes late starts nothing', async () => {
    const { alice, connectionId, conversation, raw } = await aliceWithHandDrivenBob();
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: anything?' });
    // bob stalls: the text is on the wire, unacked, when alice pauses.
    const sent = await raw.next('text', (f) => f.body === 'anything?');
    const thread = await threadOf(alice, conversation.id);
    await alice.owner('connections.pause', { id: connectionId });
    // Then bob, paused too by now, rejects it.
    raw.send({ type: 'reject', thread: sent.thread, seq: sent.seq, reason: 'paused' });
    await raw.roundTrip();
    const detail = await alice.owner('threads.get', { id: thread.id });
    expect(detail.turns).toEqual([]);
    expect(runnableRuns(alice.installation.db, 100)).toEqual([]);
    expect(detail.texts).toMatchObject([{ direction: 'out', state: 'failed', reason: 'paused' }]);
  });

  it('“a turn cut off by a crash is not re-run”: kill -9 during the pause’s grace, for an agent that ignores SIGTERM', async () => {
    const bobDir = tempDir('parley-pause-bob-');
    const pids = path.join(tempDir('parley-pause-pids-'), 'pids');
    pidFiles.push(pids);
    const start = async (grace: number) => {
      const p = await startWirePeer({
        dataDir: bobDir,
        name: 'bob',
        args: ['--start-turns', '--stop-grace', String(grace), '--reconnect-min', '50', '--reconnect-max', '500'],
      });
      processes.push(p);
      return p;
    };
    let bob = await start(120_000);
    const call = <T>(method: string, params: object = {}) =>
      bob.request<{ result: T }>('call', { method, params }).then((r) => r.result);
    await call('roles.create', { name: 'researcher', agent: edgeAgent(tempDir('parley-pause-agent-'), pids) });
    const { code } = await call<{ code: string }>('connections.invite', { roles: ['researcher'] });
    const alice = await openPeer('alice');
    open.push(alice);
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await alice.owner('connections.accept', { code, roles: ['assistant'] });
    await alice.waitFor(
      async () => (await alice.owner('connections.list', {}))[0]?.peerRoles.length === 1,
      'bob’s roles',
    );
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: hang' });
    const [agent] = await alice.waitFor(() => {
      const found = agentPidsIn(pids);
      return found.length > 0 ? found : undefined;
    }, 'bob’s agent to work');

    const [connection] = await call<Array<{ id: number }>>('connections.list');
    // The pause waits out the grace (the agent ignores SIGTERM); bob is killed meanwhile.
    const pausing = call('connections.pause', { id: connection!.id }).catch(() => undefined);
    const stopping = await until(async () => {
      const [thread] = await call<ThreadSummary[]>('threads.list', { peerStarted: true });
      return thread?.run.state === 'stopping' ? thread : undefined;
    }, 'the agent to be stopping');
    await bob.kill();
    processes.splice(processes.indexOf(bob), 1);
    await pausing;
    expect(processAlive(agent!)).toBe(true);

    bob = await start(300);
    const detail = await call<{ turns: TurnSummary[] }>('threads.get', { id: stopping.id });
    expect(detail.turns.map((turn) => turn.status)).toEqual(['stopped']);
    expect(agentPidsIn(pids)).toEqual([agent]);
    expect(processAlive(agent!)).toBe(false);
    const [paused] = await call<Array<{ status: string }>>('connections.list');
    expect(paused!.status).toBe('paused');
  }, 120_000);
});
