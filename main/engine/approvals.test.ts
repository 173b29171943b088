// Approvals (DESIGN §11.9) between real installations on loopback: separate data folders,
// mutual TLS, scripted agents as real processes calling the real CLI. With `ask` outgoing
// an agent's send is held for a person; with `ask` incoming a peer's text is acked but no
// turn takes it until a person lets it in.
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalView, TextView, ThreadSummary } from '../../shared/domain';
import { findRun, turnInputs } from '../store/queries/runs';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import { noticesTakenBy } from '../../test-support/notices';

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});
async function peer(name: string, options: Parameters<typeof openPeer>[1] = {}) {
  const t = await openPeer(name, options);
  open.push(t);
  return t;
}
/** Closes and reopens an installation on the same data folder and port. */
async function restart(t: TestInstallation) {
  const port = Number(t.installation.peerAddress!.split(':')[1]);
  open.splice(open.indexOf(t), 1);
  const again = await t.restart({ peerPort: port });
  open.push(again);
  return again;
}

/** alice (assistant) ↔ bob (researcher), both scripted, each exposing its role to the other. */
async function aliceAndBob() {
  const alice = await peer('alice');
  const bob = await peer('bob');
  const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
  await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
  const ids = await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
  const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
  return {
    alice,
    bob,
    assistant,
    conversation,
    aliceToBob: ids.acceptorConnectionId,
    bobToAlice: ids.inviterConnectionId,
  };
}

async function message(t: TestInstallation, conversationId: number, match: (body: string) => boolean, what: string) {
  return t.waitFor(async () => {
    const { messages } = await t.owner('conversations.get', { id: conversationId });
    return messages.find((m) => match(m.body))?.body;
  }, what);
}

async function threadUnder(t: TestInstallation, conversationId: number): Promise<ThreadSummary> {
  return t.waitFor(async () => {
    const [thread] = await t.owner('threads.list', { root: { kind: 'conversation', id: conversationId } });
    return thread;
  }, 'the agent conversation');
}

const texts = async (t: TestInstallation, threadRowId: number, direction: 'out' | 'in'): Promise<TextView[]> =>
  (await t.owner('threads.get', { id: threadRowId })).texts.filter((text) => text.direction === direction);

async function pending(t: TestInstallation, count: number): Promise<ApprovalView[]> {
  return t.waitFor(async () => {
    const list = await t.owner('approvals.list', {});
    return list.length === count ? list : undefined;
  }, `${count} approvals waiting`);
}

const queueUsed = async (t: TestInstallation, connectionId: number) =>
  (await t.owner('connections.list', {})).find((c) => c.id === connectionId)!.queue.used;

describe('outgoing texts that ask first (DESIGN §11.9)', () => {
  it('holds the send, tells the agent at once, and sends it as usual once a person approves', async () => {
    const { alice, bob, conversation, aliceToBob } = await aliceAndBob();
    const policy = await alice.owner('connections.setPolicy', { id: aliceToBob, outgoing: 'ask' });
    expect(policy.policy).toEqual({ outgoing: 'ask', incoming: 'run' });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: the budget?' });
    // The tool result said it is held: the agent's own line says so.
    expect(await message(alice, conversation.id, (b) => b.startsWith('asked'), 'the agent’s line')).toBe(
      'asked bob/researcher (held for approval)',
    );
    const thread = await threadUnder(alice, conversation.id);
    expect((await texts(alice, thread.id, 'out')).map((t) => [t.seq, t.state])).toEqual([[1, 'held']]);
    // It counts against the queue, and nothing reached bob.
    expect(await queueUsed(alice, aliceToBob)).toBe(1);
    expect(await bob.owner('threads.list', { peerStarted: true })).toEqual([]);
    const [approval] = await pending(alice, 1);
    expect(approval).toMatchObject({
      kind: 'outgoing',
      state: 'pending',
      canDecide: true,
      role: 'assistant',
      root: { kind: 'conversation', id: conversation.id },
      thread: { id: thread.id, peer: 'bob/researcher' },
      text: { seq: 1, preview: 'the budget?' },
    });
    // It waits on alice in "Waiting on you" too, named for the peer and roles, until she decides.
    const waiting = (await alice.owner('attention.list', {})).items.filter((item) => item.section === 'waiting');
    expect(waiting).toMatchObject([
      {
        kind: 'held',
        object: { kind: 'thread', id: thread.id },
        peer: 'bob',
        peerRole: 'researcher',
        role: 'assistant',
        root: { kind: 'conversation', id: conversation.id, gone: false },
      },
    ]);

    const decided = await alice.owner('approvals.decide', { id: approval!.id, approve: true });
    expect(decided).toMatchObject({ state: 'approved', decidedBy: 'alice', canDecide: false });
    expect(await message(alice, conversation.id, (b) => b.includes('says:'), 'bob’s answer')).toBe(
      'bob/researcher says: answer from researcher: the budget?',
    );
    expect((await texts(alice, thread.id, 'out')).map((t) => t.state)).toEqual(['acked']);
    expect((await texts(alice, thread.id, 'out')).map((t) => t.approvedBy)).toEqual([{ name: 'alice', always: false }]);
    expect(await alice.owner('approvals.list', {})).toEqual([]);
    expect((await alice.owner('attention.list', {})).items.filter((item) => item.kind === 'held')).toEqual([]);
    // Deciding twice is refused, saying who did.
    await expect(alice.owner('approvals.decide', { id: approval!.id, approve: false })).rejects.toMatchObject({
      code: 'conflict',
      message: 'this was already approved by alice',
    });
    // The sending run hears of the approval with its next turn (it does not start one).
    const run = findRun(alice.installation.db, { kind: 'conversation', id: conversation.id })!;
    await alice.owner('conversations.send', { id: conversation.id, text: 'thanks' });
    await message(alice, conversation.id, (b) => b.includes('echo: thanks'), 'the next turn');
    const given = alice.installation.db
      .prepare("SELECT body FROM inputs WHERE run_id = ? AND kind = 'notice' ORDER BY id")
      .pluck()
      .all(run.id) as string[];
    expect(given).toEqual(['Your text #1 to bob/researcher was approved by alice; it goes out as usual.']);
  });

  it('says so in the send’s result, which the CLI prints and the MCP tool returns: held, do not send it again', async () => {
    const { alice, assistant, conversation, aliceToBob } = await aliceAndBob();
    await alice.owner('connections.setPolicy', { id: aliceToBob, outgoing: 'ask' });
    await alice.owner('conversations.send', { id: conversation.id, text: 'hello' });
    const run = await alice.waitFor(
      () => findRun(alice.installation.db, { kind: 'conversation', id: conversation.id }),
      'the conversation’s run',
    );
    const result = await alice.installation.engine.sendAs(run, assistant, 'bob/researcher', 'is this held?');
    expect(result).toMatchObject({
      to: 'bob/researcher',
      seq: 1,
      held: true,
      note: 'held for approval — do not send it again. A person who can read this topic decides; you are told when they approve or deny it.',
    });
    await pending(alice, 1);
  });

  it('fails a denied text, never sends it, and tells the sending agent in a turn of its own', async () => {
    const { alice, bob, conversation, aliceToBob } = await aliceAndBob();
    await alice.owner('connections.setPolicy', { id: aliceToBob, outgoing: 'ask' });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: the salaries?' });
    const [approval] = await pending(alice, 1);
    await alice.owner('approvals.decide', { id: approval!.id, approve: false });
    // Told in a turn of its own, which the chat does not show as the agent's words.
    const told = await alice.waitFor(async () => {
      const { turns } = await alice.owner('conversations.get', { id: conversation.id });
      return turns.length === 2 && turns[1]!.status === 'done' ? turns[1]! : undefined;
    }, 'the turn that takes the notice');
    expect(noticesTakenBy(alice.installation.db, told.id)).toEqual([
      'Your text #1 to bob/researcher was denied by alice: it was not sent. Do not send it again unless alice asks you to.',
    ]);
    const { messages } = await alice.owner('conversations.get', { id: conversation.id });
    expect(messages.map((m) => m.body).filter((b) => b.includes('denied'))).toEqual([]);
    const thread = await threadUnder(alice, conversation.id);
    expect((await texts(alice, thread.id, 'out')).map((t) => [t.state, t.reason])).toEqual([['failed', 'denied']]);
    expect(await queueUsed(alice, aliceToBob)).toBe(0);
    expect(await bob.owner('threads.list', { peerStarted: true })).toEqual([]);
  });

  it('keeps the later texts of its agent conversation back, so the peer gets them in order', async () => {
    const { alice, bob, conversation, aliceToBob } = await aliceAndBob();
    await alice.owner('connections.setPolicy', { id: aliceToBob, outgoing: 'ask' });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: one' });
    await pending(alice, 1);
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: two' });
    const [, second] = await pending(alice, 2);
    // From now on sends go at once, but the third waits behind the two held before it.
    await alice.owner('connections.setPolicy', { id: aliceToBob, outgoing: 'send' });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: three' });
    const thread = await threadUnder(alice, conversation.id);
    await alice.waitFor(async () => (await texts(alice, thread.id, 'out')).length === 3, 'the third text committed');
    await alice.owner('approvals.decide', { id: second!.id, approve: true });
    // #2 is approved but #1 is still held: nothing goes out.
    expect((await texts(alice, thread.id, 'out')).map((t) => t.state)).toEqual(['held', 'queued', 'queued']);
    expect(await queueUsed(alice, aliceToBob)).toBe(3);
    const [first] = await pending(alice, 1);
    await alice.owner('approvals.decide', { id: first!.id, approve: false });
    await alice.waitFor(async () => {
      const states = (await texts(alice, thread.id, 'out')).map((t) => t.state);
      return states.join() === 'failed,acked,acked';
    }, '#2 and #3 delivered');
    const [atBob] = await bob.owner('threads.list', { peerStarted: true });
    expect((await texts(bob, atBob!.id, 'in')).map((t) => [t.seq, t.body])).toEqual([
      [2, 'two'],
      [3, 'three'],
    ]);
  });

  it('keeps a held text through a restart, still counted against the queue limit, and sends it once approved', async () => {
    const setup = await aliceAndBob();
    const { bob, conversation, aliceToBob } = setup;
    let { alice } = setup;
    await alice.owner('connections.setPolicy', { id: aliceToBob, outgoing: 'ask' });
    await alice.owner('connections.setQueueLimit', { id: aliceToBob, limit: 1 });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: after the restart?' });
    await pending(alice, 1);
    alice = await restart(alice);
    await alice.waitFor(async () => (await alice.owner('connections.list', {}))[0]!.online, 'alice back online');
    const [approval] = await pending(alice, 1);
    const thread = await threadUnder(alice, conversation.id);
    expect((await texts(alice, thread.id, 'out')).map((t) => t.state)).toEqual(['held']);
    expect(await queueUsed(alice, aliceToBob)).toBe(1);
    // The queue is full with the held text: the next send is refused at once.
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: and this?' });
    expect(await message(alice, conversation.id, (b) => b.startsWith('error:'), 'the refusal')).toMatch(
      /^error: bob's queue is full \(1 texts waiting to be delivered\)/,
    );
    expect(await bob.owner('threads.list', { peerStarted: true })).toEqual([]);
    await alice.owner('approvals.decide', { id: approval!.id, approve: true });
    expect(await message(alice, conversation.id, (b) => b.includes('says:'), 'the answer')).toBe(
      'bob/researcher says: answer from researcher: after the restart?',
    );
  });

  it('fails a held text with the usual reason when its topic is deleted, or the connection paused or revoked', async () => {
    const { alice, assistant, conversation, aliceToBob } = await aliceAndBob();
    await alice.owner('connections.setPolicy', { id: aliceToBob, outgoing: 'ask' });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: deleted?' });
    const [first] = await pending(alice, 1);
    const deletedThread = await threadUnder(alice, conversation.id);
    await alice.owner('conversations.delete', { id: conversation.id });
    await pending(alice, 0);
    expect((await texts(alice, deletedThread.id, 'out')).map((t) => [t.state, t.reason])).toEqual([
      ['failed', 'closed'],
    ]);
    await expect(alice.owner('approvals.decide', { id: first!.id, approve: true })).rejects.toMatchObject({
      code: 'conflict',
      message: 'this no longer waits: closed',
    });

    const again = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: again.id, text: 'ask bob/researcher: paused?' });
    await pending(alice, 1);
    await alice.owner('connections.pause', { id: aliceToBob });
    await pending(alice, 0);
    const pausedThread = await threadUnder(alice, again.id);
    expect((await texts(alice, pausedThread.id, 'out')).map((t) => [t.state, t.reason])).toEqual([
      ['failed', 'paused'],
    ]);
    await alice.owner('connections.unpause', { id: aliceToBob });

    await alice.owner('conversations.send', { id: again.id, text: 'ask bob/researcher: revoked?' });
    await pending(alice, 1);
    await alice.owner('connections.revoke', { id: aliceToBob });
    await pending(alice, 0);
    expect((await texts(alice, pausedThread.id, 'out')).map((t) => [t.state, t.reason])).toEqual([
      ['failed', 'paused'],
      ['failed', 'revoke'],
    ]);
    expect(await queueUsed(alice, aliceToBob)).toBe(0);
  });
});

describe('incoming texts that ask first (DESIGN §11.9)', () => {
  it('acks the text as usual but gives it to no turn until a person approves; then the agent answers', async () => {
    const { alice, bob, conversation, bobToAlice } = await aliceAndBob();
    await bob.owner('connections.setPolicy', { id: bobToAlice, incoming: 'ask' });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: may I come in?' });
    const aliceThread = await threadUnder(alice, conversation.id);
    // Delivered on alice's side: bob's installation stored it.
    await alice.waitFor(
      async () => (await texts(alice, aliceThread.id, 'out'))[0]?.state === 'acked',
      'the ack from bob',
    );
    const [approval] = await pending(bob, 1);
    expect(approval).toMatchObject({ kind: 'incoming', canDecide: true, text: { seq: 1, preview: 'may I come in?' } });
    const [atBob] = await bob.owner('threads.list', { peerStarted: true });
    expect((await bob.owner('attention.list', {})).items.filter((item) => item.kind === 'held_in')).toMatchObject([
      { object: { kind: 'thread', id: atBob!.id }, peer: 'alice', peerRole: 'assistant', role: 'researcher' },
    ]);
    expect((await texts(bob, atBob!.id, 'in')).map((t) => t.state)).toEqual(['held']);
    expect(atBob!.run).toMatchObject({ state: 'idle', lastTurn: null });

    await bob.owner('approvals.decide', { id: approval!.id, approve: true });
    expect(await message(alice, conversation.id, (b) => b.includes('says:'), 'bob’s answer')).toBe(
      'bob/researcher says: answer from researcher: may I come in?',
    );
    expect((await texts(bob, atBob!.id, 'in')).map((t) => t.state)).toEqual(['handled']);
  });

  it('marks a denied text handled and never gives it to the agent', async () => {
    const { alice, bob, conversation, bobToAlice } = await aliceAndBob();
    await bob.owner('connections.setPolicy', { id: bobToAlice, incoming: 'ask' });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: secret plans?' });
    const [approval] = await pending(bob, 1);
    const [atBob] = await bob.owner('threads.list', { peerStarted: true });
    await bob.owner('approvals.decide', { id: approval!.id, approve: false });
    expect((await texts(bob, atBob!.id, 'in')).map((t) => [t.state, t.reason])).toEqual([['handled', 'denied']]);
    // A second text in the same agent conversation is let in: only it reaches the agent.
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: the weather?' });
    const [next] = await pending(bob, 1);
    await bob.owner('approvals.decide', { id: next!.id, approve: true });
    expect(await message(alice, conversation.id, (b) => b.includes('says:'), 'the answer')).toBe(
      'bob/researcher says: answer from researcher: the weather?',
    );
    const run = findRun(bob.installation.db, { kind: 'thread', id: atBob!.id })!;
    const turns = bob.installation.db.prepare('SELECT id FROM turns WHERE run_id = ?').pluck().all(run.id) as number[];
    const given = turns.flatMap((turn) => turnInputs(bob.installation.db, turn).map((input) => input.body));
    expect(given).toEqual(['the weather?']);
  });

  it('drops a held text when the connection is revoked, and keeps it through a pause', async () => {
    const { alice, bob, conversation, bobToAlice } = await aliceAndBob();
    await bob.owner('connections.setPolicy', { id: bobToAlice, incoming: 'ask' });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: still there?' });
    await pending(bob, 1);
    const [atBob] = await bob.owner('threads.list', { peerStarted: true });
    await bob.owner('connections.pause', { id: bobToAlice });
    expect((await pending(bob, 1))[0]).toMatchObject({ state: 'pending' });
    await bob.owner('connections.revoke', { id: bobToAlice });
    await pending(bob, 0);
    expect((await texts(bob, atBob!.id, 'in')).map((t) => [t.state, t.reason])).toEqual([['handled', 'revoke']]);
  });
});
