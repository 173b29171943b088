// A peer's question always gets its answer (DESIGN §11.7), between two real
// installations on loopback: an agent that answers in its final output instead of
// calling `reply` still answers; an answer that came back never replies by itself,
// and the root still shows that it arrived; the budget refuses what is over it with a
// note people can read. The agents are real processes calling the real `parley` CLI.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSettings } from '../../shared/domain';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'parley-reply-guard-'));
  // Asks bob/researcher in a person's conversation or a task; in the agent conversation
  // an answer came back in, it says "noted" and passes nothing on.
  writeFileSync(
    path.join(dir, 'asker.cjs'),
    `
      const { execFileSync } = require('node:child_process');
      let input = '';
      process.stdin.on('data', (d) => (input += d));
      process.stdin.on('end', () => {
        const turn = JSON.parse(input);
        if (turn.context.kind === 'thread') return process.stdout.write('noted');
        const question = turn.inputs.map((i) => i.body).join(' ');
        execFileSync('parley', ['send', '--to', 'bob/researcher', question]);
        process.stdout.write('asked');
      });
    `,
  );
  // Relays every question to carol/analyst and says so; an answer that comes back it
  // only repeats in its final output, reporting nothing.
  writeFileSync(
    path.join(dir, 'relayer.cjs'),
    `
      const { execFileSync } = require('node:child_process');
      let input = '';
      process.stdin.on('data', (d) => (input += d));
      process.stdin.on('end', () => {
        const turn = JSON.parse(input);
        const text = turn.inputs.map((i) => i.body).join(' ');
        if (!turn.context.peerStarted) return process.stdout.write('carol says: ' + text);
        execFileSync('parley', ['send', '--to', 'carol/analyst', text]);
        process.stdout.write('I asked carol/analyst; I will pass the answer on.');
      });
    `,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

/** Answers in its final output only: it never calls `parley reply`. The question is the first line inside the peer text's fence. */
const plainAnswer: AgentSettings = {
  adapter: 'command',
  command: ['sh', '-c', 'line=$(sed -n "/^<<<peer-text-/{n;p;q;}"); echo "the answer to $line is 42"'],
};
const asker = (): AgentSettings => ({
  adapter: 'command',
  command: [process.execPath, path.join(dir, 'asker.cjs')],
  input: 'json',
});

async function setUp(
  alicesAgent: AgentSettings,
  bobsAgent: AgentSettings,
  bobOptions: Parameters<typeof openPeer>[1] = {},
) {
  const alice = await openPeer('alice');
  const bob = await openPeer('bob', bobOptions);
  open.push(alice, bob);
  const assistant = await alice.owner('roles.create', { name: 'assistant', agent: alicesAgent });
  await bob.owner('roles.create', { name: 'researcher', agent: bobsAgent });
  await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
  const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
  return { alice, bob, assistant, conversation };
}

async function bodies(t: TestInstallation, id: number) {
  return (await t.owner('conversations.get', { id })).messages.map((m) => `${m.author.kind}: ${m.body}`);
}

/** Waits until the agent conversation's run has ended `count` turns. */
async function turnsEnded(t: TestInstallation, threadId: number, count: number) {
  return t.waitFor(async () => {
    const detail = await t.owner('threads.get', { id: threadId });
    const ended = detail.turns.filter((turn) => turn.status !== 'running');
    return ended.length >= count && detail.thread.run.state === 'idle' ? detail : undefined;
  }, `${count} turns to end`);
}

describe('the reply guard (DESIGN §11.7)', () => {
  it('sends the final output of a turn that did not reply, in an agent conversation the peer started', async () => {
    const { alice, bob, conversation } = await setUp({ adapter: 'scripted' }, plainAnswer);
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: life' });
    const answer = await alice.waitFor(async () => {
      const all = await bodies(alice, conversation.id);
      return all.find((b) => b.includes('says:'));
    }, 'the answer from bob');
    expect(answer).toBe('role: bob/researcher says: the answer to life is 42');
    const [thread] = await bob.owner('threads.list', { peerStarted: true });
    const detail = await turnsEnded(bob, thread!.id, 1);
    expect(detail.texts.map((t) => [t.direction, t.body])).toEqual([
      ['in', 'life'],
      ['out', 'the answer to life is 42'],
    ]);
    expect(detail.runLog.map((entry) => entry.output)).toEqual(['the answer to life is 42']);
  }, 60_000);

  it('never replies by itself in an answer that came back, and the person’s conversation shows the answer arrived', async () => {
    const { alice, bob, conversation } = await setUp(asker(), { adapter: 'scripted' });
    await alice.owner('conversations.send', { id: conversation.id, text: 'the budget' });
    const line = await alice.waitFor(async () => {
      const all = await bodies(alice, conversation.id);
      return all.find((b) => b.startsWith('system: bob/researcher answered'));
    }, 'the note that the answer arrived');
    expect(line).toBe('system: bob/researcher answered (see the agent conversation)');
    const [mine] = await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } });
    const detail = await turnsEnded(alice, mine!.id, 1);
    // "noted" stayed in the run log: nothing went back to bob.
    expect(detail.runLog.map((entry) => entry.output)).toEqual(['noted']);
    expect(detail.texts.map((t) => [t.direction, t.body])).toEqual([
      ['out', 'the budget'],
      ['in', 'answer from researcher: the budget'],
    ]);
    const [theirs] = await bob.owner('threads.list', { peerStarted: true });
    expect((await bob.owner('threads.get', { id: theirs!.id })).texts).toHaveLength(2);
    expect(await bodies(alice, conversation.id)).toEqual([
      'person: the budget',
      'role: asked',
      'system: bob/researcher answered (see the agent conversation)',
    ]);
  }, 60_000);

  it('shows an answer that arrived for a task in the task’s log', async () => {
    const { alice, assistant } = await setUp(asker(), { adapter: 'scripted' });
    const task = await alice.owner('tasks.create', { roleId: assistant.id, title: 'numbers', body: 'for Q3' });
    const log = await alice.waitFor(async () => {
      const entries = (await alice.owner('tasks.get', { id: task.id })).log;
      return entries.some((e) => e.body.startsWith('bob/researcher answered')) ? entries : undefined;
    }, 'the note in the task log');
    expect(log.map((e) => [e.kind, e.author.kind, e.body]).slice(-2)).toEqual([
      ['output', 'role', 'asked'],
      ['notice', 'system', 'bob/researcher answered (see the agent conversation)'],
    ]);
  }, 60_000);

  it('sends nothing by itself for a turn that relayed the question; the answer comes back down the chain', async () => {
    const relayer: AgentSettings = {
      adapter: 'command',
      command: [process.execPath, path.join(dir, 'relayer.cjs')],
      input: 'json',
    };
    const { alice, bob, conversation } = await setUp({ adapter: 'scripted' }, relayer);
    const carol = await openPeer('carol');
    open.push(carol);
    await carol.owner('roles.create', { name: 'analyst', agent: plainAnswer });
    await pair(carol, bob, { inviter: ['analyst'], acceptor: [] });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: numbers' });
    const answer = await alice.waitFor(async () => {
      const all = await bodies(alice, conversation.id);
      return all.find((b) => b.includes('says:'));
    }, 'the answer from carol, through bob');
    // Bob's answer-thread reported nothing: its final output went on to alice, the root's asker.
    expect(answer).toBe('role: bob/researcher says: carol says: the answer to numbers is 42');
    const [fromAlice] = await bob.owner('threads.list', { peerStarted: true });
    const detail = await turnsEnded(bob, fromAlice!.id, 1);
    // What bob's relaying turn said stayed in its run log: alice never learnt about carol.
    expect(detail.runLog.map((entry) => entry.output)).toEqual(['I asked carol/analyst; I will pass the answer on.']);
    expect(detail.texts.map((t) => [t.direction, t.body])).toEqual([
      ['in', 'numbers'],
      ['out', 'carol says: the answer to numbers is 42'],
    ]);
    expect((await bodies(alice, conversation.id)).join('\n')).not.toContain('asked carol');
  }, 60_000);

  it('keeps to the budget: a reply over it is not sent, and the run log says why', async () => {
    const { alice, bob, conversation } = await setUp({ adapter: 'scripted' }, plainAnswer, { textBudgetPerHour: 1 });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: one' });
    await alice.waitFor(
      async () => (await bodies(alice, conversation.id)).some((b) => b.includes('says:')),
      'answer 1',
    );
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: two' });
    const [thread] = await bob.owner('threads.list', { peerStarted: true });
    const detail = await bob.waitFor(async () => {
      const d = await bob.owner('threads.get', { id: thread!.id });
      return d.runLog.length === 2 && d.runLog[1]!.output.includes('[Parley') ? d : undefined;
    }, 'the second turn’s note');
    expect(detail.turns.map((turn) => turn.status)).toEqual(['done', 'done']);
    expect(detail.runLog[1]!.output).toBe(
      'the answer to two is 42\n\n[Parley did not send this as the reply: this agent conversation has sent 1 texts in the last hour, its limit; wait, or tell a person what you need]',
    );
    expect(detail.texts.filter((t) => t.direction === 'out').map((t) => t.body)).toEqual(['the answer to one is 42']);
    // Bob is still up and his agent conversation still answers the other way round.
    expect((await bob.owner('threads.list', { peerStarted: true })).length).toBe(1);
  }, 60_000);
});
