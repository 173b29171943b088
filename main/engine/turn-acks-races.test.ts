// Turn states under simultaneous dials (DESIGN §12.5): when both installations dial each
// other at once, the duplicate rule keeps the link dialled by the smaller installation ID
// and closes the other, and frames already on the closed one still arrive. Whatever
// order the two links deliver in, every ask must end at its true state. Two real
// installations over mutual TLS, each behind a proxy of the test's (test-support/hold-proxy.ts)
// where the race needs bytes held on one link while the other carries newer news.
import { afterEach, describe, expect, it } from 'vitest';
import type { ThreadSummary } from '../../shared/domain';
import { HoldProxy } from '../../test-support/hold-proxy';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, openPeersInIdOrder, pair } from '../../test-support/network';

const open: TestInstallation[] = [];
const proxies: HoldProxy[] = [];
afterEach(async () => {
  for (const proxy of proxies.splice(0)) await proxy.close();
  for (const t of open.splice(0)) await t.close();
});

async function peer(name: string): Promise<TestInstallation> {
  const t = await openPeer(name);
  open.push(t);
  return t;
}

/** A proxy in front of `t`, whose address `t` announces from now on. */
async function front(t: TestInstallation): Promise<HoldProxy> {
  const proxy = await HoldProxy.start(t.installation.peerAddress!);
  proxies.push(proxy);
  t.installation.engine.setAddress(proxy.address);
  return proxy;
}

const online = async (t: TestInstallation) => (await t.owner('connections.list', {}))[0]?.online === true;

const pendingAt = (t: TestInstallation) =>
  t.installation.db.prepare('SELECT state FROM turn_signals ORDER BY thread_id').pluck().all() as string[];

describe('turn states when both sides dial at once', { timeout: 90_000 }, () => {
  it('a state left on the link the duplicate rule closes arrives after the newer one: the ask still ends stopped', async () => {
    // bob's ID is the smaller, so the link bob dials wins the duplicate rule at both ends.
    const [bob, alice] = await openPeersInIdOrder('bob', 'alice');
    open.push(bob, alice);
    expect(bob.installation.id < alice.installation.id).toBe(true);
    const atAlice = await front(alice);
    const atBob = await front(bob);
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    await pair(bob, alice, { inviter: ['researcher'] });

    // One link, dialled by alice: bob cannot reach her for now.
    atAlice.refuse(true);
    const before = atBob.accepted;
    atAlice.cut();
    atBob.cut();
    await alice.waitFor(
      async () => atBob.accepted > before && atBob.connections === 1 && (await online(alice)),
      'alice’s new link to bob',
    );
    await bob.waitFor(() => online(bob), 'bob to see alice’s link');
    expect(atAlice.connections).toBe(0);

    // bob's `working` sits on that link, on its way to alice.
    atBob.hold('toDialler');
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: sleep 60' });
    const working = await bob.waitFor(
      async () => (await bob.owner('threads.list', { peerStarted: true })).find((t) => t.run.state === 'running'),
      'bob’s agent to work',
      30_000,
    );
    await bob.waitFor(() => pendingAt(bob).includes('working'), 'bob to keep `working` until alice has it');
    await atBob.waitFor(() => atBob.heldBytes('toDialler') > 0, 'bob’s frames held on alice’s link');

    // bob loses that link (alice does not notice) and dials her: his link wins, she closes hers.
    atAlice.refuse(false);
    atBob.sever('target');
    const asked = (check: (t: ThreadSummary) => boolean, what: string) =>
      alice.waitFor(
        async () =>
          (await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } })).find(check),
        what,
        30_000,
      );
    await asked((t) => t.peerTurn?.state === 'working', '`working` again on bob’s link');
    await alice.waitFor(() => atAlice.connections === 1, 'bob’s link through alice’s proxy');

    // bob's person stops the turn: `stopped` goes on bob's link, and alice records it.
    await bob.owner('threads.stop', { id: working.id });
    const stopped = await asked((t) => t.peerTurn?.state === 'stopped', 'the stop at alice');
    // Only now does the old link deliver what it carried: the older `working`.
    atBob.release('toDialler');
    await alice.waitFor(() => atBob.connections === 0, 'alice’s old link to be gone');
    await bob.waitFor(() => pendingAt(bob).length === 0, 'alice to acknowledge every state bob kept');

    const { thread } = await alice.owner('threads.get', { id: stopped.id });
    expect(thread.peerTurn).toMatchObject({ state: 'stopped', seq: 1 });
  });

  it('four asks while both sides redial at once, again and again, and bob stops three: each ends at its true state', async () => {
    const alice = await peer('alice');
    const bob = await peer('bob');
    await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    const roles: Array<{ id: number }> = [];
    for (let i = 1; i <= 4; i++)
      roles.push(await alice.owner('roles.create', { name: `assistant${i}`, agent: { adapter: 'scripted' } }));
    // alice dials bob by the invitation, bob dials alice by her hello: both dial whenever the link is down.
    await pair(bob, alice, { inviter: ['researcher'] });
    const conversations: Array<{ id: number }> = [];
    for (const [i, role] of roles.entries()) {
      const conversation = await alice.owner('conversations.open', { roleId: role.id });
      conversations.push(conversation);
      // The fourth is answered on its own, in the middle of the redials.
      const ask = i === 3 ? 'sleep 3' : 'sleep 60';
      await alice.owner('conversations.send', { id: conversation.id, text: `ask bob/researcher: ${ask}` });
    }
    const asks = async () =>
      Promise.all(
        conversations.map(
          async (c) => (await alice.owner('threads.list', { root: { kind: 'conversation', id: c.id } }))[0],
        ),
      );
    await alice.waitFor(
      async () => (await asks()).every((t) => t?.peerTurn?.state === 'working'),
      'bob’s agent to work on all four',
      30_000,
    );
    const atBob = await bob.owner('threads.list', { peerStarted: true });
    const stopping = atBob.filter((t) => t.lastText?.body === 'sleep 60');
    expect(stopping).toHaveLength(3);
    for (const thread of stopping) {
      // Both drop the link and dial again at once; bob's person stops a turn meanwhile.
      alice.installation.engine.reconnectAll();
      bob.installation.engine.reconnectAll();
      await bob.owner('threads.stop', { id: thread.id });
      await alice.waitFor(() => online(alice), 'alice back online');
      await bob.waitFor(() => online(bob), 'bob back online');
    }
    const ended = await alice.waitFor(
      async () => {
        const now = await asks();
        const done = now.every((t, i) =>
          i === 3 ? t!.counts.received + t!.counts.handled > 0 : t?.peerTurn?.state === 'stopped',
        );
        return done && pendingAt(bob).length === 0 ? now : undefined;
      },
      'every ask at its end, and nothing left for bob to tell',
      30_000,
    );
    expect(ended.map((t) => t!.peerTurn?.state)).toEqual(['stopped', 'stopped', 'stopped', 'working']);
    // Nothing runs at bob for any of them once the answer's turn is over.
    await bob.waitFor(
      async () => (await bob.owner('threads.list', { peerStarted: true })).every((t) => t.run.state === 'idle'),
      'no agent running at bob',
    );
  });
});
