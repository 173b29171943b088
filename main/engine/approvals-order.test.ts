// Incoming approvals keep order and honour a pause (DESIGN §12.7), and an approval that
// races a revoke says what happened. Two real installations over mutual TLS, scripted
// agents as real processes; bob lets alice's texts in only once a person approves.
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalView, TextView } from '../../shared/domain';
import { findRun, turnInputs } from '../store/queries/runs';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});
async function peer(name: string) {
  const t = await openPeer(name, { stopGraceMs: 500 });
  open.push(t);
  return t;
}

/** alice (assistant) ↔ bob (researcher, and writer for himself); bob's incoming texts ask first. */
async function aliceAndBob() {
  const alice = await peer('alice');
  const bob = await peer('bob');
  const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
  await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
  const writer = await bob.owner('roles.create', { name: 'writer', agent: { adapter: 'scripted' } });
  const ids = await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
  await bob.owner('connections.setPolicy', { id: ids.inviterConnectionId, incoming: 'ask' });
  const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
  return {
    alice,
    bob,
    writer,
    conversation,
    aliceToBob: ids.acceptorConnectionId,
    bobToAlice: ids.inviterConnectionId,
  };
}

async function pending(t: TestInstallation, count: number): Promise<ApprovalView[]> {
  return t.waitFor(async () => {
    const list = await t.owner('approvals.list', {});
    return list.length === count ? list : undefined;
  }, `${count} approvals waiting`);
}

const incoming = async (t: TestInstallation, threadRowId: number): Promise<TextView[]> =>
  (await t.owner('threads.get', { id: threadRowId })).texts.filter((text) => text.direction === 'in');

async function bobsThread(bob: TestInstallation) {
  return bob.waitFor(async () => (await bob.owner('threads.list', { peerStarted: true }))[0], 'the agent conversation');
}

/** What bob's agent was given in that agent conversation, turn by turn. */
function givenPerTurn(bob: TestInstallation, threadRowId: number): string[][] {
  const run = findRun(bob.installation.db, { kind: 'thread', id: threadRowId });
  if (!run) return [];
  const turns = bob.installation.db.prepare('SELECT id FROM turns WHERE run_id = ? ORDER BY id').pluck().all(run.id);
  return (turns as number[]).map((turn) => turnInputs(bob.installation.db, turn).map((input) => input.body));
}

async function answers(alice: TestInstallation, conversationId: number, count: number): Promise<string[]> {
  return alice.waitFor(async () => {
    const { messages } = await alice.owner('conversations.get', { id: conversationId });
    const said = messages.filter((m) => m.body.includes('says:')).map((m) => m.body);
    return said.length >= count ? said : undefined;
  }, `${count} answers`);
}

describe('incoming approvals keep order per agent conversation (DESIGN §12.7)', () => {
  it('approved in reverse, the agent still takes O-1, O-2, O-3 in order', async () => {
    const { alice, bob, conversation } = await aliceAndBob();
    for (const [i, body] of ['O-1', 'O-2', 'O-3'].entries()) {
      await alice.owner('conversations.send', { id: conversation.id, text: `ask bob/researcher: ${body}` });
      await pending(bob, i + 1);
    }
    const [first, second, third] = await pending(bob, 3);
    const thread = await bobsThread(bob);
    await bob.owner('approvals.decide', { id: third!.id, approve: true });
    await bob.owner('approvals.decide', { id: second!.id, approve: true });
    // O-2 and O-3 are let in but wait behind O-1, still held: no turn took either.
    expect((await incoming(bob, thread.id)).map((t) => [t.seq, t.state])).toEqual([
      [1, 'held'],
      [2, 'received'],
      [3, 'received'],
    ]);
    await bob.owner('approvals.decide', { id: first!.id, approve: true });
    await bob.waitFor(
      async () => (await incoming(bob, thread.id)).every((t) => t.state === 'handled'),
      'all three taken',
    );
    expect(givenPerTurn(bob, thread.id).flat()).toEqual(['O-1', 'O-2', 'O-3']);
    await answers(alice, conversation.id, 1);
  });

  it('a text denied first lets the later ones through, in order', async () => {
    const { alice, bob, conversation } = await aliceAndBob();
    for (const [i, body] of ['O-1', 'O-2'].entries()) {
      await alice.owner('conversations.send', { id: conversation.id, text: `ask bob/researcher: ${body}` });
      await pending(bob, i + 1);
    }
    const [first, second] = await pending(bob, 2);
    const thread = await bobsThread(bob);
    await bob.owner('approvals.decide', { id: second!.id, approve: true });
    await bob.owner('approvals.decide', { id: first!.id, approve: false });
    await answers(alice, conversation.id, 1);
    expect(givenPerTurn(bob, thread.id).flat()).toEqual(['O-2']);
    expect((await incoming(bob, thread.id)).map((t) => [t.state, t.reason])).toEqual([
      ['handled', 'denied'],
      ['handled', null],
    ]);
  });
});

describe('approvals and a pause (DESIGN §12.7)', () => {
  it('refuses to approve while paused; after unpausing nothing unrelated starts it, an approval does', async () => {
    const { alice, bob, writer, conversation, bobToAlice } = await aliceAndBob();
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: while paused?' });
    const [approval] = await pending(bob, 1);
    const thread = await bobsThread(bob);
    await bob.owner('connections.pause', { id: bobToAlice });
    await expect(bob.owner('approvals.decide', { id: approval!.id, approve: true })).rejects.toMatchObject({
      code: 'paused',
      message: 'the connection to alice is paused: unpause it first, then approve',
    });
    expect((await pending(bob, 1))[0]).toMatchObject({ id: approval!.id, state: 'pending', canDecide: true });
    await bob.owner('connections.unpause', { id: bobToAlice });

    // bob's owner talks to another role: that turn is no reason to start alice's text.
    const own = await bob.owner('conversations.open', { roleId: writer.id });
    await bob.owner('conversations.send', { id: own.id, text: 'hello' });
    await bob.waitFor(async () => {
      const { messages } = await bob.owner('conversations.get', { id: own.id });
      return messages.some((m) => m.body === 'echo: hello');
    }, 'the writer’s answer');
    expect(givenPerTurn(bob, thread.id)).toEqual([]);
    expect((await incoming(bob, thread.id)).map((t) => t.state)).toEqual(['held']);

    await bob.owner('approvals.decide', { id: approval!.id, approve: true });
    expect(await answers(alice, conversation.id, 1)).toEqual([
      'bob/researcher says: answer from researcher: while paused?',
    ]);
  });

  it('a text a denial while paused lets through waits for the next text, not for any wake', async () => {
    const { alice, bob, writer, conversation, bobToAlice } = await aliceAndBob();
    for (const [i, body] of ['O-1', 'O-2'].entries()) {
      await alice.owner('conversations.send', { id: conversation.id, text: `ask bob/researcher: ${body}` });
      await pending(bob, i + 1);
    }
    const [first, second] = await pending(bob, 2);
    const thread = await bobsThread(bob);
    await bob.owner('approvals.decide', { id: second!.id, approve: true });
    await bob.owner('connections.pause', { id: bobToAlice });
    // A denial is no start: allowed while paused.
    await bob.owner('approvals.decide', { id: first!.id, approve: false });
    await bob.owner('connections.unpause', { id: bobToAlice });
    const own = await bob.owner('conversations.open', { roleId: writer.id });
    await bob.owner('conversations.send', { id: own.id, text: 'hello' });
    await bob.waitFor(async () => {
      const { messages } = await bob.owner('conversations.get', { id: own.id });
      return messages.some((m) => m.body === 'echo: hello');
    }, 'the writer’s answer');
    expect(givenPerTurn(bob, thread.id)).toEqual([]);

    // The next text in that agent conversation, once let in, takes O-2 with it, in order.
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: O-3' });
    const [third] = await pending(bob, 1);
    await bob.owner('approvals.decide', { id: third!.id, approve: true });
    await bob.waitFor(
      async () => (await incoming(bob, thread.id)).every((t) => t.state === 'handled'),
      'O-2 and O-3 taken',
    );
    expect(givenPerTurn(bob, thread.id).flat()).toEqual(['O-2', 'O-3']);
  });
});

describe('an approval racing a revoke (DESIGN §12.7)', () => {
  it('after the revoke, approving is refused as revoked', async () => {
    const { alice, bob, conversation, aliceToBob, bobToAlice } = await aliceAndBob();
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: still?' });
    const [approval] = await pending(bob, 1);
    await alice.owner('connections.revoke', { id: aliceToBob });
    await bob.waitFor(
      async () => (await bob.owner('connections.list', {})).find((c) => c.id === bobToAlice)?.status === 'revoked',
      'bob to hear of the revoke',
    );
    await expect(bob.owner('approvals.decide', { id: approval!.id, approve: true })).rejects.toMatchObject({
      code: 'revoked',
      message: 'alice revoked the connection: this text was dropped and will not reach the agent',
    });
  });

  it('approved just before the revoke, the text and its approval say the revoke dropped it', async () => {
    const { alice, bob, conversation, aliceToBob } = await aliceAndBob();
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: sleep 30' });
    const [busy] = await pending(bob, 1);
    const thread = await bobsThread(bob);
    await bob.owner('approvals.decide', { id: busy!.id, approve: true });
    await bob.waitFor(
      async () => (await bob.owner('threads.list', { peerStarted: true }))[0]?.run.state === 'running',
      'bob’s agent at work',
    );
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: O-2' });
    const [late] = await pending(bob, 1);
    const approved = await bob.owner('approvals.decide', { id: late!.id, approve: true });
    expect(approved).toMatchObject({ state: 'approved', decidedBy: 'bob' });
    // O-2 waits behind the running turn when alice revokes.
    await alice.owner('connections.revoke', { id: aliceToBob });
    await bob.waitFor(
      async () => (await incoming(bob, thread.id))[1]?.reason === 'revoke',
      'O-2 dropped by the revoke',
    );
    expect((await incoming(bob, thread.id)).map((t) => [t.body, t.state, t.reason])).toEqual([
      ['sleep 30', 'handled', null],
      ['O-2', 'handled', 'revoke'],
    ]);
    const row = bob.installation.db
      .prepare('SELECT state, reason, decided_by_name FROM approvals WHERE id = ?')
      .get(late!.id);
    expect(row).toEqual({
      state: 'cancelled',
      reason: 'alice revoked the connection before the agent took it',
      decided_by_name: 'bob',
    });
    expect(givenPerTurn(bob, thread.id).flat()).toEqual(['sleep 30']);
  });
});
