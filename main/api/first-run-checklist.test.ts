// The home page's first-run checklist on real installations: each step ticks from what
// the installation holds — the default role's agent answered, a connection exists, a
// role asked a peer for the person — and hiding it is each person's own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Person } from '../../shared/domain';
import { assertBuilt } from '../paths';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';

let alice: TestInstallation;
let bob: TestInstallation;
let member: Person;

beforeAll(async () => {
  assertBuilt();
  // Nothing to detect here: the default role falls back to the scripted agent.
  [alice, bob] = await Promise.all([
    openPeer('alice', { defaultRole: { path: '', probeUrl: 'http://127.0.0.1:9/v1', probeTimeoutMs: 200 } }),
    openPeer('bob'),
  ]);
  await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
  member = (await alice.owner('people.add', { name: 'dana', kind: 'member' })).person;
}, 60_000);
afterAll(async () => {
  await Promise.all([alice?.close(), bob?.close()]);
});

const state = () => alice.owner('firstRun.get', {});

describe('the first-run checklist', () => {
  it('starts with nothing done and names the role first run made, with what it found', async () => {
    expect(await state()).toEqual({
      offered: true,
      dismissed: false,
      role: expect.objectContaining({ name: 'assistant', description: '', agent: { adapter: 'scripted' } }) as object,
      detected: { adapter: 'scripted', found: expect.stringContaining('no claude, codex or ACP agent') as string },
      steps: { agent: false, connect: false, ask: false },
    });
  });

  it('ticks each step from what happened, in any order', async () => {
    const { role } = await state();
    const conversation = await alice.owner('conversations.open', { roleId: role!.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'hello' });
    await alice.waitFor(async () => (await state()).steps.agent, 'the agent step');
    expect((await state()).steps).toEqual({ agent: true, connect: false, ask: false });

    await pair(bob, alice, { inviter: ['researcher'] });
    expect((await state()).steps).toEqual({ agent: true, connect: true, ask: false });

    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: is it raining?' });
    await alice.waitFor(async () => (await state()).steps.ask, 'the ask step');
    // An ask is the person's own: a member has not asked anything yet.
    expect((await alice.as(member)('firstRun.get', {})).steps).toEqual({ agent: true, connect: true, ask: false });
  });

  it('is hidden for the person who dismissed it, and only for them', async () => {
    expect((await alice.owner('firstRun.dismiss', {})).dismissed).toBe(true);
    expect((await state()).dismissed).toBe(true);
    expect((await alice.owner('firstRun.dismiss', {})).dismissed).toBe(true);
    expect((await alice.as(member)('firstRun.get', {})).dismissed).toBe(false);
  });

  it('falls back to the first role when the one first run made is gone', async () => {
    const { role } = await state();
    const other = await alice.owner('roles.create', { name: 'writer', agent: { adapter: 'scripted' } });
    await alice.owner('roles.remove', { id: role!.id });
    expect(await state()).toMatchObject({ role: { id: other.id, name: 'writer' }, detected: null });
    expect((await state()).steps.agent).toBe(false);
  });
});
