// A text a conversation's or a task's agent sends changes that root's page (the ask shows
// under the turn's line), so the root's readers hear of it: once per commit however many
// texts of the root the commit holds, and only those who may read the root. Real
// installations over mutual TLS; the sends go through the engine's send path, as
// `parley send` does, without an agent's turn in between.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppEvent } from '../../shared/api-contract';
import type { Person } from '../../shared/domain';
import { transaction } from '../store/database';
import { ensureRun, type RunRow } from '../store/queries/runs';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';

let alice: TestInstallation;
let bob: TestInstallation;
let role: { id: number; name: string };
let mia: Person;
let max: Person;

beforeAll(async () => {
  [alice, bob] = await Promise.all([openPeer('alice'), openPeer('bob')]);
  const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
  role = { id: assistant.id, name: assistant.name };
  // bob's role takes the texts and says nothing back.
  await bob.owner('roles.create', {
    name: 'quiet',
    agent: { adapter: 'command', command: [process.execPath, '-e', '0'] },
  });
  await pair(bob, alice, { inviter: ['quiet'], acceptor: [] });
  mia = (await alice.owner('people.add', { name: 'mia', kind: 'member' })).person;
  max = (await alice.owner('people.add', { name: 'max', kind: 'member' })).person;
}, 120_000);

afterAll(async () => {
  await alice?.close();
  await bob?.close();
});

/** The root change events `person` hears. */
function rootEvents(person: Person): Array<Extract<AppEvent, { type: 'changed' }>> {
  const seen: Array<Extract<AppEvent, { type: 'changed' }>> = [];
  alice.installation.events.subscribe({ person }, (event) => {
    if (event.type === 'changed' && (event.kind === 'conversation' || event.kind === 'task')) seen.push(event);
  });
  return seen;
}

const runOf = (kind: 'conversation' | 'task', id: number): RunRow => {
  const db = alice.installation.db;
  return transaction(db, () => ensureRun(db, { kind, id }, role.id));
};

const send = (run: RunRow, text: string) => alice.installation.engine.sendAs(run, role, 'bob/quiet', text, null);

const count = (events: Array<{ kind: string; id: number }>, kind: string, id: number) =>
  events.filter((e) => e.kind === kind && e.id === id).length;

describe('a sent text tells its root’s readers', { timeout: 60_000 }, () => {
  it('once per commit, each root to whoever reads it: a member’s conversation to her alone, a task to everyone', async () => {
    const conversation = await alice.as(mia)('conversations.open', { roleId: role.id });
    const task = await alice.owner('tasks.create', { roleId: role.id, title: 'compare notes' });
    const inConversation = runOf('conversation', conversation.id);
    const inTask = runOf('task', task.id);
    const heard = { mia: rootEvents(mia), max: rootEvents(max), owner: rootEvents(alice.installation.owner()) };

    // Sent in one tick: one commit holds all three.
    const sent = await Promise.all([send(inConversation, 'one'), send(inConversation, 'two'), send(inTask, 'three')]);
    expect(sent.map((s) => s.seq)).toEqual([1, 2, 1]);
    // After-commit events go out before the sends resolve.
    const first = { mia: [...heard.mia], max: [...heard.max], owner: [...heard.owner] };
    expect(count(first.mia, 'conversation', conversation.id)).toBe(1);
    expect(count(first.max, 'conversation', conversation.id)).toBe(0);
    for (const who of [first.mia, first.max, first.owner]) expect(count(who, 'task', task.id)).toBe(1);

    // A later commit tells them again.
    await send(inConversation, 'four');
    expect(count(heard.mia, 'conversation', conversation.id)).toBe(2);
    expect(count(heard.max, 'conversation', conversation.id)).toBe(0);
  });
});
