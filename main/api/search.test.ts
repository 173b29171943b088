// `search` on real installations: two people and a peer, over mutual TLS, with
// scripted roles. Each object holds its own word and all of them "zoo", so what a
// person's hits leave out is as plain as what they hold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, type SearchHit } from '../../shared/api-contract';
import type { Person, ThreadSummary } from '../../shared/domain';
import { assertBuilt } from '../paths';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';

let alice: TestInstallation;
let carol: TestInstallation;
let bob: Person;
type Caller = (m: 'search', p: { query: string; limit?: number }) => Promise<{ hits: SearchHit[] }>;
let asAlice: Caller;
let asBob: Caller;
const ids: Record<string, number> = {};

const scripted = { adapter: 'scripted' } as const;

/** Waits until the agent conversation `pick` finds has had its answer and its agent is idle. */
async function answered(
  reader: Person,
  list: Parameters<TestInstallation['owner']>[1],
  pick: (t: ThreadSummary) => boolean,
) {
  return alice.waitFor(
    async () => {
      const found = (await alice.as(reader)('threads.list', list as never)).find(pick);
      // Asked and answered: one text out, acknowledged, one in, handled by an agent now idle.
      return found && found.counts.acked >= 1 && found.counts.handled >= 1 && found.run.state === 'idle' && found;
    },
    'the agent conversation to be answered',
    60_000,
  );
}

const summary = (hits: SearchHit[]) => hits.map((hit) => `${hit.kind} ${hit.id}`).sort();

beforeAll(async () => {
  assertBuilt();
  [alice, carol] = await Promise.all([openPeer('alice'), openPeer('carol')]);
  const assistant = await alice.owner('roles.create', { name: 'assistant', agent: scripted });
  const writer = await alice.owner('roles.create', { name: 'writer', agent: scripted });
  await carol.owner('roles.create', { name: 'researcher', agent: scripted });
  const asker = await carol.owner('roles.create', { name: 'asker', agent: scripted });
  await pair(carol, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
  bob = (await alice.owner('people.add', { name: 'bob', kind: 'member' })).person;
  asAlice = alice.owner;
  asBob = alice.as(bob);

  // Alice's own conversation.
  const mine = await alice.owner('conversations.open', { roleId: assistant.id });
  await alice.owner('conversations.send', { id: mine.id, text: 'aardvark zoo' });
  ids.aliceConversation = mine.id;
  // Bob's conversation, which asks carol: an agent conversation rooted there.
  const his = await alice.as(bob)('conversations.open', { roleId: assistant.id });
  await alice.as(bob)('conversations.send', { id: his.id, text: 'badger zoo' });
  await alice.as(bob)('conversations.send', { id: his.id, text: 'ask carol/researcher: camel zoo' });
  ids.bobConversation = his.id;
  ids.bobThread = (await answered(bob, { root: { kind: 'conversation', id: his.id } }, () => true)).id;
  // Carol's asker asks alice/assistant: an agent conversation the peer started.
  const carolConversation = await carol.owner('conversations.open', { roleId: asker.id });
  await carol.owner('conversations.send', { id: carolConversation.id, text: 'ask alice/assistant: dingo zoo' });
  ids.peerThread = (await answered(alice.installation.owner(), { peerStarted: true }, () => true)).id;
  ids.carolConversation = carolConversation.id;
  // Bob asks carol from another conversation, then deletes it: the agent conversation's root is gone.
  const doomed = await alice.as(bob)('conversations.open', { roleId: writer.id });
  await alice.as(bob)('conversations.send', { id: doomed.id, text: 'ask carol/researcher: emu zoo' });
  ids.orphanedThread = (await answered(bob, { root: { kind: 'conversation', id: doomed.id } }, () => true)).id;
  await alice.as(bob)('conversations.delete', { id: doomed.id });
  // A task of bob's, with a comment: every person reads it.
  const task = await alice.as(bob)('tasks.create', { roleId: writer.id, title: 'falcon zoo', body: 'the brief' });
  await alice.as(bob)('tasks.comment', { id: task.id, text: 'gecko' });
  ids.task = task.id;
}, 180_000);

afterAll(async () => {
  await Promise.all([alice?.close(), carol?.close()]);
});

describe('search', () => {
  it('finds for each person only what they may read (DESIGN §7)', async () => {
    const aliceHits = (await asAlice('search', { query: 'zoo', limit: 50 })).hits;
    const bobHits = (await asBob('search', { query: 'zoo', limit: 50 })).hits;
    // Alice: her conversation, the task, the one the peer started and (an owner) the orphaned one.
    expect(summary(aliceHits)).toEqual(
      [
        `conversation ${ids.aliceConversation}`,
        `task ${ids.task}`,
        `thread ${ids.peerThread}`,
        `thread ${ids.orphanedThread}`,
      ].sort(),
    );
    // Bob: his conversation and the agent conversation rooted there, the task, the one the peer started.
    expect(summary(bobHits)).toEqual(
      [
        `conversation ${ids.bobConversation}`,
        `thread ${ids.bobThread}`,
        `task ${ids.task}`,
        `thread ${ids.peerThread}`,
      ].sort(),
    );
    // An owner does not read a member's conversation, nor what was asked from it.
    expect(await asAlice('search', { query: 'badger' })).toEqual({ hits: [] });
    expect(await asAlice('search', { query: 'camel' })).toEqual({ hits: [] });
    // A member does not read an agent conversation whose root is gone.
    expect(await asBob('search', { query: 'emu' })).toEqual({ hits: [] });
    expect((await asAlice('search', { query: 'emu' })).hits.map((h) => h.id)).toEqual([ids.orphanedThread]);
  });

  it('names each hit and where it lives, with the match highlighted in its snippet', async () => {
    const hits = (await asBob('search', { query: 'zoo', limit: 50 })).hits;
    const byKey = new Map(hits.map((hit) => [`${hit.kind} ${hit.id}`, hit]));
    expect(byKey.get(`conversation ${ids.bobConversation}`)?.title).toBe('assistant');
    expect(byKey.get(`task ${ids.task}`)?.title).toBe('falcon zoo');
    expect(byKey.get(`thread ${ids.bobThread}`)).toMatchObject({
      title: 'carol/researcher',
      root: { kind: 'conversation', id: ids.bobConversation, gone: false },
    });
    expect(byKey.get(`thread ${ids.peerThread}`)).toMatchObject({
      title: 'carol/asker',
      root: { kind: 'thread', id: ids.peerThread, gone: false },
    });
    for (const hit of hits) {
      expect(hit.highlights.length).toBeGreaterThan(0);
      for (const [start, end] of hit.highlights) expect(hit.snippet.slice(start, end).toLowerCase()).toBe('zoo');
      expect(Date.parse(hit.at)).not.toBeNaN();
    }
    const comment = (await asBob('search', { query: 'gecko' })).hits;
    expect(comment).toEqual([expect.objectContaining({ kind: 'task', id: ids.task, snippet: 'gecko' })]);
  });

  it('matches words as typed prefixes and quoted words as a phrase', async () => {
    expect((await asAlice('search', { query: 'aard' })).hits.map((h) => h.id)).toEqual([ids.aliceConversation]);
    expect((await asAlice('search', { query: '"aardvark zoo"' })).hits).toHaveLength(1);
    expect((await asAlice('search', { query: '"zoo aardvark"' })).hits).toHaveLength(0);
    expect((await asAlice('search', { query: 'AARDVARK ZOO' })).hits).toHaveLength(1);
  });

  it('takes FTS5 syntax as plain words: never an error, never an operator', async () => {
    for (const query of ['zoo AND (', 'NEAR(zoo', '"', 'zoo*', 'zoo OR badger', '-zoo', 'title:zoo', '^zoo'])
      await expect(asAlice('search', { query })).resolves.toBeDefined();
    // "OR" is a word to look for, not an operator: nothing holds it.
    expect(await asAlice('search', { query: 'zoo OR badger' })).toEqual({ hits: [] });
    expect(await asAlice('search', { query: '!!! ???' })).toEqual({ hits: [] });
  });

  it('refuses an empty query, a long one and a bad limit with invalid', async () => {
    for (const params of [
      { query: '   ' },
      { query: 'x'.repeat(501) },
      { query: 'zoo', limit: 0 },
      { query: 'zoo', limit: 101 },
    ]) {
      const error = await asAlice('search', params).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: 'invalid' });
    }
  });

  it('orders by relevance, then the newest first, and keeps to the limit', async () => {
    const role = (await alice.owner('roles.list', {})).find((r) => r.name === 'writer')!;
    const make = (title: string, body = '') => alice.owner('tasks.create', { roleId: role.id, title, body });
    const weak = await make('wombat', 'a long brief that says many other things about many other things');
    const older = await make('wombat wombat');
    const newer = await make('wombat wombat');
    const hits = (await asAlice('search', { query: 'wombat' })).hits;
    expect(hits.map((h) => h.id)).toEqual([newer.id, older.id, weak.id]);
    expect((await asAlice('search', { query: 'wombat', limit: 2 })).hits.map((h) => h.id)).toEqual([
      newer.id,
      older.id,
    ]);
  });

  it('finds what was written a moment ago, and no longer what was deleted', async () => {
    const role = (await alice.owner('roles.list', {})).find((r) => r.name === 'writer')!;
    const conversation = await alice.owner('conversations.open', { roleId: role.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'narwhal' });
    expect((await asAlice('search', { query: 'narwhal' })).hits.map((h) => h.id)).toEqual([conversation.id]);
    await alice.owner('conversations.delete', { id: conversation.id });
    expect(await asAlice('search', { query: 'narwhal' })).toEqual({ hits: [] });
  });

  it('finds a text that just came over the wire in the very next search', async () => {
    // Carol's agent asks again in the agent conversation it started: a text that alice's
    // engine writes. The first search after it is there finds it, whether or not the
    // background indexer has run.
    await carol.owner('conversations.send', { id: ids.carolConversation!, text: 'ask alice/assistant: quokka' });
    await alice.waitFor(
      async () => (await alice.owner('threads.get', { id: ids.peerThread! })).texts.some((t) => t.body === 'quokka'),
      'the text from carol to arrive',
      60_000,
    );
    expect((await asAlice('search', { query: 'quokka' })).hits).toEqual([
      expect.objectContaining({ kind: 'thread', id: ids.peerThread, title: 'carol/asker', snippet: 'quokka' }),
    ]);
  });
});
