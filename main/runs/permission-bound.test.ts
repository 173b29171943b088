// One agent cannot hide what waits on everyone else (DESIGN §11.9): a member's agent
// asks for a tool 1,010 times in one turn, and afterwards the owner's held text and a
// peer's held text are still in the owner's approvals and attention lists. Real
// installations over mutual TLS, a real agent process asking through the role API.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalView, Person } from '../../shared/domain';
import { projectRoot } from '../paths';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import { PERMISSION_BOUND, permissionBoundReason } from './permission-requests';

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

const asker = {
  adapter: 'command' as const,
  command: [process.execPath, path.join(projectRoot, 'dist', 'testing', 'permission-asker.js')],
};

async function waiting(t: TestInstallation, person: Person, count: number): Promise<ApprovalView[]> {
  return t.waitFor(async () => {
    const list = await t.as(person)('approvals.list', {});
    return list.length === count ? list : undefined;
  }, `${count} approvals waiting on ${person.name}`);
}

describe('the bound on permission requests that wait (pure)', () => {
  it.each([
    [{ turn: 0, run: 0 }, null],
    [{ turn: 7, run: 7 }, null],
    [{ turn: 8, run: 8 }, 'turn'],
    [{ turn: 3, run: 16 }, 'run'],
    [{ turn: 3, run: 15 }, null],
  ] as const)('%o waiting: refused for the %s', (pending, over) => {
    const reason = permissionBoundReason(pending);
    if (over === null) expect(reason).toBeNull();
    else expect(reason).toContain(`already wait for a person in this ${over}`);
  });
});

describe('permission requests cannot starve the approvals list (DESIGN §11.9)', () => {
  it('a member’s agent asking 1,010 times waits on 8 and is told why at once; the owner still sees every held text', async () => {
    const alice = await openPeer('alice', { stopGraceMs: 500 });
    open.push(alice);
    const bob = await openPeer('bob');
    open.push(bob);
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const builder = await alice.owner('roles.create', { name: 'builder', agent: asker });
    const researcher = await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    const ids = await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
    const { person: dave } = await alice.owner('people.add', { name: 'dave', kind: 'member' });
    const owner = (await alice.owner('people.list', {})).find((p) => p.kind === 'owner')!;
    const asDave = alice.as(dave);

    // dave's agent asks for a tool 1,010 times in one turn.
    const daves = await asDave('conversations.open', { roleId: builder.id });
    await asDave('conversations.send', { id: daves.id, text: `1010 times, ${PERMISSION_BOUND.turn} wait: deploy` });
    const report = await alice.waitFor(async () => {
      const { messages } = await asDave('conversations.get', { id: daves.id });
      return messages.find((m) => m.body.startsWith('answered at once'))?.body;
    }, 'the agent to hear that its requests are answered at once');
    expect(report).toBe(
      `answered at once:\n1002 × denied by Parley: nobody was asked: 8 of your permission requests already wait for a person in this turn, the most that may wait at once. Wait for those answers before you ask for more, or do without this tool.`,
    );
    expect(await waiting(alice, dave, 8)).toHaveLength(8);

    // Then the owner's agent sends with `ask` outgoing, and bob's with `ask` incoming at alice.
    await alice.owner('connections.setPolicy', { id: ids.acceptorConnectionId, outgoing: 'ask', incoming: 'ask' });
    const mine = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: mine.id, text: 'ask bob/researcher: the budget?' });
    // Held first, so the list's order (oldest first) is the order they were held in.
    await waiting(alice, owner, 1);
    const bobs = await bob.owner('conversations.open', { roleId: researcher.id });
    await bob.owner('conversations.send', { id: bobs.id, text: 'ask alice/assistant: the plan?' });

    const ownerList = await waiting(alice, owner, 2);
    expect(ownerList.map((a) => [a.kind, a.text?.preview])).toEqual([
      ['outgoing', 'the budget?'],
      ['incoming', 'the plan?'],
    ]);
    const items = (await alice.owner('attention.list', {})).items.filter((item) => item.section === 'waiting');
    expect(items.map((item) => item.kind).sort()).toEqual(['held', 'held_in']);
    // dave reads the peer's held text (a peer-started agent conversation is everyone's), not the owner's.
    const davesList = await waiting(alice, dave, 9);
    expect(davesList.filter((a) => a.kind !== 'permission').map((a) => a.text?.preview)).toEqual(['the plan?']);

    // dave answers the eight; the agent hears each answer and its turn ends.
    for (const request of davesList.filter((a) => a.kind === 'permission'))
      await asDave('approvals.decide', { id: request.id, approve: true });
    const final = await alice.waitFor(async () => {
      const { messages } = await asDave('conversations.get', { id: daves.id });
      return messages.find((m) => m.body.includes('approved by dave'))?.body;
    }, 'the agent’s last word');
    expect(final).toMatch(/^1002 × denied by Parley: nobody was asked: .*\n8 × approved by dave$/);
  });
});
