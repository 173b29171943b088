// Withdraw down the chain (DESIGN §12.6), pause told (§12.7) and a decline told, across
// real installations paired over mutual TLS, each running the scripted agent as a real
// process. Where a hop must crash mid-way, it is a separate process killed with SIGKILL.
import { afterEach, describe, expect, it } from 'vitest';
import type { ThreadSummary, TextView } from '../../shared/domain';
import { makeDataDir, removeDataDir } from '../../test-support/data-folder';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import { noticesTakenBy } from '../../test-support/notices';
import { RawPeer, standInIdentity } from '../../test-support/raw-peer';
import { startWirePeer, type WirePeer } from '../../test-support/wire-peer';
import { findRun } from '../store/queries/runs';
import { decideWithdraw } from './withdrawals';

const open: TestInstallation[] = [];
const processes: WirePeer[] = [];
const raws: RawPeer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const raw of raws.splice(0)) raw.close();
  for (const p of processes.splice(0)) await p.kill();
  for (const t of open.splice(0)) await t.close();
  for (const dir of dirs.splice(0)) removeDataDir(dir);
});

async function peer(name: string, dataDir?: string): Promise<TestInstallation> {
  const t = await openPeer(name, dataDir ? { dataDir } : {});
  open.push(t);
  return t;
}

const texts = async (t: TestInstallation, id: number, direction: 'in' | 'out'): Promise<TextView[]> =>
  (await t.owner('threads.get', { id })).texts.filter((text) => text.direction === direction);

const peerStarted = async (t: TestInstallation): Promise<ThreadSummary[]> =>
  t.owner('threads.list', { peerStarted: true });

/** alice → bob → carol: alice's assistant asks bob's researcher, who asks carol's expert. */
async function chain() {
  const alice = await peer('alice');
  const bob = await peer('bob');
  const carol = await peer('carol');
  const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
  await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
  await carol.owner('roles.create', { name: 'expert', agent: { adapter: 'scripted' } });
  await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
  await pair(carol, bob, { inviter: ['expert'], acceptor: ['researcher'] });
  const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
  return { alice, bob, carol, conversation };
}

/** Waits until carol's expert is at work on what bob relayed; returns carol's agent conversation. */
async function carolWorking(carol: TestInstallation): Promise<ThreadSummary> {
  return carol.waitFor(async () => {
    const [thread] = await peerStarted(carol);
    return thread?.run.state === 'running' && thread.run.session ? thread : undefined;
  }, 'carol’s expert to work on the relayed ask');
}

describe('withdraw (DESIGN §12.6)', () => {
  it('decides by table who may withdraw what', () => {
    const table: Array<[Parameters<typeof decideWithdraw>[0], ReturnType<typeof decideWithdraw>]> = [
      [{ startedBy: 'local', openAsk: true, connection: 'active' }, 'withdraw'],
      // Paused here: the withdrawal still goes, so the peer stops working for nothing.
      [{ startedBy: 'local', openAsk: true, connection: 'paused' }, 'withdraw'],
      [{ startedBy: 'local', openAsk: false, connection: 'active' }, 'answered'],
      [{ startedBy: 'local', openAsk: true, connection: 'revoked' }, 'revoked'],
      [{ startedBy: 'peer', openAsk: true, connection: 'active' }, 'not_ours'],
    ];
    expect(table.map(([facts]) => decideWithdraw(facts))).toEqual(table.map(([, verdict]) => verdict));
  });

  it('stops the work down a relay chain alice → bob → carol, each side saying who withdrew it; later text continues it', async () => {
    const { alice, bob, carol, conversation } = await chain();
    await alice.owner('conversations.send', {
      id: conversation.id,
      text: 'ask bob/researcher: ask carol/expert: sleep 60',
    });
    const atCarol = await carolWorking(carol);
    const [mine] = await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } });

    expect(await alice.owner('threads.withdraw', { id: mine!.id })).toEqual({ withdrawn: true });

    // carol's agent is stopped as carol's own Stop would: the turn, the process; the session stays.
    const stopped = await carol.waitFor(async () => {
      const detail = await carol.owner('threads.get', { id: atCarol.id });
      return detail.turns.at(-1)?.status === 'stopped' && detail.thread.run.state === 'idle' ? detail : undefined;
    }, 'carol’s turn to be stopped by the withdrawal');
    expect(stopped.turns.at(-1)?.reason).toBe('Withdrawn by bob');
    expect(stopped.thread.withdrawn).toMatchObject({ by: 'bob', told: true });
    expect(stopped.thread.run.session).toBe(atCarol.run.session);
    expect(stopped.texts.filter((t) => t.direction === 'in').map((t) => t.state)).toEqual(['handled']);

    // bob: the agent conversation alice started is withdrawn by alice, and bob's own ask to carol with it.
    const [fromAlice] = await peerStarted(bob);
    expect(fromAlice!.withdrawn).toMatchObject({ by: 'alice' });
    const toCarol = (await bob.owner('threads.list', { root: { kind: 'thread', id: fromAlice!.id } })).find(
      (t) => t.startedBy === 'local',
    );
    expect(toCarol?.withdrawn).toMatchObject({ by: 'alice' });
    await bob.waitFor(async () => {
      const detail = await bob.owner('threads.get', { id: toCarol!.id });
      return detail.thread.withdrawn?.told === true;
    }, 'carol to note bob’s withdrawal');

    // alice: withdrawn by her owner, and bob noted it.
    const owner = alice.installation.owner().name;
    await alice.waitFor(async () => {
      const detail = await alice.owner('threads.get', { id: mine!.id });
      return detail.thread.withdrawn?.told === true && detail.thread.withdrawn.by === owner;
    }, 'bob to note alice’s withdrawal');
    // carol's agent is told where it stands: `parley context` (and MCP's `context`) says its work was withdrawn.
    const carolRun = findRun(carol.installation.db, { kind: 'thread', id: atCarol.id })!;
    const context = carol.installation.engine.describeThread(carolRun);
    expect(context.withdrawn).toMatchObject({ by: 'bob' });
    expect(context.summary).toContain('Your work here was withdrawn by bob');
    // Nothing is left to withdraw.
    await expect(alice.owner('threads.withdraw', { id: mine!.id })).rejects.toMatchObject({ code: 'invalid' });

    // Later text in the same agent conversation continues it.
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: and now?' });
    const answer = await alice.waitFor(async () => {
      const [reply] = await texts(alice, mine!.id, 'in');
      return reply;
    }, 'bob’s answer to the later text');
    expect(answer.body).toBe('answer from researcher: and now?');
    expect((await alice.owner('threads.get', { id: mine!.id })).thread.withdrawn?.seq).toBe(1);
  }, 60_000);

  it('deleting the root withdraws its open asks the same way', async () => {
    const { alice, carol, conversation } = await chain();
    await alice.owner('conversations.send', {
      id: conversation.id,
      text: 'ask bob/researcher: ask carol/expert: sleep 60',
    });
    const atCarol = await carolWorking(carol);
    await alice.owner('conversations.delete', { id: conversation.id });
    const detail = await carol.waitFor(async () => {
      const d = await carol.owner('threads.get', { id: atCarol.id });
      return d.turns.at(-1)?.status === 'stopped' ? d : undefined;
    }, 'carol’s turn to be stopped by the deletion at alice');
    expect(detail.thread.withdrawn).toMatchObject({ by: 'bob' });
  }, 60_000);
});

/** alice's assistant and bob's researcher, paired; bob's assistant can ask alice's assistant. */
async function aliceAndBob() {
  const alice = await peer('alice');
  const bob = await peer('bob');
  const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
  await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
  const bobAssistant = await bob.owner('roles.create', { name: 'helper', agent: { adapter: 'scripted' } });
  const { inviterConnectionId: bobToAlice, acceptorConnectionId: aliceToBob } = await pair(bob, alice, {
    inviter: ['researcher', 'helper'],
    acceptor: ['assistant'],
  });
  const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
  return { alice, bob, assistant, bobAssistant, bobToAlice, aliceToBob, conversation };
}

describe('pause told (DESIGN §12.7)', () => {
  it('bob sees that alice paused, lists it as paused for his agents, and refuses their sends at once; unpausing is told too', async () => {
    const { alice, bob, bobAssistant, aliceToBob, bobToAlice } = await aliceAndBob();
    const [before] = await bob.owner('connections.list', {});
    expect(before).toMatchObject({ status: 'active', online: true, peerPausedAt: null });

    await alice.owner('connections.pause', { id: aliceToBob });
    const paused = await bob.waitFor(async () => {
      const [c] = await bob.owner('connections.list', {});
      return c?.peerPausedAt ? c : undefined;
    }, 'bob to hear of the pause');
    // bob's own side is not paused: alice's is.
    expect(paused).toMatchObject({ id: bobToAlice, status: 'active', online: true });
    expect(bob.installation.engine.peers()).toEqual([
      expect.objectContaining({ peer: 'alice', state: 'paused', pausedBy: 'peer', pausedAt: paused.peerPausedAt }),
    ]);

    // bob's agent tries to ask alice: refused there and then, nothing goes out.
    const chat = await bob.owner('conversations.open', { roleId: bobAssistant.id });
    await bob.owner('conversations.send', { id: chat.id, text: 'ask alice/assistant: are you there?' });
    const reply = await bob.waitFor(async () => {
      const detail = await bob.owner('conversations.get', { id: chat.id });
      return detail.messages.find((m) => m.body.startsWith('error:'));
    }, 'the refusal');
    expect(reply.body).toMatch(/^error: alice has paused the connection/);
    expect(await bob.owner('threads.list', { root: { kind: 'conversation', id: chat.id } })).toEqual([]);
    expect(await alice.owner('threads.list', { peerStarted: true })).toEqual([]);

    await alice.owner('connections.unpause', { id: aliceToBob });
    await bob.waitFor(async () => {
      const [c] = await bob.owner('connections.list', {});
      return c?.peerPausedAt === null;
    }, 'bob to hear of the unpause');
    expect(bob.installation.engine.peers()[0]).toMatchObject({ state: 'online' });
    expect(bob.installation.engine.peers()[0]!.pausedBy).toBeUndefined();
  }, 60_000);

  it('is told again on the next link: a pause made while bob was away reaches him when he is back', async () => {
    const { alice, bob, aliceToBob } = await aliceAndBob();
    open.splice(open.indexOf(bob), 1);
    const again = await bob.restart({}, async () => {
      await alice.owner('connections.pause', { id: aliceToBob });
    });
    open.push(again);
    await again.waitFor(async () => {
      const [c] = await again.owner('connections.list', {});
      return c?.peerPausedAt ? c : undefined;
    }, 'bob, restarted, to hear of the pause');
  }, 60_000);
});

describe('a decline told (DESIGN §12.7)', () => {
  it('a denied incoming text is rejected to its sender as declined: alice’s text fails, her agent is told “bob declined”', async () => {
    const { alice, bob, conversation, bobToAlice } = await aliceAndBob();
    await bob.owner('connections.setPolicy', { id: bobToAlice, incoming: 'ask' });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: secret plans?' });
    const mine = await alice.waitFor(
      async () => (await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } }))[0],
      'alice’s agent conversation',
    );
    await alice.waitFor(async () => (await texts(alice, mine.id, 'out'))[0]?.state === 'acked', 'the ack');
    const approval = await bob.waitFor(async () => (await bob.owner('approvals.list', {}))[0], 'the held text');
    await bob.owner('approvals.decide', { id: approval.id, approve: false });

    const failed = await alice.waitFor(async () => {
      const [text] = await texts(alice, mine.id, 'out');
      return text?.state === 'failed' ? text : undefined;
    }, 'alice’s text to fail as declined');
    expect(failed).toMatchObject({ reason: 'declined', failedBy: 'peer' });
    // Her agent hears of it in a turn of its own, and does not repeat it in its notes.
    const detail = await alice.waitFor(async () => {
      const detail = await alice.owner('threads.get', { id: mine.id });
      return detail.turns.at(-1)?.status === 'done' ? detail : undefined;
    }, 'the agent’s turn on the notice');
    expect(noticesTakenBy(alice.installation.db, detail.turns.at(-1)!.id)).toEqual([
      expect.stringMatching(/^Your text #1 to bob\/researcher was rejected \(declined\): a person at bob declined it/),
    ]);
    expect(detail.runLog.map((entry) => entry.output).join('\n')).not.toMatch(/declined/);
    // bob need not tell it again: alice noted it.
    await bob.waitFor(
      () =>
        (
          bob.installation.db.prepare('SELECT count(*) AS n FROM texts WHERE decline_untold = 1').get() as {
            n: number;
          }
        ).n === 0,
      'alice to note the decline',
    );
  }, 60_000);
});

describe('revision 1 peers', () => {
  it('a peer of revision 1 gets no status, withdraw or declined frame, and the link stays up', async () => {
    const alice = await peer('alice');
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const { code } = await alice.owner('connections.invite', { roles: ['assistant'] });
    const bob = await standInIdentity('bob', code, { roles: ['researcher'], exposes: ['researcher'] });
    const [connection] = await alice.owner('connections.list', {});
    await alice.owner('connections.setPolicy', { id: connection!.id, incoming: 'ask' });
    // What bob said when he last spoke revision 2: he paused. Speaking revision 1 now, he can never unpause it.
    alice.installation.db.prepare("UPDATE connections SET peer_paused_at = '2026-12-01T00:00:00.000Z'").run();
    const raw = await RawPeer.dial(
      bob.identity,
      alice.installation.peerAddress!,
      alice.installation.id,
      { type: 'hello', protocol: 2, name: 'bob', address: null },
      { revision: 1 },
    );
    raws.push(raw);
    await raw.next('roles');
    await alice.waitFor(
      async () => (await alice.owner('connections.list', {}))[0]?.peerPausedAt === null,
      'the old pause to be dropped',
    );
    // bob (revision 1) asks; alice's owner declines it; alice pauses, then withdraws her own ask.
    raw.send({ type: 'text', thread: 'B'.repeat(22), seq: 1, from: 'researcher', to: 'assistant', body: 'hi' });
    await raw.next('ack');
    const approval = await alice.waitFor(async () => (await alice.owner('approvals.list', {}))[0], 'the held text');
    await alice.owner('approvals.decide', { id: approval.id, approve: false });
    const chat = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: chat.id, text: 'ask bob/researcher: sleep 1' });
    const text = await raw.next('text');
    raw.send({ type: 'ack', thread: text.thread, seq: text.seq });
    const mine = await alice.waitFor(
      async () => (await alice.owner('threads.list', { root: { kind: 'conversation', id: chat.id } }))[0],
      'alice’s ask',
    );
    await alice.waitFor(async () => (await texts(alice, mine.id, 'out'))[0]?.state === 'acked', 'the ack');
    await alice.owner('threads.withdraw', { id: mine.id });
    await alice.owner('connections.pause', { id: connection!.id });
    await raw.roundTrip();
    const revision2 = raw.frames.filter(
      (f) => ['status', 'withdraw', 'noted'].includes(f.type) || (f.type === 'reject' && f.reason === 'declined'),
    );
    expect(revision2).toEqual([]);
    expect(raw.closed).toBeNull();
    // Nothing was told, so the withdrawal still waits to be: it goes once bob speaks revision 2.
    const detail = await alice.owner('threads.get', { id: mine.id });
    expect(detail.thread.withdrawn).toMatchObject({ told: false });
  }, 60_000);
});

/**
 * alice and carol in this process, bob between them in a process of his own (so he can
 * be frozen and killed -9); every role scripted.
 */
async function chainThroughProcess() {
  const bobDir = makeDataDir('parley-withdraw-bob-');
  dirs.push(bobDir);
  const startBob = async () => {
    const p = await startWirePeer({ dataDir: bobDir, name: 'bob', args: ['--start-turns'] });
    processes.push(p);
    return p;
  };
  const bob = await startBob();
  await bob.request('call', { method: 'roles.create', params: { name: 'researcher', agent: { adapter: 'scripted' } } });
  const alice = await peer('alice');
  const carolDir = makeDataDir('parley-withdraw-carol-');
  dirs.push(carolDir);
  const carol = await peer('carol', carolDir);
  const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
  await carol.owner('roles.create', { name: 'expert', agent: { adapter: 'scripted' } });
  const { code } = await bob.request<{ code: string }>('invite', { roles: ['researcher'] });
  await alice.owner('connections.accept', { code, roles: ['assistant'] });
  await alice.waitFor(
    async () => (await alice.owner('connections.list', {}))[0]?.peerRoles.length === 1,
    'bob’s roles',
  );
  const invitation = await carol.owner('connections.invite', { roles: ['expert'] });
  await bob.request('accept', { code: invitation.code, roles: ['researcher'] });
  const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
  await alice.owner('conversations.send', {
    id: conversation.id,
    text: 'ask bob/researcher: ask carol/expert: sleep 60',
  });
  const atCarol = await carolWorking(carol);
  const [mine] = await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } });
  return { alice, carol, carolDir, bob, startBob, mine: mine!, atCarol };
}

const stoppedAt = (t: TestInstallation, id: number, what: string) =>
  t.waitFor(
    async () => {
      const detail = await t.owner('threads.get', { id });
      return detail.turns.at(-1)?.status === 'stopped' && detail.thread.run.state === 'idle' ? detail : undefined;
    },
    what,
    30_000,
  );

describe('withdraw across a crash of the middle installation', () => {
  it('bob frozen, the withdrawal on its way to him, then killed -9: alice sends it again to the restarted bob, and carol stops', async () => {
    const { alice, carol, bob, startBob, mine, atCarol } = await chainThroughProcess();
    process.kill(bob.ready.pid, 'SIGSTOP');
    await alice.owner('threads.withdraw', { id: mine.id });
    // The frame may sit in bob's socket: never read, never noted.
    expect((await alice.owner('threads.get', { id: mine.id })).thread.withdrawn).toMatchObject({ told: false });
    await bob.kill();
    processes.splice(processes.indexOf(bob), 1);
    await startBob();
    const detail = await stoppedAt(carol, atCarol.id, 'carol’s turn to be stopped');
    expect(detail.turns.at(-1)?.reason).toBe('Withdrawn by bob');
    await alice.waitFor(
      async () => (await alice.owner('threads.get', { id: mine.id })).thread.withdrawn?.told,
      'the restarted bob to note alice’s withdrawal',
    );
  }, 120_000);

  it('carol away while bob passes it on, bob killed -9 with it unconfirmed: the restarted bob sends it to carol when she is back', async () => {
    const { alice, carol, carolDir, bob, startBob, mine, atCarol } = await chainThroughProcess();
    await carol.close();
    open.splice(open.indexOf(carol), 1);
    await alice.owner('threads.withdraw', { id: mine.id });
    // bob has it (he noted it to alice), and waits to tell carol.
    await alice.waitFor(
      async () => (await alice.owner('threads.get', { id: mine.id })).thread.withdrawn?.told,
      'bob to note alice’s withdrawal',
    );
    const bobCall = <T>(method: string, params: object) =>
      bob.request<{ result: T }>('call', { method, params }).then((r) => r.result);
    const [fromAlice] = await bobCall<ThreadSummary[]>('threads.list', { peerStarted: true });
    // The agent conversation alice started is its own root; bob's ask to carol is the one bob started under it.
    const toCarol = (
      await bobCall<ThreadSummary[]>('threads.list', { root: { kind: 'thread', id: fromAlice!.id } })
    ).find((t) => t.startedBy === 'local');
    expect(toCarol!.withdrawn).toMatchObject({ by: 'alice', told: false });
    await bob.kill();
    processes.splice(processes.indexOf(bob), 1);
    // carol comes back first (her cut-off turn runs again), then bob.
    const back = await peer('carol', carolDir);
    await carolWorking(back);
    await startBob();
    const detail = await stoppedAt(back, atCarol.id, 'carol’s re-run turn to be stopped');
    expect(detail.thread.withdrawn).toMatchObject({ by: 'bob' });
  }, 120_000);
});

describe('withdraw of a text still on the wire', () => {
  it('fails it, so it is never sent again: the next link carries the withdrawal and no text', async () => {
    const alice = await peer('alice');
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const { code } = await alice.owner('connections.invite', { roles: ['assistant'] });
    const bob = await standInIdentity('bob', code, { roles: ['researcher'], exposes: ['researcher'] });
    const dial = async () => {
      const raw = await RawPeer.dial(bob.identity, alice.installation.peerAddress!, alice.installation.id, {
        type: 'hello',
        protocol: 2,
        name: 'bob',
        address: null,
      });
      raws.push(raw);
      await raw.next('roles');
      return raw;
    };
    const raw = await dial();
    const chat = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: chat.id, text: 'ask bob/researcher: are you there?' });
    // bob holds back its ack: the text is on the wire.
    const sent = await raw.next('text');
    const mine = await alice.waitFor(
      async () => (await alice.owner('threads.list', { root: { kind: 'conversation', id: chat.id } }))[0],
      'alice’s ask',
    );
    await alice.owner('threads.withdraw', { id: mine.id });
    const withdraw = await raw.next('withdraw');
    expect(withdraw).toEqual({ type: 'withdraw', thread: sent.thread, seq: 1 });
    expect((await texts(alice, mine.id, 'out')).map((t) => [t.state, t.reason])).toEqual([['failed', 'withdrawn']]);
    // The link drops before bob notes it: the next one carries the withdrawal again, and not the text.
    raw.close();
    await alice.waitFor(async () => !(await alice.owner('connections.list', {}))[0]!.online, 'bob offline');
    const again = await dial();
    await again.next('withdraw');
    again.send({ type: 'noted', thread: sent.thread, seq: 1, of: 'withdraw' });
    await again.roundTrip();
    expect(again.frames.filter((f) => f.type === 'text')).toEqual([]);
    await alice.waitFor(
      async () => (await alice.owner('threads.get', { id: mine.id })).thread.withdrawn?.told,
      'bob’s note to be recorded',
    );
  }, 60_000);
});
