import { afterEach, describe, expect, it } from 'vitest';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';

describe('ConnectionEngine', () => {
  const open: TestInstallation[] = [];
  afterEach(async () => {
    for (const t of open.splice(0)) await t.close();
  });
  async function peer(name: string) {
    const t = await openPeer(name);
    open.push(t);
    return t;
  }

  it('brings a person’s question to a peer role and its answer back to the asker’s conversation', async () => {
    const alice = await peer('alice');
    const bob = await peer('bob');
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: what is new?' });
    const answer = await alice.waitFor(async () => {
      const messages = (await alice.owner('conversations.get', { id: conversation.id })).messages;
      return messages.find((m) => m.body.startsWith('bob/researcher says:'))?.body;
    }, 'the answer');
    expect(answer).toBe('bob/researcher says: answer from researcher: what is new?');
    const threads = await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } });
    expect(threads).toHaveLength(1);
    expect(threads[0]).toMatchObject({
      startedBy: 'local',
      peerRole: 'researcher',
      localRole: 'assistant',
      status: 'open',
    });
    const bobThreads = await bob.owner('threads.list', { peerStarted: true });
    expect(bobThreads).toHaveLength(1);
    expect(bobThreads[0]!.threadId).toBe(threads[0]!.threadId);
  });
});
