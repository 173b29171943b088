// "Always allow" (DESIGN §12.10 `remember`) between real installations on loopback:
// separate data folders, mutual TLS, real agent processes calling the real CLI. A person
// approves once and chooses to always allow the peer role, in this root or everywhere;
// what matches later goes through without asking, recorded as approved by them.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalView } from '../../shared/domain';
import { projectRoot } from '../paths';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});
async function peer(name: string) {
  const t = await openPeer(name);
  open.push(t);
  return t;
}

/** A command agent that asks for a tool through the role API and says how it was answered. */
const asker = {
  adapter: 'command' as const,
  command: [process.execPath, path.join(projectRoot, 'dist', 'testing', 'permission-asker.js')],
};

/** alice (assistant) ↔ bob (researcher, and builder that asks for tools), both exposing their roles. */
async function aliceAndBob() {
  const alice = await peer('alice');
  const bob = await peer('bob');
  const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
  await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
  await bob.owner('roles.create', { name: 'builder', agent: asker });
  const ids = await pair(bob, alice, { inviter: ['researcher', 'builder'], acceptor: ['assistant'] });
  return { alice, bob, assistant, aliceToBob: ids.acceptorConnectionId, bobToAlice: ids.inviterConnectionId };
}

async function said(t: TestInstallation, conversationId: number, match: (body: string) => boolean, what: string) {
  return t.waitFor(async () => {
    const { messages } = await t.owner('conversations.get', { id: conversationId });
    return messages.find((m) => match(m.body))?.body;
  }, what);
}

/** A task whose comment asks a peer: the scripted agent takes a comment as it is written. */
async function taskAsking(t: TestInstallation, roleId: number, title: string, ask: string) {
  const task = await t.owner('tasks.create', { roleId, title });
  await t.owner('tasks.comment', { id: task.id, text: ask });
  return task;
}

async function logged(t: TestInstallation, taskId: number, words: string) {
  return t.waitFor(async () => {
    const { log } = await t.owner('tasks.get', { id: taskId });
    return log.find((entry) => entry.body.includes(words))?.body;
  }, `"${words}" on the task`);
}

async function waiting(t: TestInstallation, match: (a: ApprovalView) => boolean, what: string) {
  return t.waitFor(async () => (await t.owner('approvals.list', {})).find(match), what);
}

/** How the approvals of a kind were settled, oldest first. */
const settled = (t: TestInstallation, kind: string) =>
  t.installation.db
    .prepare('SELECT state, decided_by_name AS who, reason FROM approvals WHERE kind = ? ORDER BY id')
    .all(kind);

describe('always allow a held text (DESIGN §12.10)', () => {
  it('outgoing: within its conversation, then everywhere; later sends go out without asking, and a removed rule asks again', async () => {
    const { alice, assistant, aliceToBob } = await aliceAndBob();
    await alice.owner('connections.setPolicy', { id: aliceToBob, outgoing: 'ask' });
    const first = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: first.id, text: 'ask bob/researcher: one?' });
    const held = await waiting(alice, (a) => a.text?.preview === 'one?', 'the held send');
    expect(held).toMatchObject({ kind: 'outgoing', canRemember: ['root', 'peer-role'] });
    await alice.owner('approvals.decide', { id: held.id, approve: true, remember: 'root' });
    expect(await said(alice, first.id, (b) => b.includes('one?') && b.includes('says'), 'the first answer')).toBe(
      'bob/researcher says: answer from researcher: one?',
    );

    // In the same conversation the next send goes out without a person.
    await alice.owner('conversations.send', { id: first.id, text: 'ask bob/researcher: two?' });
    await said(alice, first.id, (b) => b.includes('answer from researcher: two?'), 'the second answer, unasked');
    expect(await alice.owner('approvals.list', {})).toEqual([]);
    expect(settled(alice, 'outgoing')).toEqual([
      { state: 'approved', who: 'alice', reason: null },
      { state: 'approved', who: 'alice', reason: 'always allowed' },
    ]);
    // The texts say who let each through: alice herself, then her rule.
    const [thread] = await alice.owner('threads.list', { root: { kind: 'conversation', id: first.id } });
    expect(
      (await alice.owner('threads.get', { id: thread!.id })).texts
        .filter((t) => t.direction === 'out')
        .map((t) => t.approvedBy),
    ).toEqual([
      { name: 'alice', always: false },
      { name: 'alice', always: true },
    ]);
    const [inRoot] = await alice.owner('allowRules.list', { connectionId: aliceToBob });
    expect(inRoot).toMatchObject({
      peer: 'bob/researcher',
      kind: 'outgoing',
      root: { kind: 'conversation', id: first.id, title: 'assistant' },
      createdBy: 'alice',
      canRemove: true,
    });

    // A task still asks; there alice allows bob/researcher everywhere.
    const asksAgain = await taskAsking(alice, assistant.id, 'one task', 'ask bob/researcher: three?');
    const third = await waiting(alice, (a) => a.text?.preview === 'three?', 'the send from a task');
    expect(third.root).toEqual({ kind: 'task', id: asksAgain.id });
    await alice.owner('approvals.decide', { id: third.id, approve: true, remember: 'peer-role' });
    await logged(alice, asksAgain.id, 'answer from researcher: three?');
    const elsewhere = await taskAsking(alice, assistant.id, 'another task', 'ask bob/researcher: four?');
    await logged(alice, elsewhere.id, 'answer from researcher: four?');
    expect((await alice.owner('allowRules.list', {})).map((r) => r.root?.kind ?? 'everywhere')).toEqual([
      'conversation',
      'everywhere',
    ]);

    // Removed, both: the next send asks again.
    for (const rule of await alice.owner('allowRules.list', {}))
      await alice.owner('allowRules.remove', { id: rule.id });
    await alice.owner('conversations.send', { id: first.id, text: 'ask bob/researcher: five?' });
    await waiting(alice, (a) => a.text?.preview === 'five?', 'the send held again');
  });

  it('what already waits and the new rule covers goes through with it; what it does not cover keeps waiting', async () => {
    const { alice, assistant, aliceToBob } = await aliceAndBob();
    await alice.owner('connections.setPolicy', { id: aliceToBob, outgoing: 'ask' });
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: first?' });
    const first = await waiting(alice, (a) => a.text?.preview === 'first?', 'the first held send');
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: second?' });
    await waiting(alice, (a) => a.text?.preview === 'second?', 'the second held send');
    const task = await taskAsking(alice, assistant.id, 'elsewhere', 'ask bob/researcher: third?');
    await waiting(alice, (a) => a.text?.preview === 'third?', 'the held send of a task');

    await alice.owner('approvals.decide', { id: first.id, approve: true, remember: 'root' });
    await said(alice, conversation.id, (b) => b.includes('answer from researcher: second?'), 'the second answer');
    // The task's send is in another root: it still waits for a person.
    expect((await alice.owner('approvals.list', {})).map((a) => [a.text?.preview, a.root])).toEqual([
      ['third?', { kind: 'task', id: task.id }],
    ]);
    expect(settled(alice, 'outgoing')).toEqual([
      { state: 'approved', who: 'alice', reason: null },
      { state: 'approved', who: 'alice', reason: null },
      { state: 'pending', who: null, reason: null },
    ]);
  });

  it('incoming: the peer’s later texts in that agent conversation reach the agent without asking', async () => {
    const { alice, bob, assistant, bobToAlice } = await aliceAndBob();
    await bob.owner('connections.setPolicy', { id: bobToAlice, incoming: 'ask' });
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: first?' });
    const held = await waiting(bob, (a) => a.text?.preview === 'first?', 'alice’s text held at bob');
    expect(held).toMatchObject({ kind: 'incoming', thread: { peer: 'alice/assistant' } });
    await bob.owner('approvals.decide', { id: held.id, approve: true, remember: 'root' });
    await said(alice, conversation.id, (b) => b.includes('answer from researcher: first?'), 'the first answer');

    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: second?' });
    await said(alice, conversation.id, (b) => b.includes('answer from researcher: second?'), 'the second, unasked');
    expect(await bob.owner('approvals.list', {})).toEqual([]);
    expect(settled(bob, 'incoming')).toEqual([
      { state: 'approved', who: 'bob', reason: null },
      { state: 'approved', who: 'bob', reason: 'always allowed' },
    ]);
    // The rule holds in that agent conversation, which alice started and bob sees as its own root.
    const [rule] = await bob.owner('allowRules.list', {});
    expect(rule).toMatchObject({
      peer: 'alice/assistant',
      kind: 'incoming',
      root: { kind: 'thread', id: held.thread!.id },
    });
  });
});

describe('always allow a tool request (DESIGN §12.10)', () => {
  it('a run working for the peer role asks once; the same tool is then allowed without asking, from a task too', async () => {
    const { alice, bob, assistant } = await aliceAndBob();
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/builder: deploy' });
    const request = await waiting(bob, (a) => a.kind === 'permission', 'builder’s tool request at bob');
    expect(request).toMatchObject({
      role: 'builder',
      thread: { peer: 'alice/assistant' },
      canRemember: ['root', 'peer-role'],
    });
    await bob.owner('approvals.decide', { id: request.id, approve: true, remember: 'peer-role' });
    await said(alice, conversation.id, (b) => b.includes('approved by bob'), 'builder’s answer');

    // One of alice's tasks: a new agent conversation, the same peer role and tool.
    const task = await taskAsking(alice, assistant.id, 'ship', 'ask bob/builder: deploy again');
    await logged(alice, task.id, 'approved by bob');
    expect(await bob.owner('approvals.list', {})).toEqual([]);
    expect(settled(bob, 'permission')).toEqual([
      { state: 'approved', who: 'bob', reason: null },
      { state: 'approved', who: 'bob', reason: 'always allowed' },
    ]);
    const [rule] = await bob.owner('allowRules.list', {});
    expect(rule).toMatchObject({ peer: 'alice/assistant', kind: 'permission', tool: 'execute', root: null });
  });

  it('refuses to remember what no peer role is part of, and decides nothing then', async () => {
    const alice = await peer('alice');
    const builder = await alice.owner('roles.create', { name: 'builder', agent: asker });
    const conversation = await alice.owner('conversations.open', { roleId: builder.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'deploy' });
    const request = await waiting(alice, (a) => a.kind === 'permission', 'the tool request');
    expect(request.canRemember).toEqual([]);
    await expect(
      alice.owner('approvals.decide', { id: request.id, approve: true, remember: 'root' }),
    ).rejects.toMatchObject({ code: 'invalid' });
    expect((await alice.owner('approvals.list', {})).map((a) => a.id)).toEqual([request.id]);
    await expect(
      alice.owner('approvals.decide', { id: request.id, approve: false, remember: 'root' }),
    ).rejects.toMatchObject({ code: 'invalid' });
  });
});
