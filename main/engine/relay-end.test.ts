// The relay end (DESIGN §12.5), across three real installations: alice asks bob, whose
// agent relays the question to carol. Whatever happens on the second hop — carol's
// person stops her agent, bob pauses bob↔carol, carol refuses the text, carol is killed
// -9 twice while her agent works — alice's ask reaches an end with no agent running
// anywhere: bob's ask line first says he waits on carol (`relayed`), then bob's agent is
// told that its ask ended unanswered and its turn's output goes back to alice.
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { ThreadSummary } from '../../shared/domain';
import { makeDataDir, removeDataDir } from '../../test-support/data-folder';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import { until } from '../../test-support/until';
import { startWirePeer, type WirePeer } from '../../test-support/wire-peer';

const open: TestInstallation[] = [];
const processes: WirePeer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) await p.kill();
  for (const t of open.splice(0)) await t.close();
  for (const dir of dirs.splice(0)) removeDataDir(dir);
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

/** Agent processes of the installation on `dataDir` still alive: those whose role API lives there. */
function agentProcessesOf(dataDir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (environ.some((v) => v.startsWith('PARLEY_API=') && v.slice('PARLEY_API='.length).startsWith(dataDir)))
        pids.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return pids;
}

describe('the relay end when bob’s person stops the middle hop', { timeout: 120_000 }, () => {
  it('bob’s agent waits on carol; bob’s person stops it: alice hears stopped, carol’s agent stops, no answer follows', async () => {
    const c = await chain();
    const { carolWorking } = await relayed(c);
    const [fromAlice] = await c.bob.owner('threads.list', { peerStarted: true });
    await c.bob.owner('threads.stop', { id: fromAlice!.id });
    const stopped = await c.aliceThread((t) => t.peerTurn?.state === 'stopped', 'bob’s stop');
    expect(stopped.peerTurn).toMatchObject({ state: 'stopped', seq: 1 });
    // carol's agent works for nothing no more: bob's ask to her is withdrawn by bob's person.
    const atCarol = await c.carol.waitFor(async () => {
      const detail = await c.carol.owner('threads.get', { id: carolWorking.id });
      return detail.thread.run.state === 'idle' && detail.turns.at(-1)?.status === 'stopped' ? detail : undefined;
    }, 'carol’s agent to stop');
    expect(atCarol.turns.at(-1)?.reason).toBe('Withdrawn by bob');
    for (const t of [c.alice, c.bob, c.carol])
      await t.waitFor(
        async () => (await t.owner('threads.list', { peerStarted: true })).every((x) => x.run.state !== 'running'),
        'no agent running',
      );
    // carol's stop comes back to bob, and wakes nothing there: alice gets no answer.
    const toCarol = (await c.bob.owner('threads.list', { root: { kind: 'thread', id: fromAlice!.id } })).find(
      (t) => t.startedBy === 'local',
    )!;
    await c.bob.waitFor(
      async () => (await c.bob.owner('threads.get', { id: toCarol.id })).thread.withdrawn?.told,
      'carol to note bob’s withdrawal',
    );
    const { turns } = await c.bob.owner('threads.get', { id: fromAlice!.id });
    expect(turns.map((t) => t.status)).toEqual(['done']);
    expect((await c.alice.owner('threads.get', { id: stopped.id })).texts.map((t) => t.direction)).toEqual(['out']);
  });
});

/** bob's researcher as a small program: it passes the question on to carol and keeps its turn going. */
const RELAY_AND_WAIT = `
const { execFileSync } = require('node:child_process');
let data = '';
process.stdin.on('data', (c) => (data += c)).on('end', () => {
  const text = JSON.parse(data).inputs.find((i) => i.kind === 'text');
  if (text) execFileSync('parley', ['send', '--to', 'carol/researcher', text.body]);
  setInterval(() => {}, 1000);
});`;

const middleCrashes = [
  {
    when: 'while his agent relays (its turn still running)',
    agent: { adapter: 'command' as const, command: [process.execPath, '-e', RELAY_AND_WAIT], input: 'json' as const },
    ask: 'ask bob/researcher: sleep 60',
    midTurn: true,
  },
  {
    when: 'while the ask is relayed (his turn over, waiting on carol)',
    agent: { adapter: 'scripted' as const },
    ask: 'ask bob/researcher: ask carol/researcher: sleep 60',
    midTurn: false,
  },
];

describe('the relay end when the middle installation crashes', () => {
  it.each(middleCrashes)(
    'bob is killed -9 $when; after his restart his person stops it: alice hears stopped, nothing runs anywhere',
    async ({ agent, ask, midTurn }) => {
      const bobDir = makeDataDir('parley-relayend-bob-');
      dirs.push(bobDir);
      const start = async () => {
        const p = await startWirePeer({ dataDir: bobDir, name: 'bob', args: ['--start-turns'] });
        processes.push(p);
        return p;
      };
      let bob = await start();
      const call = <T>(method: string, params: object = {}) =>
        bob.request<{ result: T }>('call', { method, params }).then((r) => r.result);
      await call('roles.create', { name: 'researcher', agent });
      const alice = await peer('alice');
      const carol = await peer('carol');
      const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
      await carol.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
      const { code } = await bob.request<{ code: string }>('invite', { roles: ['researcher'] });
      await alice.owner('connections.accept', { code, roles: [] });
      await alice.waitFor(
        async () => (await alice.owner('connections.list', {}))[0]?.peerRoles.length === 1,
        'bob’s roles at alice',
      );
      const invitation = await carol.owner('connections.invite', { roles: ['researcher'] });
      await bob.request('accept', { code: invitation.code, roles: [] });
      const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
      await alice.owner('conversations.send', { id: conversation.id, text: ask });
      const carolWorking = await carol.waitFor(
        async () => (await carol.owner('threads.list', { peerStarted: true })).find((t) => t.run.state === 'running'),
        'carol’s agent to work on what bob relayed',
        30_000,
      );
      const mine = await alice.waitFor(
        async () =>
          (await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } })).find(
            (t) => t.peerTurn?.state === (midTurn ? 'working' : 'relayed'),
          ),
        'bob’s word on his turn',
        30_000,
      );

      // bob dies; an agent mid-turn outlives him.
      await bob.kill();
      processes.splice(processes.indexOf(bob), 1);
      const orphans = agentProcessesOf(bobDir);
      expect(orphans.length > 0).toBe(midTurn);
      bob = await start();
      // The restarted bob ends what his crash left running, and runs a cut-off turn once more.
      const [fromAlice] = await until(
        async () => {
          const threads = await call<ThreadSummary[]>('threads.list', { peerStarted: true });
          return threads[0] && (!midTurn || threads[0].run.state === 'running') ? threads : undefined;
        },
        'bob’s agent conversation with alice after his restart',
        30_000,
      );
      await until(() => orphans.every((pid) => !agentProcessesOf(bobDir).includes(pid)), 'the crash’s leftovers gone');
      await alice.waitFor(async () => (await alice.owner('connections.list', {}))[0]?.online, 'bob back online');

      // bob's person stops it: alice's ask ends stopped, carol's agent stops, no agent runs anywhere.
      await call('threads.stop', { id: fromAlice!.id });
      const stopped = await alice.waitFor(
        async () => {
          const { thread } = await alice.owner('threads.get', { id: mine.id });
          return thread.peerTurn?.state === 'stopped' ? thread : undefined;
        },
        'bob’s stop at alice',
        30_000,
      );
      expect(stopped.peerTurn?.seq).toBe(1);
      const atCarol = await carol.waitFor(async () => {
        const detail = await carol.owner('threads.get', { id: carolWorking.id });
        return detail.thread.run.state === 'idle' && detail.turns.at(-1)?.status === 'stopped' ? detail : undefined;
      }, 'carol’s agent to stop');
      expect(atCarol.thread.withdrawn).toMatchObject({ by: 'bob' });
      await until(() => agentProcessesOf(bobDir).length === 0, 'no agent process of bob’s left');
      for (const t of [alice, carol])
        await t.waitFor(
          async () => (await t.owner('threads.list', { peerStarted: true })).every((x) => x.run.state !== 'running'),
          'no agent running',
        );
    },
    180_000,
  );
});

describe('the relay end when the second hop declines', { timeout: 120_000 }, () => {
  it('carol’s person declines what bob relayed: bob’s ask fails as declined, and alice gets bob’s answer', async () => {
    const c = await chain(async ({ carol, carolBob }) => {
      await carol.owner('connections.setPolicy', { id: carolBob, incoming: 'ask' });
    });
    // bob's turn ends waiting on carol, whose person has bob's text to decide on.
    await c.aliceThread((t) => t.peerTurn?.state === 'relayed', 'bob is waiting on carol');
    const approval = await c.carol.waitFor(async () => (await c.carol.owner('approvals.list', {}))[0], 'the held text');
    await c.carol.owner('approvals.decide', { id: approval.id, approve: false });
    await answeredAfterTheRelayEnded(c, /carol refused it \(declined\)/);
    const [fromAlice] = await c.bob.owner('threads.list', { peerStarted: true });
    const bobAsk = (await c.bob.owner('threads.list', { root: { kind: 'thread', id: fromAlice!.id } })).find(
      (t) => t.startedBy === 'local',
    );
    const { texts } = await c.bob.owner('threads.get', { id: bobAsk!.id });
    expect(texts.map((t) => [t.direction, t.state, t.reason, t.failedBy])).toEqual([
      ['out', 'failed', 'declined', 'peer'],
    ]);
    // carol's agent never saw it.
    expect((await c.carol.owner('threads.list', { peerStarted: true })).map((t) => t.run.lastTurn)).toEqual([null]);
  });
});

describe('the relay end for an asker of revision 1', () => {
  it('alice speaks revision 1: she never hears `relayed`, and still gets bob’s answer when carol’s person stops', async () => {
    const aliceDir = makeDataDir('parley-relayend-alice-');
    dirs.push(aliceDir);
    const alice = await startWirePeer({
      dataDir: aliceDir,
      name: 'alice',
      args: ['--start-turns', '--revision', '1'],
    });
    processes.push(alice);
    const call = <T>(method: string, params: object = {}) =>
      alice.request<{ result: T }>('call', { method, params }).then((r) => r.result);
    const bob = await peer('bob');
    const carol = await peer('carol');
    for (const t of [bob, carol]) await t.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    await pair(carol, bob, { inviter: ['researcher'] });
    const assistant = await call<{ id: number }>('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const { code } = await bob.owner('connections.invite', { roles: ['researcher'] });
    await call('connections.accept', { code, roles: [] });
    await until(
      async () =>
        (await call<Array<{ name: string; peerRoles: unknown[] }>>('connections.list')).find((x) => x.name === 'bob')
          ?.peerRoles.length === 1,
      'bob’s roles at alice',
    );
    const conversation = await call<{ id: number }>('conversations.open', { roleId: assistant.id });
    await call('conversations.send', { id: conversation.id, text: RELAYED_ASK });
    const aliceThread = (check: (t: ThreadSummary) => boolean, what: string) =>
      until(
        async () =>
          (await call<ThreadSummary[]>('threads.list', { root: { kind: 'conversation', id: conversation.id } })).find(
            check,
          ),
        `alice’s ask: ${what}`,
        60_000,
      );
    const carolWorking = await carol.waitFor(
      async () => (await carol.owner('threads.list', { peerStarted: true })).find((t) => t.run.state === 'running'),
      'carol’s agent to work',
      30_000,
    );
    // bob's turn ended waiting on carol: a peer of revision 2 would hear `relayed`, alice keeps `working`.
    const [fromAlice] = await bob.owner('threads.list', { peerStarted: true });
    await bob.waitFor(
      async () => (await bob.owner('threads.get', { id: fromAlice!.id })).turns[0]?.status === 'done',
      'bob’s relaying turn to end',
    );
    // Nothing kept for her: a peer of revision 2 would have acknowledged `relayed` by then, and shown it.
    await bob.waitFor(
      () => bob.installation.db.prepare('SELECT count(*) FROM turn_signals').pluck().get() === 0,
      'nothing left for bob to tell alice',
    );
    expect((await aliceThread((t) => t.peerTurn !== null, 'bob’s word on his turn')).peerTurn?.state).toBe('working');

    await carol.owner('threads.stop', { id: carolWorking.id });
    const answered = await aliceThread((t) => t.counts.received + t.counts.handled > 0, 'answered');
    const { texts } = await call<{ texts: Array<{ direction: string; body: string }> }>('threads.get', {
      id: answered.id,
    });
    expect(texts.find((t) => t.direction === 'in')?.body).toMatch(
      /Your question to carol\/researcher .*ended without an answer: someone at carol stopped the agent/,
    );
  }, 120_000);
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
    const carolDir = makeDataDir('parley-relayend-carol-');
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
