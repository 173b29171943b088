// ADR 0035 sentence by sentence, between real installations: separate data folders,
// real SQLite files, scripted agents as real processes calling the real CLI. Every
// sentence runs over links in memory (the engine's whole protocol on an in-memory pair
// of frame ports, no TLS); each behaviour runs over real carriers as well: mutual TLS on
// loopback by address, and by DHT key alone on a loopback testnet (no address in the
// invitation or anywhere else).
import createTestnet, { type Testnet } from '@hyperswarm/testnet';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ParamsOf } from '../../shared/api-contract';
import type { ThreadSummary } from '../../shared/domain';
import { findRun, runningTurns } from '../store/queries/runs';
import type { TestInstallation } from '../../test-support/installation';
import { memoryNetwork } from '../../test-support/memory-network';
import { noticesTakenBy } from '../../test-support/notices';
import { openPeer, pair } from '../../test-support/network';

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});
async function peer(name: string, options: Parameters<typeof openPeer>[1] = {}, carrier: Carrier = inMemory) {
  const t = await openPeer(name, { ...carrier.options(), ...options });
  open.push(t);
  if (carrier.keyOnly) t.installation.engine.setAddress(null);
  return t;
}

interface Carrier {
  name: string;
  options(): Parameters<typeof openPeer>[1];
  /** Listens, yet gives no address: reached only by its DHT key. */
  keyOnly: boolean;
  /** How a link comes, as connections.list says. */
  path: 'direct' | 'holepunched';
}
const direct: Carrier = { name: 'the direct carrier', options: () => ({}), keyOnly: false, path: 'direct' };
const links = memoryNetwork();
const inMemory: Carrier = { name: 'links in memory', options: () => links.options(), keyOnly: false, path: 'direct' };
let testnet: Testnet | null = null;
const overDht: Carrier = {
  name: 'the DHT carrier, by key alone',
  options: () => ({ dht: { kind: 'nodes', nodes: testnet!.bootstrap } }),
  keyOnly: true,
  path: 'holepunched',
};
beforeAll(async () => {
  testnet = await createTestnet(3);
});
afterAll(async () => {
  await testnet?.destroy();
});

/** alice (assistant) ↔ bob (researcher), both scripted, each exposing its role to the other. */
async function aliceAndBob(carrier: Carrier) {
  const alice = await peer('alice', {}, carrier);
  const bob = await peer('bob', {}, carrier);
  const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
  const researcher = await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
  const ids = await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
  // The link came by the carrier under test, and by no other.
  expect((await alice.owner('connections.list', {}))[0]).toMatchObject(
    carrier.keyOnly ? { address: null, path: carrier.path } : { path: carrier.path },
  );
  const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
  return { alice, bob, assistant, researcher, conversation, ...ids };
}

/** Waits for a message in the owner's conversation that matches. */
async function waitForMessage(t: TestInstallation, id: number, match: (body: string) => boolean, what: string) {
  return t.waitFor(async () => {
    const { messages } = await t.owner('conversations.get', { id });
    return messages.find((m) => match(m.body))?.body;
  }, what);
}

async function onlyThread(t: TestInstallation, params: ParamsOf<'threads.list'>): Promise<ThreadSummary> {
  const threads = await t.owner('threads.list', params);
  expect(threads).toHaveLength(1);
  return threads[0]!;
}

describe('agent conversations per topic (ADR 0035)', () => {
  it.each([inMemory, direct])(
    'gives two people asking the same peer role two agent conversations, and each answer reaches only its asker, over $name',
    async (carrier) => {
      const { alice, bob, assistant, conversation } = await aliceAndBob(carrier);
      const { person: dave } = await alice.owner('people.add', { name: 'dave', kind: 'member' });
      const asDave = alice.as(dave);
      const daves = await asDave('conversations.open', { roleId: assistant.id });
      await alice.owner('conversations.send', {
        id: conversation.id,
        text: 'ask bob/researcher: alice wants the budget',
      });
      await asDave('conversations.send', { id: daves.id, text: 'ask bob/researcher: dave wants the schedule' });
      expect(await waitForMessage(alice, conversation.id, (b) => b.includes('says:'), 'alice’s answer')).toBe(
        'bob/researcher says: answer from researcher: alice wants the budget',
      );
      const daveAnswer = await alice.waitFor(async () => {
        const detail = await asDave('conversations.get', { id: daves.id });
        return detail.messages.find((m) => m.body.includes('says:'))?.body;
      }, 'dave’s answer');
      expect(daveAnswer).toBe('bob/researcher says: answer from researcher: dave wants the schedule');
      // Neither saw the other's text.
      const aliceBodies = (await alice.owner('conversations.get', { id: conversation.id })).messages
        .map((m) => m.body)
        .join('\n');
      expect(aliceBodies).not.toContain('dave');
      // Two threads on both sides, with different thread IDs; each person sees only the one under their conversation.
      const alicesThread = await onlyThread(alice, { root: { kind: 'conversation', id: conversation.id } });
      const davesThreads = await asDave('threads.list', { root: { kind: 'conversation', id: daves.id } });
      expect(davesThreads).toHaveLength(1);
      expect(davesThreads[0]!.threadId).not.toBe(alicesThread.threadId);
      await expect(asDave('threads.get', { id: alicesThread.id })).rejects.toMatchObject({ code: 'not_found' });
      const bobSide = await bob.owner('threads.list', { peerStarted: true });
      expect(bobSide.map((t) => t.threadId).sort()).toEqual([alicesThread.threadId, davesThreads[0]!.threadId].sort());
      // On bob's side each is a separate run with its own session.
      const sessions = bobSide.map((t) => t.run.session);
      expect(new Set(sessions).size).toBe(2);
    },
  );

  it.each([inMemory])(
    'sends a second question from the same conversation in the same agent conversation, over $name',
    async (carrier) => {
      const { alice, conversation } = await aliceAndBob(carrier);
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: first' });
      await waitForMessage(
        alice,
        conversation.id,
        (b) => b.endsWith('first') && b.includes('says:'),
        'the first answer',
      );
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: second' });
      await waitForMessage(
        alice,
        conversation.id,
        (b) => b.endsWith('second') && b.includes('says:'),
        'the second answer',
      );
      const thread = await alice.waitFor(async () => {
        const t = await onlyThread(alice, { root: { kind: 'conversation', id: conversation.id } });
        return t.run.state === 'idle' ? t : undefined;
      }, 'the run to finish');
      expect(thread.counts).toMatchObject({ acked: 2, handled: 2, failed: 0 });
    },
  );

  it.each([inMemory])(
    'relays through bob to carol and brings the answer back down the chain, with no root on the wire, over $name',
    async (carrier) => {
      const { alice, bob, conversation } = await aliceAndBob(carrier);
      const carol = await peer('carol', {}, carrier);
      await carol.owner('roles.create', { name: 'analyst', agent: { adapter: 'scripted' } });
      await pair(carol, bob, { inviter: ['analyst'], acceptor: [] });
      await alice.owner('conversations.send', {
        id: conversation.id,
        text: 'ask bob/researcher: ask carol/analyst: numbers?',
      });
      const answer = await waitForMessage(
        alice,
        conversation.id,
        (b) => b.includes('carol/analyst says'),
        'the relayed answer',
      );
      expect(answer).toBe('bob/researcher says: carol/analyst says: answer from analyst: numbers?');
      // bob: the peer-started thread from alice is the root of bob's thread to carol.
      const fromAlice = await onlyThread(bob, { peerStarted: true });
      const toCarol = await onlyThread(bob, { root: { kind: 'thread', id: fromAlice.id } }).catch(async () => {
        const all = await bob.owner('threads.list', { root: { kind: 'thread', id: fromAlice.id } });
        return all.find((t) => t.startedBy === 'local')!;
      });
      expect(toCarol).toMatchObject({
        startedBy: 'local',
        peerRole: 'analyst',
        root: { kind: 'thread', id: fromAlice.id },
      });
      // carol sees a thread bob started, rooted in itself: nothing about alice reached her.
      const atCarol = await onlyThread(carol, { peerStarted: true });
      expect(atCarol).toMatchObject({
        threadId: toCarol.threadId,
        root: { kind: 'thread', id: atCarol.id },
        peerRole: 'researcher',
      });
      const carolTexts = (await carol.owner('threads.get', { id: atCarol.id })).texts.map((t) => t.body).join('\n');
      expect(carolTexts).not.toContain('alice');
    },
  );

  it.each([inMemory])(
    'tells a run in an agent conversation its root and how to report there, over $name',
    async (carrier) => {
      const { alice, bob, conversation } = await aliceAndBob(carrier);
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: hi' });
      await waitForMessage(alice, conversation.id, (b) => b.includes('says:'), 'the answer');
      const thread = await onlyThread(alice, { root: { kind: 'conversation', id: conversation.id } });
      const context = alice.installation.engine.describeThread(
        findRun(alice.installation.db, { kind: 'thread', id: thread.id })!,
      );
      expect(context).toMatchObject({
        kind: 'thread',
        peerStarted: false,
        peer: 'bob/researcher',
        root: { kind: 'conversation', summary: 'your conversation with alice' },
      });
      expect(context.reporting).toContain('`report`');
      const bobThread = await onlyThread(bob, { peerStarted: true });
      const bobContext = bob.installation.engine.describeThread(
        findRun(bob.installation.db, { kind: 'thread', id: bobThread.id })!,
      );
      expect(bobContext).toMatchObject({
        peerStarted: true,
        peer: 'alice/assistant',
        root: { kind: 'thread', id: bobThread.id },
      });
      expect(bobContext.reporting).toContain('`reply`');
    },
  );

  it.each([inMemory])(
    'keeps a finished task’s agent conversations working: a late answer is still reported on it, over $name',
    async (carrier) => {
      const { alice, assistant } = await aliceAndBob(carrier);
      const task = await alice.owner('tasks.create', { roleId: assistant.id, title: 'budget', body: '' });
      await alice.waitFor(
        async () => (await alice.owner('tasks.get', { id: task.id })).task.run.state === 'idle',
        'the brief',
      );
      await alice.owner('tasks.comment', { id: task.id, text: 'ask bob/researcher: sleep 1' });
      await alice.waitFor(
        async () => (await alice.owner('threads.list', { root: { kind: 'task', id: task.id } })).length === 1,
        'the thread',
      );
      await alice.owner('tasks.finish', { id: task.id });
      const log = await alice.waitFor(async () => {
        const entries = (await alice.owner('tasks.get', { id: task.id })).log;
        return entries.find((e) => e.kind === 'report') ? entries : undefined;
      }, 'the late answer');
      expect(log.find((e) => e.kind === 'report')?.body).toBe('bob/researcher says: answer from researcher: slept 1');
      expect((await alice.owner('tasks.get', { id: task.id })).task.status).toBe('finished');
    },
  );
});

describe('stop (ADR 0035)', () => {
  it.each([inMemory])(
    'stops a peer-started agent conversation’s agent: the request is dropped, the next text continues with the agent told, over $name',
    async (carrier) => {
      const { alice, bob, conversation } = await aliceAndBob(carrier);
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: sleep 30' });
      const thread = await bob.waitFor(async () => {
        const [t] = await bob.owner('threads.list', { peerStarted: true });
        // Running, and far enough to have its session.
        return t?.run.state === 'running' && t.run.session ? t : undefined;
      }, 'bob’s agent to work');
      // Any member can stop an agent conversation a peer started.
      const { person: erin } = await bob.owner('people.add', { name: 'erin', kind: 'member' });
      expect(await bob.as(erin)('threads.stop', { id: thread.id })).toEqual({ stopped: true });
      expect(runningTurns(bob.installation.db)).toEqual([]);
      const stopped = await bob.owner('threads.get', { id: thread.id });
      expect(stopped.turns.at(-1)).toMatchObject({ status: 'stopped', reason: 'Stopped by erin' });
      expect(stopped.texts.filter((t) => t.direction === 'in').map((t) => t.state)).toEqual(['handled']);
      expect(stopped.thread.run.state).toBe('idle');
      // Nothing restarts it; the next text from alice continues the same run, told about the stop.
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: are you there?' });
      const answer = await waitForMessage(
        alice,
        conversation.id,
        (b) => b.startsWith('bob/researcher says'),
        'the answer after the stop',
      );
      expect(answer).toBe('bob/researcher says: answer from researcher: are you there?');
      const after = await bob.owner('threads.get', { id: thread.id });
      // Told of the stop (the notice went to that turn), which it does not repeat in its notes.
      expect(after.runLog.at(-1)?.output).toBe('replied: answer from researcher: are you there?');
      expect(noticesTakenBy(bob.installation.db, after.turns.at(-1)!.id)).toEqual([
        expect.stringMatching(/^You were stopped by erin before your previous turn finished/),
      ]);
      expect(after.thread.run.session).toBe(stopped.thread.run.session);
    },
  );
});

describe('pause (ADR 0035)', () => {
  it.each([inMemory, overDht])(
    'stops the agents, refuses sends, fails waiting texts, rejects inbound text with paused — and unpause restarts nothing, over $name',
    async (carrier) => {
      const { alice, bob, conversation, inviterConnectionId: bobsConnection } = await aliceAndBob(carrier);
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: sleep 30' });
      const thread = await bob.waitFor(async () => {
        const [t] = await bob.owner('threads.list', { peerStarted: true });
        return t?.run.state === 'running' ? t : undefined;
      }, 'bob’s agent to work');
      const paused = await bob.owner('connections.pause', { id: bobsConnection });
      expect(paused.status).toBe('paused');
      expect(paused.online).toBe(true);
      expect(runningTurns(bob.installation.db)).toEqual([]);
      expect((await bob.owner('threads.get', { id: thread.id })).turns.at(-1)?.reason).toBe(
        'Stopped by bob (paused the connection)',
      );
      // Roles cannot send on it.
      await expect(
        bob.installation.engine.sendAs(
          findRun(bob.installation.db, { kind: 'thread', id: thread.id })!,
          { id: 1, name: 'researcher' },
          'alice/assistant',
          'hello?',
        ),
      ).rejects.toMatchObject({ code: 'paused' });
      // alice hears of the pause (DESIGN §12.7): her agent's send is refused there, and nothing goes on the wire.
      await alice.waitFor(
        async () => (await alice.owner('connections.list', {}))[0]?.peerPausedAt,
        'alice to hear of bob’s pause',
      );
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: still there?' });
      const refusal = await alice.waitFor(async () => {
        const detail = await alice.owner('conversations.get', { id: conversation.id });
        return detail.messages.find((m) => m.body.startsWith('error: bob has paused the connection'));
      }, 'the refusal at alice');
      expect(refusal.author.kind).toBe('role');
      const [aliceThread] = await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } });
      expect((await alice.owner('threads.get', { id: aliceThread!.id })).texts.map((t) => t.body)).toEqual([
        'sleep 30',
      ]);
      expect((await bob.owner('threads.get', { id: thread.id })).texts.map((t) => t.body)).toEqual(['sleep 30']);
      // Unpause restarts nothing.
      const unpaused = await bob.owner('connections.unpause', { id: bobsConnection });
      expect(unpaused.status).toBe('active');
      const bobThread = await bob.owner('threads.get', { id: thread.id });
      expect(bobThread.thread.run).toMatchObject({ state: 'idle', pending: 0 });
      expect(runningTurns(bob.installation.db)).toEqual([]);
    },
  );

  it.each([inMemory, overDht])(
    'fails texts waiting to be sent when the owner pauses, without waking the agent, over $name',
    async (carrier) => {
      const { alice, bob, conversation, acceptorConnectionId: alicesConnection } = await aliceAndBob(carrier);
      // bob goes away: alice's next text waits in her queue.
      await bob.close();
      open.splice(open.indexOf(bob), 1);
      await alice.waitFor(async () => !(await alice.owner('connections.list', {}))[0]!.online, 'bob offline');
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: anyone?' });
      const queued = await alice.waitFor(async () => {
        const [t] = await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } });
        return t?.counts.queued === 1 ? t : undefined;
      }, 'the queued text');
      const turnsBefore = (await alice.owner('threads.get', { id: queued.id })).turns.length;
      const paused = await alice.owner('connections.pause', { id: alicesConnection });
      expect(paused.queue.used).toBe(0);
      const detail = await alice.owner('threads.get', { id: queued.id });
      expect(detail.texts.at(-1)).toMatchObject({ state: 'failed', reason: 'paused' });
      expect(detail.turns.length).toBe(turnsBefore);
      expect(detail.thread.run.state).toBe('idle');
    },
  );
});

describe('root deletion (ADR 0035)', () => {
  let bin: string;
  beforeAll(() => {
    bin = mkdtempSync(path.join(os.tmpdir(), 'parley-late-'));
    // Answers at once, then late; after a `thread` rejection it sends again from the same root.
    writeFileSync(
      path.join(bin, 'late.cjs'),
      `let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  const { execFileSync } = require('node:child_process');
  const turn = JSON.parse(input);
  for (const i of turn.inputs) {
    if (i.kind === 'text') { execFileSync('parley', ['reply', 'on it']); execFileSync('sleep', ['1']); execFileSync('parley', ['reply', 'late answer to ' + i.body]); }
    if (i.kind === 'notice' && i.body.includes('(thread)')) execFileSync('parley', ['send', '--to', 'alice/assistant', 'after the rejection']);
  }
  process.stdout.write('done');
});`,
    );
    chmodSync(path.join(bin, 'late.cjs'), 0o644);
  });
  afterAll(() => rmSync(bin, { recursive: true, force: true }));

  it.each([inMemory])(
    'closes the agent conversations of a deleted conversation; later text is rejected with thread, and the sender’s next send starts one the receiver sees as peer-started, over $name',
    async (carrier) => {
      const alice = await peer('alice', {}, carrier);
      const bob = await peer('bob', {}, carrier);
      const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
      await bob.owner('roles.create', {
        name: 'researcher',
        agent: { adapter: 'command', command: [process.execPath, path.join(bin, 'late.cjs')], input: 'json' },
      });
      await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
      const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: slow question' });
      const thread = await alice.waitFor(async () => {
        const [t] = await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } });
        return t?.counts.acked === 1 && t.lastText?.direction === 'in' ? t : undefined;
      }, 'the question answered at once');
      // Answered, so nothing is withdrawn: bob's agent goes on, and its late answer finds the agent conversation closed.
      await alice.owner('conversations.delete', { id: conversation.id });
      // History stays, readable by owners: the thread is closed, its root gone.
      const orphaned = await onlyThread(alice, { orphaned: true });
      expect(orphaned).toMatchObject({
        id: thread.id,
        status: 'closed',
        closeReason: 'root deleted',
        root: { gone: true },
      });
      // bob's late answer is rejected with `thread`; bob closes its side and sends again in a new thread.
      const bobClosed = await bob.waitFor(async () => {
        const threads = await bob.owner('threads.list', { peerStarted: true });
        return threads.find((t) => t.status === 'closed');
      }, 'bob to close its side');
      expect(bobClosed.closeReason).toBe('closed by alice');
      const bobDetail = await bob.owner('threads.get', { id: bobClosed.id });
      expect(bobDetail.texts.filter((t) => t.direction === 'out').map((t) => [t.body, t.state, t.reason])).toEqual([
        ['on it', 'acked', null],
        ['late answer to slow question', 'failed', 'thread'],
      ]);
      const fresh = await alice.waitFor(async () => {
        const threads = await alice.owner('threads.list', { peerStarted: true });
        return threads[0];
      }, 'the new agent conversation at alice');
      expect(fresh.threadId).not.toBe(thread.threadId);
      expect(fresh).toMatchObject({
        startedBy: 'peer',
        peerRole: 'researcher',
        root: { kind: 'thread', id: fresh.id },
      });
      expect((await alice.owner('threads.get', { id: fresh.id })).texts[0]?.body).toBe('after the rejection');
    },
  );
});

describe('revoke (ADR 0035)', () => {
  it.each([inMemory, overDht])(
    'is permanent: both sides close everything, sends are refused and the certificate is refused from then on, over $name',
    async (carrier) => {
      const {
        alice,
        bob,
        conversation,
        acceptorConnectionId: alicesConnection,
        inviterConnectionId: bobsConnection,
      } = await aliceAndBob(carrier);
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: hi' });
      await waitForMessage(alice, conversation.id, (b) => b.includes('says:'), 'the answer');
      const revoked = await alice.owner('connections.revoke', { id: alicesConnection });
      expect(revoked).toMatchObject({ status: 'revoked', online: false });
      const bobSide = await bob.waitFor(async () => {
        const [c] = await bob.owner('connections.list', {});
        return c?.status === 'revoked' ? c : undefined;
      }, 'bob to learn of the revoke');
      expect(bobSide.id).toBe(bobsConnection);
      for (const t of [alice, bob]) {
        const all = [
          ...(await t.owner('threads.list', { peerStarted: true })),
          ...(t === alice
            ? await t.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } })
            : []),
        ];
        expect(all.length).toBeGreaterThan(0);
        for (const thread of all) expect(thread.status).toBe('closed');
      }
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: again?' });
      expect(await waitForMessage(alice, conversation.id, (b) => b.startsWith('error:'), 'the refusal')).toBe(
        'error: the connection to bob was revoked',
      );
      // Neither pause nor unpause can bring it back.
      for (const method of ['connections.pause', 'connections.unpause'] as const)
        await expect(alice.owner(method, { id: alicesConnection })).rejects.toMatchObject({ code: 'revoked' });
      expect((await alice.owner('connections.list', {}))[0]!.status).toBe('revoked');
    },
  );
});
