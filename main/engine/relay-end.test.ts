// The relay end (DESIGN §12.5), across three real installations: alice asks bob, whose
// agent relays the question to carol. Whatever happens on the second hop — carol's
// person stops her agent, bob pauses bob↔carol, carol refuses the text, carol is killed
// -9 twice while her agent works — alice's ask reaches an end with no agent running
// anywhere: bob's ask line first says he waits on carol (`relayed`), then bob's agent is
// told that its ask ended unanswered and its turn's output goes back to alice.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ThreadSummary } from '../../shared/domain';
import type { TestInstallation } from '../testing/installation';
import { openPeer, pair } from '../testing/network';
import { until } from '../testing/until';
import { startWirePeer, type WirePeer } from '../testing/wire-peer';

const open: TestInstallation[] = [];
const processes: WirePeer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) await p.kill();
  for (const t of open.splice(0)) await t.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function peer(name: string) {
  const t = await openPeer(name);
  open.push(t);
  return t;
}

const RELAYED_ASK = 'ask bob/researcher: ask carol/researcher: sleep 60';

/** alice (assistant) → bob (researcher) → carol (researcher), every agent scripted; `before` runs before alice asks. */
async function chain(
  before?: (bc: { bob: TestInstallation; carol: TestInstallation; carolBob: number }) => Promise<void>,
) {
  const alice = await peer('alice');
  const bob = await peer('bob');
  const carol = await peer('carol');
  const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
  for (const t of [bob, carol]) await t.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
  const ab = await pair(bob, alice, { inviter: ['researcher'] });
  const bc = await pair(carol, bob, { inviter: ['researcher'] });
  const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
  await before?.({ bob, carol, carolBob: bc.inviterConnectionId });
  await alice.owner('conversations.send', { id: conversation.id, text: RELAYED_ASK });
  const aliceThread = (check: (t: ThreadSummary) => boolean, what: string) =>
    alice.waitFor(
      async () =>
        (await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } })).find(check),
      `alice’s ask: ${what}`,
      30_000,
    );
  return { alice, bob, carol, aliceThread, bobCarol: bc.acceptorConnectionId, carolBob: bc.inviterConnectionId, ab };
}

/** bob waits on carol: alice's ask says so, and carol's agent has the question. */
async function relayed(c: Awaited<ReturnType<typeof chain>>) {
  const waiting = await c.aliceThread((t) => t.peerTurn?.state === 'relayed', 'bob is waiting on carol');
  expect(waiting.peerTurn).toMatchObject({ state: 'relayed', seq: 1, waitingOn: ['carol/researcher'] });
  const carolWorking = await c.carol.waitFor(
    async () => (await c.carol.owner('threads.list', { peerStarted: true })).find((t) => t.run.state === 'running'),
    'carol’s agent to work',
    30_000,
  );
  return { waiting, carolWorking };
}

/** alice's ask is answered by bob's agent, told that carol's ended unanswered; nothing runs anywhere then. */
async function answeredAfterTheRelayEnded(
  c: Awaited<ReturnType<typeof chain>>,
  how: RegExp,
  /** Where no agent may still run: carol's may, when bob's pause is all that ended the ask. */
  idle = [c.alice, c.bob, c.carol],
) {
  const answered = await c.aliceThread((t) => t.counts.received + t.counts.handled > 0, 'answered');
  const [answer] = (await c.alice.owner('threads.get', { id: answered.id })).texts.filter((t) => t.direction === 'in');
  expect(answer!.body).toMatch(/Your question to carol\/researcher .*ended without an answer/);
  expect(answer!.body).toMatch(how);
  for (const t of idle)
    await t.waitFor(
      async () => {
        const threads = [
          ...(await t.owner('threads.list', { peerStarted: true })),
          ...(await t.owner('threads.list', { orphaned: true })),
        ];
        return threads.every((thread) => thread.run.state !== 'running');
      },
      'no agent running',
      30_000,
    );
  return answer!;
}

describe('the relay end: alice → bob → carol', { timeout: 120_000 }, () => {
  it('carol’s person stops her agent: bob’s ask says stopped, and alice gets bob’s answer', async () => {
    const c = await chain();
    const { carolWorking } = await relayed(c);
    await c.carol.owner('threads.stop', { id: carolWorking.id });
    await answeredAfterTheRelayEnded(c, /someone at carol stopped the agent/);
    // bob's own ask to carol ended there too.
    const [fromAlice] = await c.bob.owner('threads.list', { peerStarted: true });
    const bobAsk = (await c.bob.owner('threads.list', { root: { kind: 'thread', id: fromAlice!.id } })).find(
      (t) => t.startedBy === 'local',
    );
    expect(bobAsk?.connection.name).toBe('carol');
    expect(bobAsk?.peerTurn?.state).toBe('stopped');
  });

  it('bob pauses bob↔carol, so carol’s answer could not come: alice gets bob’s answer', async () => {
    const c = await chain();
    await relayed(c);
    await c.bob.owner('connections.pause', { id: c.bobCarol });
    // carol's agent still works (she cannot know of the pause): its answer will be refused.
    await answeredAfterTheRelayEnded(c, /paused the connection to carol, so no answer can come/, [c.alice, c.bob]);
  });

  it('carol paused first and told bob: bob’s relay is refused at home, and alice gets bob’s answer', async () => {
    const c = await chain(async ({ bob, carol, carolBob }) => {
      await carol.owner('connections.pause', { id: carolBob });
      // carol's `status` reaches bob before alice asks: his agent's send to carol is refused at once.
      await bob.waitFor(
        async () => (await bob.owner('connections.list', {})).find((x) => x.name === 'carol')?.peerPausedAt,
        'bob to hear of carol’s pause',
      );
    });
    const answered = await c.aliceThread((t) => t.counts.received + t.counts.handled > 0, 'answered');
    const [answer] = (await c.alice.owner('threads.get', { id: answered.id })).texts.filter(
      (t) => t.direction === 'in',
    );
    expect(answer!.body).toMatch(/carol has paused the connection/);
    expect(await c.carol.owner('threads.list', { peerStarted: true })).toEqual([]);
  });
});

/**
 * bob's researcher as a small program: asked in an agent conversation a peer started, it
 * relays the text to carol; told something there (a notice), it answers with it; given
 * carol's answer in its own agent conversation with her, it fails.
 */
const RELAY_THEN_FAIL = `
const { execFileSync } = require('node:child_process');
let data = '';
process.stdin.on('data', (c) => (data += c)).on('end', () => {
  const turn = JSON.parse(data);
  if (!(turn.context.kind === 'thread' && turn.context.peerStarted)) process.exit(3);
  const text = turn.inputs.find((i) => i.kind === 'text');
  if (text) {
    execFileSync('parley', ['send', '--to', 'carol/researcher', text.body]);
    process.stdout.write('asked carol');
  } else process.stdout.write(turn.inputs.map((i) => i.body).join('\\n'));
});`;

describe('the relay end when the answer cannot be passed on', { timeout: 120_000 }, () => {
  it('carol answers, and bob’s agent fails on her answer: alice gets bob’s answer all the same', async () => {
    const alice = await peer('alice');
    const bob = await peer('bob');
    const carol = await peer('carol');
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await bob.owner('roles.create', {
      name: 'researcher',
      agent: { adapter: 'command', command: [process.execPath, '-e', RELAY_THEN_FAIL], input: 'json' },
    });
    await carol.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    await pair(bob, alice, { inviter: ['researcher'] });
    await pair(carol, bob, { inviter: ['researcher'] });
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: numbers?' });
    const answered = await alice.waitFor(
      async () =>
        (await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } })).find(
          (t) => t.counts.received + t.counts.handled > 0,
        ),
      'alice’s ask answered',
      60_000,
    );
    const [answer] = (await alice.owner('threads.get', { id: answered.id })).texts.filter((t) => t.direction === 'in');
    expect(answer!.body).toMatch(/carol\/researcher answered your question, but the turn that took it failed here/);
  });
});

describe('the relay end when the last hop crashes', () => {
  it('carol is killed -9 twice while her agent has bob’s question: bob hears it ended, and alice gets bob’s answer', async () => {
    const carolDir = mkdtempSync(path.join(os.tmpdir(), 'parley-relayend-carol-'));
    dirs.push(carolDir);
    const start = async () => {
      const p = await startWirePeer({ dataDir: carolDir, name: 'carol', args: ['--start-turns'] });
      processes.push(p);
      return p;
    };
    const kill = async (p: WirePeer) => {
      await p.kill();
      processes.splice(processes.indexOf(p), 1);
    };
    let carol = await start();
    const call = <T>(method: string, params: object = {}) =>
      carol.request<{ result: T }>('call', { method, params }).then((r) => r.result);
    await call('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    const alice = await peer('alice');
    const bob = await peer('bob');
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    await pair(bob, alice, { inviter: ['researcher'] });
    const { code } = await call<{ code: string }>('connections.invite', { roles: ['researcher'] });
    await bob.owner('connections.accept', { code, roles: [] });
    await bob.waitFor(
      async () => (await bob.owner('connections.list', {})).find((c) => c.name === 'carol')?.peerRoles.length === 1,
      'carol’s roles at bob',
      30_000,
    );
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: conversation.id, text: RELAYED_ASK });
    const aliceThread = (check: (t: ThreadSummary) => boolean, what: string) =>
      alice.waitFor(
        async () =>
          (await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } })).find(check),
        `alice’s ask: ${what}`,
        60_000,
      );
    await aliceThread((t) => t.peerTurn?.state === 'relayed', 'bob is waiting on carol');
    const carolTurn = (check: (status: string | undefined, attempt: number | undefined) => boolean, what: string) =>
      until(
        async () => {
          const [thread] = await call<ThreadSummary[]>('threads.list', { peerStarted: true });
          if (!thread) return undefined;
          const { turns } = await call<{ turns: Array<{ status: string; attempt: number }> }>('threads.get', {
            id: thread.id,
          });
          return check(turns.at(-1)?.status, turns.at(-1)?.attempt) ? turns : undefined;
        },
        what,
        60_000,
      );
    await carolTurn((status) => status === 'running', 'carol’s agent to work');
    await kill(carol);
    carol = await start();
    await carolTurn((status, attempt) => status === 'running' && attempt === 1, 'the re-run at carol');
    await kill(carol);
    carol = await start();
    await carolTurn((status) => status === 'interrupted', 'the turn dropped at carol');

    const answered = await aliceThread((t) => t.counts.received + t.counts.handled > 0, 'answered');
    const [answer] = (await alice.owner('threads.get', { id: answered.id })).texts.filter((t) => t.direction === 'in');
    expect(answer!.body).toMatch(
      /Your question to carol\/researcher .*ended without an answer: carol's agent finished/,
    );
    const [fromAlice] = await bob.owner('threads.list', { peerStarted: true });
    await bob.waitFor(
      async () => (await bob.owner('threads.get', { id: fromAlice!.id })).thread.run.state !== 'running',
      'bob’s agent to be done',
    );
  }, 180_000);
});
