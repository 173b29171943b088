// ADR 0035's story in six scenes, told by three installations: each scene acts through the
// app API as a person would and checks what every side then shows.
import { processAlive } from '../../main/runs/process-tree';
import { agentPids } from '../../test-support/processes';
import { act, agentAtWork, createRole, messageIn, ok, pair, say, settle, thread, until, type Node } from './cast';
import {
  describeConnection,
  describeTexts,
  describeThread,
  expectNow,
  heading,
  quote,
  short,
  stateOf,
} from './transcript';

export async function play(nodes: { alice: Node; bob: Node; carol: Node }): Promise<void> {
  const { alice, bob, carol } = nodes;
  const all = [alice, bob, carol];

  heading('Setup: roles and pairing');
  const assistant = await createRole(alice, 'assistant', "alice's assistant");
  await createRole(bob, 'researcher', "bob's researcher");
  await createRole(carol, 'analyst', "carol's analyst");
  const aliceBob = await pair(bob, ['researcher'], alice, ['assistant']);
  const bobsConnectionToAlice = aliceBob.inviterSide;
  await pair(carol, ['analyst'], bob, []);
  await settle(all);

  heading("1. A person's question: alice asks bob/researcher, the answer comes back to her conversation");
  const conversation = await alice.client.call('conversations.open', { roleId: assistant.id });
  await say(alice, conversation, 'ask bob/researcher: what is new?');
  await messageIn(alice, conversation.id, 'bob/researcher says: answer from researcher: what is new?');
  const aliceThread = await until(
    alice,
    "one agent conversation under alice's conversation: question acked, answer handled",
    async () => {
      const list = await alice.client.call('threads.list', { root: { kind: 'conversation', id: conversation.id } });
      const t = list[0];
      return [
        list.length === 1 && t && t.counts.acked === 1 && t.counts.handled === 1 && t,
        list.map(describeThread).join('; '),
      ];
    },
  );
  const bobThread = await until(
    bob,
    `the same agent conversation (${short(aliceThread.threadId)}) as one alice started`,
    async () => {
      const list = await bob.client.call('threads.list', { peerStarted: true });
      const t = list.find((x) => x.threadId === aliceThread.threadId);
      return [t && t.counts.handled === 1 && t.counts.acked === 1 && t, list.map(describeThread).join('; ') || 'none'];
    },
  );
  expectNow(
    bobThread.startedBy === 'peer' && bobThread.root.kind === 'thread' && bobThread.root.id === bobThread.id,
    `bob's thread ${short(bobThread.threadId)} to be peer-started and its own root`,
    describeThread(bobThread),
  );
  await settle(all);
  ok(alice, `the answer is in conversation #${conversation.id}`);
  ok(
    null,
    `thread ${short(aliceThread.threadId)}: at alice rooted in conversation #${conversation.id}, at bob started by alice (its own root); texts acked/handled on both sides`,
  );

  heading('2. A relay: bob/researcher asks carol/analyst for alice, the answer comes back down the chain');
  await say(alice, conversation, 'ask bob/researcher: ask carol/analyst: numbers?');
  await messageIn(alice, conversation.id, 'bob/researcher says: carol/analyst says: answer from analyst: numbers?');
  const bobToCarol = await until(
    bob,
    `an agent conversation with carol/analyst rooted in thread ${short(bobThread.threadId)}`,
    async () => {
      const list = await bob.client.call('threads.list', { root: { kind: 'thread', id: bobThread.id } });
      const t = list.find((x) => x.peerRole === 'analyst' && x.startedBy === 'local');
      return [t && t.counts.acked === 1 && t.counts.handled === 1 && t, list.map(describeThread).join('; ') || 'none'];
    },
  );
  const carolThread = await until(carol, `thread ${short(bobToCarol.threadId)} as one bob started`, async () => {
    const list = await carol.client.call('threads.list', { peerStarted: true });
    const t = list.find((x) => x.threadId === bobToCarol.threadId);
    return [t && t.run.state === 'idle' && t.counts.acked === 1 && t, list.map(describeThread).join('; ') || 'none'];
  });
  const carolTexts = (await thread(carol, carolThread.id)).texts;
  expectNow(!carolTexts.some((t) => /alice/i.test(t.body)), 'nothing about alice at carol', describeTexts(carolTexts));
  const underConversation = await alice.client.call('threads.list', {
    root: { kind: 'conversation', id: conversation.id },
  });
  expectNow(
    underConversation.length === 1 && underConversation[0]!.id === aliceThread.id,
    `alice's second question to bob/researcher in the same thread ${short(aliceThread.threadId)}`,
    underConversation.map(describeThread).join('; '),
  );
  await settle(all);
  ok(alice, 'the relayed answer is in her conversation');
  ok(
    null,
    `chain: alice ${short(aliceThread.threadId)} -> bob, bob ${short(bobToCarol.threadId)} (rooted in ${short(bobThread.threadId)}) -> carol; carol sees a thread bob started and nothing about alice`,
  );

  heading('3. A stop: bob stops the agent working on a long request');
  await say(alice, conversation, 'ask bob/researcher: sleep 30');
  const working = await agentAtWork(bob, 'researcher', bobThread, 'sleep 30');
  act(bob, `owner stops the agent of thread ${short(bobThread.threadId)} (threads.stop)`);
  const stopped = await bob.client.call('threads.stop', { id: bobThread.id });
  expectNow(stopped.stopped, 'threads.stop to answer {stopped: true}', JSON.stringify(stopped));
  const afterStop = await thread(bob, bobThread.id);
  const lastTurn = afterStop.turns.at(-1);
  expectNow(
    lastTurn?.status === 'stopped' && lastTurn.reason === `Stopped by ${bob.owner.name}`,
    `the last turn stopped by ${bob.owner.name}`,
    JSON.stringify(lastTurn),
  );
  const alive = working.filter((pid) => processAlive(pid));
  expectNow(
    alive.length === 0 && agentPids(bob.serve.process.pid!).length === 0,
    'no agent process left at bob',
    `alive: [${alive.join(', ')}]`,
  );
  const dropped = afterStop.texts.find((t) => t.direction === 'in' && t.body === 'sleep 30');
  expectNow(
    dropped?.state === 'handled',
    '"sleep 30" to count as handled (dropped, not retried)',
    dropped ? stateOf(dropped) : 'missing',
  );
  expectNow(afterStop.thread.run.state === 'idle', 'the run idle', afterStop.thread.run.state);
  await settle(all);
  ok(
    bob,
    `turn stopped (${lastTurn.reason}); process ${working.join(', ')} gone; "sleep 30" handled, not retried; run idle`,
  );

  heading('4. A pause, told: bob pauses the connection to alice; alice hears of it, her assistant is refused at home');
  act(bob, 'owner pauses the connection to alice');
  const paused = await bob.client.call('connections.pause', { id: bobsConnectionToAlice });
  expectNow(
    paused.status === 'paused' && paused.online,
    'the connection paused and still online',
    describeConnection(paused),
  );
  const told = await until(alice, "bob's pause told to her (a status frame)", async () => {
    const c = (await alice.client.call('connections.list', {})).find((x) => x.name === bob.name);
    return [c?.peerPausedAt ? c.peerPausedAt : undefined, c ? describeConnection(c) : 'no connection to bob'];
  });
  ok(alice, `bob's pause was told: connection bob paused by bob since ${told}`);
  const textsBefore = (await thread(alice, aliceThread.id)).texts.length;
  await say(alice, conversation, 'ask bob/researcher: are you there?');
  const refusal = await until(alice, 'her assistant refused at once with paused', async () => {
    const { messages } = await alice.client.call('conversations.get', { id: conversation.id });
    const found = messages.find((m) => m.body.startsWith(`error: ${bob.name} has paused the connection`));
    return [found?.body, messages.map((m) => `${m.author.name}: ${quote(m.body)}`).join(' / ')];
  });
  const afterRefusal = await thread(alice, aliceThread.id);
  const atBob = await thread(bob, bobThread.id);
  expectNow(
    afterRefusal.texts.length === textsBefore && !atBob.texts.some((t) => t.body === 'are you there?'),
    'no text of it at alice or at bob: nothing went on the wire',
    `${describeTexts(afterRefusal.texts)} / bob: ${describeTexts(atBob.texts)}`,
  );
  await settle(all);
  ok(alice, `her assistant was refused at home: ${quote(refusal)}; nothing went out`);
  act(bob, 'owner unpauses the connection to alice');
  const unpaused = await bob.client.call('connections.unpause', { id: bobsConnectionToAlice });
  expectNow(unpaused.status === 'active', 'the connection active again', describeConnection(unpaused));
  await until(alice, "bob's unpause told to her", async () => {
    const c = (await alice.client.call('connections.list', {})).find((x) => x.name === bob.name);
    return [c?.peerPausedAt === null, c ? describeConnection(c) : 'no connection to bob'];
  });
  // Give anything that would wrongly restart a moment to do so.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const afterUnpause = await thread(bob, bobThread.id);
  expectNow(
    afterUnpause.thread.run.state === 'idle' &&
      afterUnpause.thread.run.pending === 0 &&
      afterUnpause.turns.length === afterStop.turns.length &&
      agentPids(bob.serve.process.pid!).length === 0,
    "after unpause: bob's run idle with nothing pending and no new turn, no agent process",
    `bob run ${JSON.stringify(afterUnpause.thread.run)}, turns ${afterStop.turns.length} -> ${afterUnpause.turns.length}`,
  );
  await settle(all);
  ok(bob, 'unpaused: nothing restarted, nothing resent');

  heading("5. A withdrawal down the chain: alice takes back a relayed ask while carol's analyst works on it");
  await say(alice, conversation, 'ask bob/researcher: ask carol/analyst: sleep 30');
  const carolPids = await agentAtWork(carol, 'analyst', carolThread, 'sleep 30');
  act(
    alice,
    `${alice.owner.name} (person) withdraws the ask of thread ${short(aliceThread.threadId)} (threads.withdraw)`,
  );
  await alice.client.call('threads.withdraw', { id: aliceThread.id });
  const carolStopped = await until(
    carol,
    `analyst's turn stopped as withdrawn by ${bob.name}, its process gone`,
    async () => {
      const detail = await thread(carol, carolThread.id);
      const last = detail.turns.at(-1);
      const gone = carolPids.every((pid) => !processAlive(pid));
      return [
        last?.status === 'stopped' && last.reason === `Withdrawn by ${bob.name}` && gone && detail,
        `last turn ${JSON.stringify(last)}, processes alive: [${carolPids.filter((pid) => processAlive(pid)).join(', ')}]`,
      ];
    },
  );
  const bobHop = await until(bob, `both hops withdrawn at bob, carol's confirmation in`, async () => {
    const fromAlice = (await thread(bob, bobThread.id)).thread;
    const toCarol = (await thread(bob, bobToCarol.id)).thread;
    return [
      fromAlice.withdrawn?.by === alice.name && toCarol.withdrawn?.told && { fromAlice, toCarol },
      `from alice: ${JSON.stringify(fromAlice.withdrawn)}; to carol: ${JSON.stringify(toCarol.withdrawn)}`,
    ];
  });
  const aliceSide = await until(alice, "bob's confirmation of her withdrawal", async () => {
    const t = (await thread(alice, aliceThread.id)).thread;
    return [t.withdrawn?.told && t, JSON.stringify(t.withdrawn)];
  });
  await settle(all);
  ok(
    null,
    `withdrawn down the chain: alice ${short(aliceThread.threadId)} (by ${aliceSide.withdrawn!.by}) -> bob ${short(bobHop.fromAlice.threadId)} (by ${bobHop.fromAlice.withdrawn!.by}) -> bob ${short(bobHop.toCarol.threadId)} -> carol ${short(carolThread.threadId)} (its turn ${carolStopped.turns.at(-1)!.status}: ${carolStopped.turns.at(-1)!.reason}); each hop confirmed`,
  );

  heading(
    "6. A root deletion: alice deletes her conversation while bob works; its open ask is withdrawn and bob's agent stops",
  );
  const turnsBefore = new Set((await thread(bob, bobThread.id)).turns.map((t) => t.id));
  await say(alice, conversation, 'ask bob/researcher: sleep 8');
  await until(bob, `researcher working on "sleep 8" in thread ${short(bobThread.threadId)}`, async () => {
    const detail = await thread(bob, bobThread.id);
    const turn = detail.turns.find((t) => !turnsBefore.has(t.id));
    const text = detail.texts.find((t) => t.direction === 'in' && t.body === 'sleep 8');
    return [
      turn?.status === 'running' && text,
      `turns ${JSON.stringify(detail.turns.map((t) => t.status))}, ${describeTexts(detail.texts)}`,
    ];
  });
  act(alice, `${alice.owner.name} (person) deletes conversation #${conversation.id}`);
  await alice.client.call('conversations.delete', { id: conversation.id });
  const orphaned = await alice.client.call('threads.list', { orphaned: true });
  const closedAtAlice = orphaned.find((t) => t.id === aliceThread.id);
  expectNow(
    closedAtAlice?.status === 'closed' && closedAtAlice.closeReason === 'root deleted' && closedAtAlice.root.gone,
    `alice's thread ${short(aliceThread.threadId)} closed (root deleted), its root gone, readable by owners`,
    orphaned.map(describeThread).join('; ') || 'no orphaned threads',
  );
  ok(alice, `thread ${short(aliceThread.threadId)} closed with its root; history kept`);
  const stoppedAtBob = await until(
    bob,
    `researcher's turn on "sleep 8" stopped as withdrawn by ${alice.name}`,
    async () => {
      const detail = await thread(bob, bobThread.id);
      const turn = detail.turns.find((t) => !turnsBefore.has(t.id));
      return [
        turn?.status === 'stopped' &&
          turn.reason === `Withdrawn by ${alice.name}` &&
          detail.thread.run.state === 'idle' &&
          turn,
        `turns ${JSON.stringify(detail.turns.map((t) => [t.status, t.reason]))}; ${describeThread(detail.thread)}`,
      ];
    },
  );
  await settle(all);
  ok(
    bob,
    `researcher's turn on "sleep 8" stopped (${stoppedAtBob.reason}): nothing more is done for a deleted conversation`,
  );
}
