// An agent's request to use a tool waits for a person (DESIGN §11.9), in the same place
// as held texts: a real installation, a real agent process asking through the role API
// with its turn's token (as the acp worker does), a person deciding through the app API.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalView, Person } from '../../shared/domain';
import { projectRoot } from '../paths';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

const asker = {
  adapter: 'command' as const,
  command: [process.execPath, path.join(projectRoot, 'dist', 'testing', 'permission-asker.js')],
};

async function setup(options: Parameters<typeof openTestInstallation>[0] = {}) {
  const t = await openTestInstallation({ stopGraceMs: 500, ...options });
  open.push(t);
  const role = await t.owner('roles.create', { name: 'builder', agent: asker });
  const { person: dave } = await t.owner('people.add', { name: 'dave', kind: 'member' });
  const asDave = t.as(dave);
  const conversation = await asDave('conversations.open', { roleId: role.id });
  return { t, role, dave, asDave, conversation };
}

async function waiting(t: TestInstallation, person: Person, count = 1): Promise<ApprovalView[]> {
  return t.waitFor(async () => {
    const list = await t.as(person)('approvals.list', {});
    return list.length === count ? list : undefined;
  }, `${count} requests waiting`);
}

async function agentSaid(t: TestInstallation, person: Person, conversationId: number, what: RegExp) {
  return t.waitFor(async () => {
    const { messages } = await t.as(person)('conversations.get', { id: conversationId });
    return messages.find((m) => m.author.kind === 'role' && what.test(m.body))?.body;
  }, `the agent to say ${what}`);
}

describe('permission requests (DESIGN §11.9)', () => {
  it('wait for the person of the conversation; approved, the agent hears who approved', async () => {
    const { t, dave, asDave, conversation } = await setup();
    await asDave('conversations.send', { id: conversation.id, text: 'npm test' });
    const [request] = await waiting(t, dave);
    expect(request).toMatchObject({
      kind: 'permission',
      title: 'npm test',
      detail: { toolKind: 'execute', input: 'npm test (asked by a test agent)' },
      context: { kind: 'conversation', id: conversation.id },
      role: 'builder',
      canDecide: true,
      thread: null,
      text: null,
    });
    // The owner cannot read dave's conversation, so not what waits in it either.
    expect(await t.owner('approvals.list', {})).toEqual([]);
    await expect(t.owner('approvals.decide', { id: request!.id, approve: true })).rejects.toMatchObject({
      code: 'not_found',
    });
    const decided = await asDave('approvals.decide', { id: request!.id, approve: true });
    expect(decided).toMatchObject({ state: 'approved', decidedBy: 'dave' });
    expect(await agentSaid(t, dave, conversation.id, /by dave/)).toBe('approved by dave');
    expect(await asDave('approvals.list', {})).toEqual([]);
  });

  it('answers a denial to the agent', async () => {
    const { t, dave, asDave, conversation } = await setup();
    await asDave('conversations.send', { id: conversation.id, text: 'rm -rf build' });
    const [request] = await waiting(t, dave);
    await asDave('approvals.decide', { id: request!.id, approve: false });
    expect(await agentSaid(t, dave, conversation.id, /by dave/)).toBe('denied by dave');
  });

  it('is cancelled by Stop, and then cannot be decided', async () => {
    const { t, dave, asDave, conversation } = await setup();
    await asDave('conversations.send', { id: conversation.id, text: 'deploy' });
    const [request] = await waiting(t, dave);
    expect(await asDave('conversations.stop', { id: conversation.id })).toEqual({ stopped: true });
    await waiting(t, dave, 0);
    await expect(asDave('approvals.decide', { id: request!.id, approve: true })).rejects.toMatchObject({
      code: 'conflict',
      message: 'this no longer waits: Stopped by dave',
    });
  });

  it('is cancelled when nobody answers in time, and the agent hears why', async () => {
    const { t, dave, asDave, conversation } = await setup({ permissionTimeoutMs: 1_000 });
    await asDave('conversations.send', { id: conversation.id, text: 'format the disk' });
    expect(await agentSaid(t, dave, conversation.id, /^cancelled/)).toBe('cancelled: nobody answered within 1 s');
  });

  it('from before a restart waits for nobody: it is cancelled, and the turn run again asks anew', async () => {
    const first = await setup();
    await first.asDave('conversations.send', { id: first.conversation.id, text: 'migrate' });
    const [before] = await waiting(first.t, first.dave);
    open.splice(open.indexOf(first.t), 1);
    const t = await first.t.restart({ stopGraceMs: 500 });
    open.push(t);
    const [after] = await waiting(t, first.dave);
    expect(after!.id).not.toBe(before!.id);
    const old = t.installation.db.prepare('SELECT state, reason FROM approvals WHERE id = ?').get(before!.id);
    expect(old).toEqual({ state: 'cancelled', reason: 'Parley restarted' });
  });
});
