// What waits on each person (DESIGN §11.10), with real installations paired over mutual
// TLS on loopback, real scripted agents and a real SQLite file: a peer's refusal shows
// to whoever reads the ask and to nobody else, a peer's pause or revoke to the owners,
// answers and news as unread marks that opening clears, and all of it survives a restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttentionItem, AttentionList } from '../../shared/attention';
import { ApiError, type AppEvent, type MethodName, type ParamsOf, type ResultOf } from '../../shared/api-contract';
import type { Person } from '../../shared/domain';
import { readFloor } from '../store/queries/attention';
import type { TestInstallation } from '../../test-support/installation';
import { openTestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';

type Caller = <M extends MethodName>(method: M, params: ParamsOf<M>) => Promise<ResultOf<M>>;

const scripted = { adapter: 'scripted' } as const;

/** Items of one kind about one object, as `kind:object` strings, for readable expectations. */
const keysOf = (list: AttentionList) => list.items.map((item) => item.key).sort();
const find = (list: AttentionList, kind: AttentionItem['kind'], objectId?: number) =>
  list.items.find((item) => item.kind === kind && (objectId === undefined || item.object.id === objectId));

async function refused(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => new Error('expected a refusal'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('attention across two installations', () => {
  let alice: TestInstallation;
  let bob: TestInstallation;
  let mia: { person: Person; call: Caller };
  let max: { person: Person; call: Caller };
  /** Alice's side of the connection to bob, and bob's. */
  let aliceToBob: number;
  let bobToAlice: number;

  beforeAll(async () => {
    [alice, bob] = await Promise.all([openPeer('alice'), openPeer('bob')]);
    await alice.owner('roles.create', { name: 'assistant', agent: scripted });
    await bob.owner('roles.create', { name: 'researcher', agent: scripted });
    await bob.owner('roles.create', { name: 'asker', agent: scripted });
    const paired = await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
    aliceToBob = paired.acceptorConnectionId;
    bobToAlice = paired.inviterConnectionId;
    const member = async (name: string) => {
      const { person } = await alice.owner('people.add', { name, kind: 'member' });
      return { person, call: alice.as(person) };
    };
    mia = await member('mia');
    max = await member('max');
  }, 120_000);

  afterAll(async () => {
    await alice?.close();
    await bob?.close();
  });

  const list = (call: Caller) => call('attention.list', {});
  const roleId = async () => (await alice.owner('roles.list', {})).find((r) => r.name === 'assistant')!.id;

  it('a role’s answer is news to its person alone, marks the conversation unread, and opening it clears that', async () => {
    const conversation = await mia.call('conversations.open', { roleId: await roleId() });
    await mia.call('conversations.send', { id: conversation.id, text: 'hello' });
    const answered = await alice.waitFor(async () => {
      const mine = await list(mia.call);
      return find(mine, 'answer', conversation.id) && mine;
    }, 'the answer in mia’s list');
    expect(find(answered, 'answer', conversation.id)).toMatchObject({
      section: 'answered',
      object: { kind: 'conversation', id: conversation.id },
      count: 1,
      role: 'assistant',
      title: 'assistant',
    });
    // The mark says which answer is the first unread: the page draws its New line above it.
    const { messages } = await mia.call('conversations.get', { id: conversation.id });
    expect(answered.marks).toContainEqual({
      object: { kind: 'conversation', id: conversation.id },
      count: 1,
      firstContent: messages.find((m) => m.author.kind === 'role')!.id,
      peerStarted: false,
    });
    // Her own message is not news to her; nobody else reads her conversation.
    for (const other of [alice.owner, max.call]) {
      const theirs = await list(other);
      expect(find(theirs, 'answer', conversation.id)).toBeUndefined();
      expect(theirs.marks.some((m) => m.object.kind === 'conversation' && m.object.id === conversation.id)).toBe(false);
      expect((await refused(other('attention.markRead', { kind: 'conversation', id: conversation.id }))).code).toBe(
        'not_found',
      );
    }

    await mia.call('attention.markRead', { kind: 'conversation', id: conversation.id });
    const after = await list(mia.call);
    expect(find(after, 'answer', conversation.id)).toBeUndefined();
    expect(after.marks.some((m) => m.object.id === conversation.id && m.object.kind === 'conversation')).toBe(false);

    // The next answer is news again.
    await mia.call('conversations.send', { id: conversation.id, text: 'again' });
    const again = await alice.waitFor(
      async () => find(await list(mia.call), 'answer', conversation.id),
      'the second answer',
    );
    expect(again.count).toBe(1);
    await mia.call('attention.markRead', { kind: 'conversation', id: conversation.id });
  });

  it('an answer that comes back is news of its root: it names the peer when no role reported it, and opening the root reads it', async () => {
    // Asks and then says nothing, neither when it asks nor when the answer comes back.
    const quiet = await alice.owner('roles.create', {
      name: 'quiet',
      agent: {
        adapter: 'command',
        input: 'json',
        command: [
          process.execPath,
          '-e',
          `let d='';process.stdin.on('data',c=>d+=c).on('end',()=>{const t=JSON.parse(d);if(t.context.kind==='conversation')for(const i of t.inputs)require('child_process').execFileSync('parley',['send','--to','bob/researcher',i.body]);});`,
        ],
      },
    });
    const conversation = await mia.call('conversations.open', { roleId: quiet.id });
    await mia.call('conversations.send', { id: conversation.id, text: 'what is the plan?' });
    const item = await alice.waitFor(async () => find(await list(mia.call), 'answer', conversation.id), 'the answer');
    expect(item).toMatchObject({ section: 'answered', peer: 'bob', peerRole: 'researcher', role: 'quiet', count: 1 });
    const [thread] = await mia.call('threads.list', { root: { kind: 'conversation', id: conversation.id } });
    // The agent conversation has no mark of its own: its answer is the conversation's news.
    const before = await list(mia.call);
    expect(before.marks.some((m) => m.object.kind === 'thread' && m.object.id === thread!.id)).toBe(false);
    expect(before.marks).toContainEqual({
      object: { kind: 'conversation', id: conversation.id },
      count: 1,
      peerStarted: false,
    });
    await mia.call('attention.markRead', { kind: 'conversation', id: conversation.id });
    const after = await list(mia.call);
    expect(find(after, 'answer', conversation.id)).toBeUndefined();
    expect(after.marks.some((m) => m.object.id === conversation.id && m.object.kind === 'conversation')).toBe(false);
  });

  it('bob pausing is told: it waits on the owners, and mia’s agent’s ask is refused at home, not left undelivered', async () => {
    const conversation = await mia.call('conversations.open', { roleId: await roleId() });
    await bob.owner('connections.pause', { id: bobToAlice });
    const owners = await alice.waitFor(async () => {
      const current = await list(alice.owner);
      return find(current, 'peer_paused') && current;
    }, 'the pause in the owner’s list');
    expect(find(owners, 'peer_paused')).toMatchObject({
      section: 'waiting',
      object: { kind: 'connection', id: aliceToBob },
      peer: 'bob',
    });
    await mia.call('conversations.send', { id: conversation.id, text: 'ask bob/researcher: are you there?' });
    // Her agent is told at once; nothing was written to go out, so nothing waits undelivered.
    const reply = await alice.waitFor(
      async () =>
        (await mia.call('conversations.get', { id: conversation.id })).messages.find((m) =>
          /bob has paused the connection/.test(m.body),
        ),
      'the refusal in mia’s conversation',
    );
    expect(reply.author.kind).toBe('role');
    const mine = await list(mia.call);
    expect(find(mine, 'not_delivered')).toBeUndefined();
    // The pause itself is for owners: mia and max do not hear of it.
    expect(find(mine, 'peer_paused')).toBeUndefined();
    const maxList = await list(max.call);
    expect(find(maxList, 'peer_paused')).toBeUndefined();
    expect((await refused(max.call('attention.markRead', { kind: 'connection', id: aliceToBob }))).code).toBe(
      'forbidden',
    );
    // The owner's item stays until they read it.
    await alice.owner('attention.markRead', { kind: 'connection', id: aliceToBob });
    expect(find(await list(alice.owner), 'peer_paused')).toBeUndefined();
    await bob.owner('connections.unpause', { id: bobToAlice });
    await alice.waitFor(
      async () => !(await alice.owner('connections.list', {})).find((c) => c.id === aliceToBob)?.peerPausedAt,
      'alice to hear bob unpaused',
    );
  });

  it('a question bob’s role asks is news under “Started by peers” for everyone, until each reads it', async () => {
    const asker = (await bob.owner('roles.list', {})).find((r) => r.name === 'asker')!;
    const conversation = await bob.owner('conversations.open', { roleId: asker.id });
    await bob.owner('conversations.send', { id: conversation.id, text: 'ask alice/assistant: what is new?' });
    const forMax = await alice.waitFor(async () => find(await list(max.call), 'peer_asked'), 'the question for max');
    expect(forMax).toMatchObject({
      section: 'done',
      object: { kind: 'thread' },
      peer: 'bob',
      peerRole: 'asker',
      role: 'assistant',
    });
    expect(forMax.root).toEqual({ kind: 'thread', id: forMax.object.id, gone: false });
    for (const call of [alice.owner, mia.call]) {
      const theirs = await list(call);
      expect(find(theirs, 'peer_asked', forMax.object.id)).toBeDefined();
      expect(theirs.marks).toContainEqual({ object: forMax.object, count: 1, peerStarted: true });
    }
    await max.call('attention.markRead', { kind: 'peerStarted' });
    expect(find(await list(max.call), 'peer_asked', forMax.object.id)).toBeUndefined();
    // Max's reading is his own.
    expect(find(await list(mia.call), 'peer_asked', forMax.object.id)).toBeDefined();
    await mia.call('attention.markRead', forMax.object);
    expect(find(await list(mia.call), 'peer_asked', forMax.object.id)).toBeUndefined();
    await alice.owner('attention.markRead', { kind: 'all' });
    expect((await list(alice.owner)).total).toBe(0);
  });

  it(
    'ben deleting the topic he asked in withdraws the question: alice’s agent stops, and no refused reply waits on anyone',
    { timeout: 90_000 },
    async () => {
      const asker = (await bob.owner('roles.list', {})).find((r) => r.name === 'asker')!;
      const { person: bobMember } = await bob.owner('people.add', { name: 'ben', kind: 'member' });
      const ben = bob.as(bobMember);
      const conversation = await ben('conversations.open', { roleId: asker.id });
      // Alice's assistant sleeps over the question; meanwhile ben deletes his conversation.
      await ben('conversations.send', { id: conversation.id, text: 'ask alice/assistant: sleep 4' });
      const working = await alice.waitFor(async () => {
        const threads = await max.call('threads.list', { peerStarted: true });
        return threads.find((t) => t.lastText?.body === 'sleep 4' && t.run.state === 'running');
      }, 'alice’s assistant to work on the question');
      await ben('conversations.delete', { id: conversation.id });
      const withdrawn = await alice.waitFor(async () => {
        const thread = (await max.call('threads.list', { peerStarted: true })).find((t) => t.id === working.id);
        return thread?.withdrawn && thread.run.state === 'idle' ? thread : undefined;
      }, 'the withdrawal to stop alice’s assistant');
      expect(withdrawn.run.lastTurn?.status).toBe('stopped');
      expect(find(await list(max.call), 'not_delivered', working.id)).toBeUndefined();
      expect(find(await list(mia.call), 'not_delivered', working.id)).toBeUndefined();
    },
  );

  it('a failed turn on a task waits on everyone who reads the task', async () => {
    const failing = await alice.owner('roles.create', {
      name: 'failing',
      agent: { adapter: 'command', command: [process.execPath, '-e', 'process.exit(3)'] },
    });
    const task = await mia.call('tasks.create', { roleId: failing.id, title: 'the report' });
    const item = await alice.waitFor(
      async () => find(await list(max.call), 'agent_failed', task.id),
      'the failure in max’s list',
    );
    expect(item).toMatchObject({ section: 'waiting', object: { kind: 'task', id: task.id }, title: 'the report' });
    expect(item.reason).toBeTruthy();
    // Mia made the task: the failure is news to her too; its notice is not counted twice.
    const hers = await list(mia.call);
    expect(find(hers, 'agent_failed', task.id)).toBeDefined();
    expect(hers.marks).toContainEqual({ object: { kind: 'task', id: task.id }, count: 1, peerStarted: false });
    await mia.call('attention.markRead', { kind: 'task', id: task.id });
    expect(find(await list(mia.call), 'agent_failed', task.id)).toBeUndefined();
    expect(find(await list(max.call), 'agent_failed', task.id)).toBeDefined();
  });

  it('bob revoking shows for alice’s owners only', async () => {
    // A connection of its own, so the others keep theirs.
    const carol = await openPeer('carol');
    try {
      const { acceptorConnectionId, inviterConnectionId } = await pair(carol, alice);
      await carol.owner('connections.revoke', { id: inviterConnectionId });
      const item = await alice.waitFor(
        async () => find(await list(alice.owner), 'peer_revoked', acceptorConnectionId),
        'the revoke in the owner’s list',
      );
      expect(item).toMatchObject({ section: 'waiting', peer: 'carol', object: { kind: 'connection' } });
      expect(find(await list(mia.call), 'peer_revoked')).toBeUndefined();
    } finally {
      await carol.close();
    }
  });
});

describe('who hears that their list may have changed', () => {
  it('exactly those who heard of the change, once for a burst, and the reader’s own pages after markRead', async () => {
    const t = await openTestInstallation();
    try {
      const role = await t.owner('roles.create', { name: 'assistant', agent: scripted });
      const { person: mia } = await t.owner('people.add', { name: 'mia', kind: 'member' });
      const { person: max } = await t.owner('people.add', { name: 'max', kind: 'member' });
      const heard = { owner: [] as AppEvent[], mia: [] as AppEvent[], max: [] as AppEvent[] };
      const attentionOnly = (into: AppEvent[]) => (event: AppEvent) => {
        if (event.type === 'changed' && event.kind === 'attention') into.push(event);
      };
      t.installation.subscribe({ person: t.installation.owner() }, attentionOnly(heard.owner));
      t.installation.subscribe({ person: mia }, attentionOnly(heard.mia));
      t.installation.subscribe({ person: max }, attentionOnly(heard.max));
      const conversation = await t.as(mia)('conversations.open', { roleId: role.id });
      await t.as(mia)('conversations.send', { id: conversation.id, text: 'hello' });
      await t.waitFor(async () => {
        const mine = await t.as(mia)('attention.list', {});
        return mine.items.some((i) => i.kind === 'answer') && heard.mia.length > 0;
      }, 'mia to hear of her answer');
      expect(heard.owner).toEqual([]);
      expect(heard.max).toEqual([]);
      const before = heard.mia.length;
      await t.as(mia)('attention.markRead', { kind: 'conversation', id: conversation.id });
      expect(heard.mia.length).toBe(before + 1);
      expect(heard.owner).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe('reading the list', () => {
  it('reads the database once per change, for every page and count of the person, and anew after any change', async () => {
    const t = await openTestInstallation();
    try {
      const role = await t.owner('roles.create', { name: 'assistant', agent: scripted });
      const conversation = await t.owner('conversations.open', { roleId: role.id });
      const first = await t.owner('attention.list', {});
      // Written behind Parley's back, with no change told: the list read after the last change stands.
      t.installation.db
        .prepare(
          "INSERT INTO attention_events (kind, object_kind, object_id, reason) VALUES ('turn_failed', 'conversation', ?, 'x')",
        )
        .run(conversation.id);
      expect(await t.owner('attention.list', {})).toEqual(first);
      expect(t.installation.attention.count(t.installation.owner())).toBe(first.total);
      // Any change is read anew: here, a role made.
      await t.owner('roles.create', { name: 'writer', agent: scripted });
      const after = await t.owner('attention.list', {});
      expect(after.items.map((item) => item.kind)).toContain('agent_failed');
      expect(after.total).toBe(first.total + 1);
    } finally {
      await t.close();
    }
  });
});

describe('what a person has read is stored', () => {
  it('survives a restart: read stays read, unread stays unread, and the floor keeps up', async () => {
    const first = await openTestInstallation();
    const role = await first.owner('roles.create', { name: 'assistant', agent: scripted });
    const one = await first.owner('conversations.open', { roleId: role.id });
    const other = await first.owner('roles.create', { name: 'writer', agent: scripted });
    const two = await first.owner('conversations.open', { roleId: other.id });
    await first.owner('conversations.send', { id: one.id, text: 'one' });
    await first.owner('conversations.send', { id: two.id, text: 'two' });
    await first.waitFor(
      async () => (await first.owner('attention.list', {})).items.filter((i) => i.kind === 'answer').length === 2,
      'both answers',
    );
    await first.owner('attention.markRead', { kind: 'conversation', id: one.id });
    const ownerId = first.installation.owner().id;
    // The floor rose to just below the answer still unread in the other conversation.
    const answerTwo = (await first.owner('conversations.get', { id: two.id })).messages.find(
      (m) => m.author.kind === 'role',
    )!;
    expect(readFloor(first.installation.db, ownerId).message_id).toBe(answerTwo.id - 1);
    const again = await first.restart();
    try {
      const listed = await again.owner('attention.list', {});
      expect(keysOf(listed)).toEqual([`answer:conversation:${two.id}`]);
      await again.owner('attention.markRead', { kind: 'conversation', id: two.id });
      expect((await again.owner('attention.list', {})).total).toBe(0);
      // Nothing is unread: the floor is at the newest message, and no mark is left.
      const db = again.installation.db;
      expect(readFloor(db, ownerId).message_id).toBe(
        db.prepare('SELECT max(id) FROM messages').pluck().get() as number,
      );
      expect(db.prepare('SELECT count(*) FROM read_marks WHERE person_id = ?').pluck().get(ownerId)).toBe(0);
    } finally {
      await again.close();
    }
  });
});
