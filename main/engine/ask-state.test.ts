// What the asking side knows about its ask (issue 15, "the ask's state in the chat"):
// the peer's installation says when a turn takes the text (working) and when that turn
// is over without an answer (stopped there, failed, ended) — per thread, to the peer
// that started the thread, never more than the state. Which side paused is kept on a
// text that a pause failed, and a deleted root's title stays with its agent
// conversations. Real installations over mutual TLS; where the test must be an older
// peer or say something a real one would not, the peer is driven by hand.
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { AppEvent } from '../../shared/api-contract';
import type { ThreadSummary, TextView, TurnSummary } from '../../shared/domain';
import { getRoleByName } from '../store/queries/roles';
import { ensureRun } from '../store/queries/runs';
import { getThread, threadByWireId } from '../store/queries/threads';
import { makeDataDir, removeDataDir } from '../../test-support/data-folder';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import { newThreadId, RawPeer, standInIdentity } from '../../test-support/raw-peer';
import { until } from '../../test-support/until';
import { startWirePeer, type WirePeer } from '../../test-support/wire-peer';
import { CloseCode, type Frame } from './wire';

const open: TestInstallation[] = [];
const raws: RawPeer[] = [];
const dirs: string[] = [];
const processes: WirePeer[] = [];
afterEach(async () => {
  for (const raw of raws.splice(0)) raw.close();
  for (const p of processes.splice(0)) await p.kill();
  for (const t of open.splice(0)) await t.close();
  for (const dir of dirs.splice(0)) removeDataDir(dir);
});

async function peer(name: string, dataDir?: string) {
  const t = await openPeer(name, dataDir ? { dataDir } : {});
  open.push(t);
  return t;
}

async function close(t: TestInstallation) {
  open.splice(open.indexOf(t), 1);
  await t.close();
}

/**
 * alice (scripted `assistant`) asks bob, who has a scripted `researcher`, a `failing`
 * agent (exits 3) and a `silent` one (says nothing). bob invites, alice accepts: alice
 * dials bob.
 */
async function aliceAndBob(aliceDir?: string) {
  const alice = await peer('alice', aliceDir);
  const bob = await peer('bob');
  const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
  await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
  await bob.owner('roles.create', {
    name: 'failing',
    agent: { adapter: 'command', command: [process.execPath, '-e', 'process.exit(3)'] },
  });
  await bob.owner('roles.create', {
    name: 'silent',
    agent: { adapter: 'command', command: [process.execPath, '-e', '0'] },
  });
  const ids = await pair(bob, alice, { inviter: ['researcher', 'failing', 'silent'], acceptor: [] });
  const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
  const ask = (text: string) => alice.owner('conversations.send', { id: conversation.id, text });
  /** alice's agent conversation with bob/ROLE, once `check` holds for it. */
  const aliceThread = (peerRole: string, check: (t: ThreadSummary) => boolean, what: string) =>
    alice.waitFor(
      async () =>
        (await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } })).find(
          (t) => t.peerRole === peerRole && check(t),
        ),
      `alice’s agent conversation with bob/${peerRole}: ${what}`,
      30_000,
    );
  const bobWorking = () =>
    bob.waitFor(
      async () => (await bob.owner('threads.list', { peerStarted: true })).find((t) => t.run.state === 'running'),
      'bob’s agent to work',
      30_000,
    );
  return { alice, bob, conversation, ask, aliceThread, bobWorking, ...ids };
}

const texts = async (t: TestInstallation, id: number, direction: 'in' | 'out'): Promise<TextView[]> =>
  (await t.owner('threads.get', { id })).texts.filter((text) => text.direction === direction);

/** The events for agent conversation `id` that reach `t`'s owner's session. */
function threadEvents(t: TestInstallation, id: number): AppEvent[] {
  const seen: AppEvent[] = [];
  const off = t.installation.events.subscribe({ person: t.installation.owner() }, (event) => {
    if (event.type === 'changed' && event.kind === 'thread' && event.id === id) seen.push(event);
  });
  onTestFinished(off);
  return seen;
}

// Real agents on two installations: room for a loaded machine.
describe('the ask’s state, as the asking side learns it', { timeout: 90_000 }, () => {
  it('working: bob’s turn takes alice’s text, before its answer; a second ask in the thread is working on its own seq', async () => {
    const { alice, ask, aliceThread } = await aliceAndBob();
    await ask('ask bob/researcher: sleep 2');
    const working = await aliceThread('researcher', (t) => t.peerTurn?.state === 'working', 'working');
    expect(working.peerTurn).toMatchObject({ state: 'working', seq: 1 });
    const answered = await aliceThread('researcher', (t) => t.counts.handled + t.counts.received > 0, 'answered');
    const [answer] = await texts(alice, answered.id, 'in');
    expect(answer!.body).toBe('answer from researcher: slept 2');
    // alice learnt that bob's agent had it before the answer came.
    expect(working.peerTurn!.at <= answer!.createdAt).toBe(true);
    // An answer needs no word of its own: the state stays what it was.
    expect(answered.peerTurn).toMatchObject({ state: 'working', seq: 1 });

    await ask('ask bob/researcher: again');
    const again = await aliceThread('researcher', (t) => t.peerTurn?.seq === 2, 'working on text 2');
    expect(again.peerTurn?.state).toBe('working');
    expect(again.id).toBe(answered.id);
  });

  it('stopped by the peer: a person at bob stops the turn that took the text', async () => {
    const { alice, bob, ask, aliceThread, bobWorking } = await aliceAndBob();
    await ask('ask bob/researcher: sleep 60');
    const asked = await aliceThread('researcher', (t) => t.peerTurn?.state === 'working', 'working');
    const working = await bobWorking();
    // From here only the stop happens: an event for the thread at alice is the turn frame's.
    const events = threadEvents(alice, asked.id);
    await bob.owner('threads.stop', { id: working.id });
    const stopped = await aliceThread('researcher', (t) => t.peerTurn?.state === 'stopped', 'stopped');
    expect(stopped.peerTurn).toMatchObject({ state: 'stopped', seq: 1 });
    expect(events.length).toBeGreaterThan(0);
    // Still delivered, never answered: what bob's person did is all alice learns.
    expect(stopped.lastText).toMatchObject({ direction: 'out', state: 'acked' });
  });

  it('stopped by the peer’s pause: pausing stops the agent that had the text, and that is said too', async () => {
    const { bob, ask, aliceThread, inviterConnectionId } = await aliceAndBob();
    await ask('ask bob/researcher: sleep 60');
    await aliceThread('researcher', (t) => t.peerTurn?.state === 'working', 'working');
    await bob.owner('connections.pause', { id: inviterConnectionId });
    const stopped = await aliceThread('researcher', (t) => t.peerTurn?.state === 'stopped', 'stopped');
    expect(stopped.peerTurn?.seq).toBe(1);
  });

  it('failed, or ended without an answer: the turn that took it is over and nothing will come', async () => {
    const { ask, aliceThread } = await aliceAndBob();
    await ask('ask bob/failing: will you?');
    expect((await aliceThread('failing', (t) => t.peerTurn?.state === 'failed', 'failed')).peerTurn?.seq).toBe(1);
    await ask('ask bob/silent: anything?');
    expect((await aliceThread('silent', (t) => t.peerTurn?.state === 'ended', 'ended')).peerTurn?.seq).toBe(1);
  });

  it('offline: what bob could not tell while alice was away reaches her when the link is back', async () => {
    const aliceDir = makeDataDir('parley-askstate-alice-');
    dirs.push(aliceDir);
    const first = await aliceAndBob(aliceDir);
    const { bob } = first;
    await first.ask('ask bob/researcher: sleep 60');
    const thread = await first.aliceThread('researcher', (t) => t.peerTurn?.state === 'working', 'working');
    const working = await first.bobWorking();
    await close(first.alice);
    await bob.waitFor(
      async () => !(await bob.owner('connections.list', {})).find((c) => c.id === first.inviterConnectionId)?.online,
      'alice offline at bob',
    );
    await bob.owner('threads.stop', { id: working.id });
    const alice = await peer('alice', aliceDir);
    const stopped = await alice.waitFor(
      async () => {
        const t = (await alice.owner('threads.get', { id: thread.id })).thread;
        return t.peerTurn?.state === 'stopped' ? t : undefined;
      },
      'the stop to reach alice',
      30_000,
    );
    expect(stopped.peerTurn?.seq).toBe(1);
  });
});

describe('a turn cut off by crashes', () => {
  it('bob is killed -9 twice while his agent has the text: it is not run a third time, and alice hears it ended', async () => {
    const bobDir = makeDataDir('parley-askstate-bob-');
    dirs.push(bobDir);
    const start = async () => {
      const p = await startWirePeer({ dataDir: bobDir, name: 'bob', args: ['--start-turns'] });
      processes.push(p);
      return p;
    };
    const kill = async (p: WirePeer) => {
      await p.kill();
      processes.splice(processes.indexOf(p), 1);
    };
    let bob = await start();
    const call = <T>(method: string, params: object = {}) =>
      bob.request<{ result: T }>('call', { method, params }).then((r) => r.result);
    await call('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    const { code } = await call<{ code: string }>('connections.invite', { roles: ['researcher'] });
    const alice = await peer('alice');
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await alice.owner('connections.accept', { code, roles: [] });
    await alice.waitFor(
      async () => (await alice.owner('connections.list', {}))[0]?.peerRoles.length === 1,
      'bob’s roles',
    );
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: sleep 120' });
    const aliceThread = (check: (t: ThreadSummary) => boolean, what: string) =>
      alice.waitFor(
        async () =>
          (await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } })).find(check),
        what,
        60_000,
      );
    const first = await aliceThread((t) => t.peerTurn?.state === 'working', 'working');
    /** bob's turns in the agent conversation alice started, once `check` holds. */
    const bobTurns = (check: (turns: TurnSummary[]) => boolean, what: string) =>
      until(
        async () => {
          const [thread] = await call<ThreadSummary[]>('threads.list', { peerStarted: true });
          if (!thread) return undefined;
          const { turns } = await call<{ turns: TurnSummary[] }>('threads.get', { id: thread.id });
          return check(turns) ? turns : undefined;
        },
        what,
        60_000,
      );
    await bobTurns((turns) => turns.at(-1)?.status === 'running', 'bob’s agent to work');

    // Killed once: the turn runs again, told so; alice hears `working` again once bob is back.
    await kill(bob);
    bob = await start();
    await bobTurns((turns) => turns.at(-1)?.status === 'running' && turns.at(-1)?.attempt === 1, 'the re-run');
    await aliceThread((t) => t.peerTurn?.state === 'working' && t.peerTurn.at > first.peerTurn!.at, 'working again');
    // Killed again: dropped, and nothing will answer alice.
    await kill(bob);
    bob = await start();
    await bobTurns((turns) => turns.at(-1)?.status === 'interrupted' && turns.length === 2, 'the turn dropped');
    const ended = await aliceThread((t) => t.peerTurn?.state === 'ended', 'ended');
    expect(ended.peerTurn?.seq).toBe(1);
    expect(ended.counts.handled + ended.counts.received).toBe(0);
  }, 180_000);
});

describe('which side paused', { timeout: 90_000 }, () => {
  it('bob’s pause is told, so alice’s agent is refused at home; a text a pause here failed says here', async () => {
    const { alice, bob, ask, aliceThread, conversation, inviterConnectionId, acceptorConnectionId } =
      await aliceAndBob();
    await ask('ask bob/researcher: hello');
    const refused = await aliceThread('researcher', (t) => t.counts.acked === 1, 'delivered');
    await bob.owner('connections.pause', { id: inviterConnectionId });
    await alice.waitFor(async () => (await alice.owner('connections.list', {}))[0]?.peerPausedAt, 'bob’s pause told');
    await ask('ask bob/researcher: are you there?');
    // Refused before anything went out: the agent is told, and no text of it is anywhere.
    await alice.waitFor(async () => {
      const { messages } = await alice.owner('conversations.get', { id: conversation.id });
      return messages.some((m) => m.body.startsWith('error: bob has paused the connection'));
    }, 'the refusal');
    await bob.owner('connections.unpause', { id: inviterConnectionId });
    await alice.waitFor(
      async () => (await alice.owner('connections.list', {}))[0]?.peerPausedAt === null,
      'bob’s unpause told',
    );

    // bob away: alice's next text waits, and alice pauses.
    await close(bob);
    await alice.waitFor(
      async () => !(await alice.owner('connections.list', {}))[0]?.online,
      'bob offline at alice',
      30_000,
    );
    await ask('ask bob/researcher: still there?');
    await aliceThread('researcher', (t) => t.counts.queued === 1, 'queued');
    await alice.owner('connections.pause', { id: acceptorConnectionId });
    expect((await texts(alice, refused.id, 'out')).map((t) => [t.body, t.state, t.reason, t.failedBy])).toEqual([
      ['hello', 'acked', null, null],
      ['still there?', 'failed', 'paused', 'us'],
    ]);
  });
});

describe('a deleted root keeps its title for its agent conversations', { timeout: 90_000 }, () => {
  it('a conversation and a task, with its subtask: the orphaned agent conversations say what each was', async () => {
    const { alice, ask, aliceThread, conversation } = await aliceAndBob();
    await ask('ask bob/researcher: hello');
    await aliceThread('researcher', (t) => t.counts.acked === 1, 'delivered');
    const role = getRoleByName(alice.installation.db, 'assistant')!;
    const task = await alice.owner('tasks.create', { roleId: role.id, title: 'Plan the trip' });
    const subtask = await alice.owner('tasks.create', {
      roleId: role.id,
      title: 'Book the “train”',
      parentId: task.id,
    });
    for (const t of [task, subtask])
      await alice.owner('tasks.comment', { id: t.id, text: 'ask bob/researcher: when?' });
    for (const t of [task, subtask])
      await alice.waitFor(
        async () => (await alice.owner('threads.list', { root: { kind: 'task', id: t.id } })).length === 1,
        `the ask of “${t.title}”`,
        30_000,
      );
    // While the roots are there, the title is theirs to say, not stored.
    const before = await alice.owner('threads.list', { root: { kind: 'task', id: task.id } });
    expect(before.map((t) => t.root)).toEqual([{ kind: 'task', id: task.id, gone: false, title: null }]);
    await alice.owner('conversations.delete', { id: conversation.id });
    await alice.owner('tasks.delete', { id: task.id });
    const orphaned = await alice.owner('threads.list', { orphaned: true });
    const owner = alice.installation.owner().name;
    expect(orphaned.map((t) => [t.root.kind, t.root.gone, t.root.title]).sort()).toEqual(
      [
        ['conversation', true, `${owner}’s conversation with assistant`],
        ['task', true, 'Book the “train”'],
        ['task', true, 'Plan the trip'],
      ].sort(),
    );
  });
});

describe('older peers, and states a peer has no business sending', { timeout: 90_000 }, () => {
  /** bob (scripted researcher, exposed) and a mallory we speak for, offering revisions up to `revision`. */
  async function bobWithHandDrivenMallory(revision: number | null) {
    const bob = await peer('bob');
    await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    const { code } = await bob.owner('connections.invite', { roles: ['researcher'] });
    const mallory = await standInIdentity('mallory', code, { roles: ['helper'], exposes: ['helper'] });
    const raw = await RawPeer.dial(
      mallory.identity,
      bob.installation.peerAddress!,
      bob.installation.id,
      { type: 'hello', protocol: 2, name: 'mallory', address: null },
      { revision },
    );
    raws.push(raw);
    await raw.next('hello');
    await raw.next('roles');
    return { bob, raw, mallory };
  }

  const text = (thread: string, seq: number, body: string) =>
    ({ type: 'text', thread, seq, from: 'helper', to: 'researcher', body }) as const;

  it('a peer from before revisions gets its acks and answers and never a frame it does not know', async () => {
    const { raw } = await bobWithHandDrivenMallory(null);
    const thread = newThreadId();
    raw.send(text(thread, 1, 'what is new?'));
    await raw.next('ack', (f) => f.thread === thread && f.seq === 1);
    const answer = await raw.next('text', (f) => f.thread === thread, 0, 30_000);
    expect(answer.body).toBe('answer from researcher: what is new?');
    raw.send({ type: 'ack', thread, seq: answer.seq });
    // Frames come in order: a `working` sent when the turn began would have come before the answer.
    expect(raw.frames.map((f) => f.type).filter((type) => !['hello', 'roles', 'ack', 'text'].includes(type))).toEqual(
      [],
    );
    // The link is up and still works.
    raw.send(text(thread, 2, 'thanks'));
    await raw.next('ack', (f) => f.thread === thread && f.seq === 2);
    expect(raw.closed).toBeNull();
  });

  it('a peer of this revision hears `working` before the answer; one that does nothing with it loses nothing', async () => {
    const { raw } = await bobWithHandDrivenMallory(1);
    const thread = newThreadId();
    raw.send(text(thread, 1, 'sleep 1'));
    const answer = await raw.next('text', (f) => f.thread === thread, 0, 30_000);
    const states = raw.frames.filter((f): f is Extract<Frame, { type: 'turn' }> => f.type === 'turn');
    expect(states).toEqual([{ type: 'turn', thread, seq: 1, state: 'working' }]);
    expect(raw.frames.indexOf(states[0]!)).toBeLessThan(raw.frames.indexOf(answer));
    // It answered nothing back to the turn frame, and the thread goes on as before.
    raw.send({ type: 'ack', thread, seq: answer.seq });
    raw.send(text(thread, 2, 'and now?'));
    expect((await raw.next('text', (f) => f.thread === thread && f.seq === 2, 0, 30_000)).body).toBe(
      'answer from researcher: and now?',
    );
    expect(raw.frames.filter((f) => f.type === 'turn').map((f) => (f as { seq: number }).seq)).toEqual([1, 2]);
  });

  it('bob takes a turn state only for a thread he started and a text he sent; a malformed one breaks the protocol', async () => {
    const { bob, raw } = await bobWithHandDrivenMallory(1);
    const db = bob.installation.db;
    const researcher = getRoleByName(db, 'researcher')!;
    const task = await bob.owner('tasks.create', { roleId: researcher.id, title: 'ask mallory' });
    const run = ensureRun(db, { kind: 'task', id: task.id }, researcher.id);
    const sent = await bob.installation.engine.sendAs(run, researcher, 'mallory/helper', 'numbers?');
    const frame = await raw.next('text', (f) => f.thread === sent.thread);
    raw.send({ type: 'ack', thread: sent.thread, seq: frame.seq });
    // A thread mallory started: bob works on it; mallory has nothing to tell him about it.
    const theirs = newThreadId();
    raw.send(text(theirs, 1, 'hello'));
    await raw.next('ack', (f) => f.thread === theirs);
    raw.sendTogether([
      { type: 'turn', thread: theirs, seq: 1, state: 'stopped' },
      { type: 'turn', thread: newThreadId(), seq: 1, state: 'working' },
      // bob sent one text there, not two.
      { type: 'turn', thread: sent.thread, seq: 2, state: 'working' },
    ]);
    await raw.roundTrip();
    const summary = (threadRowId: number) => bob.installation.engine.threadSummary(getThread(db, threadRowId)!);
    expect(summary(sent.threadRowId).peerTurn).toBeNull();
    const connectionId = getThread(db, sent.threadRowId)!.connection_id;
    expect(summary(threadByWireId(db, connectionId, theirs)!.id).peerTurn).toBeNull();

    raw.send({ type: 'turn', thread: sent.thread, seq: 1, state: 'working' });
    await bob.waitFor(() => summary(sent.threadRowId).peerTurn?.state === 'working', 'bob to store the state');
    expect(summary(sent.threadRowId).peerTurn?.seq).toBe(1);

    raw.send({ type: 'turn', thread: sent.thread, seq: 1, state: 'asleep' });
    expect(await raw.closedWith()).toMatchObject({ code: CloseCode.protocolError });
    expect(summary(sent.threadRowId).peerTurn?.state).toBe('working');
  });
});
