import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiError } from '../shared/api-contract';
import { groupAlive, processAlive } from './runs/process-tree';
import type { ApiClient } from '../test-support/api-client';
import { agentPids } from '../test-support/processes';
import type { ServeInfo } from './serve';
import { removeDataDir, startServe, type ServeProcess } from '../test-support/serve-process';

async function expectApiError(promise: Promise<unknown>, codes: string[]): Promise<ApiError> {
  const error = (await promise.then(
    () => {
      throw new Error(`expected an error with code ${codes.join(' or ')}`);
    },
    (e: unknown) => e,
  )) as ApiError;
  expect(codes).toContain(error.code);
  return error;
}

describe('parley serve', () => {
  let server: ServeProcess;
  let owner: ApiClient;
  let conversationId: number;

  beforeAll(async () => {
    server = await startServe({ name: 'alice' });
    owner = await server.connect();
    const role = await owner.call('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    conversationId = (await owner.call('conversations.open', { roleId: role.id })).id;
  });

  afterAll(async () => {
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  const lastRoleMessage = async () => {
    const detail = await owner.call('conversations.get', { id: conversationId });
    return detail.messages.filter((m) => m.author.kind === 'role').at(-1);
  };

  it('writes serve.json, readable only by the user, with every address and the owner token', () => {
    const file = path.join(server.dataDir, 'serve.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const info = JSON.parse(readFileSync(file, 'utf8')) as ServeInfo;
    expect(info.ui).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(info.api).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/api$/);
    expect(info.token).toMatch(/^pst_/);
    expect(info.pid).toBe(server.process.pid);
    expect(statSync(info.roleApi).mode & 0o777).toBe(0o600);
  });

  it('gets the scripted role’s reply to hello', async () => {
    await owner.call('conversations.send', { id: conversationId, text: 'hello' });
    const reply = await owner.waitFor(
      async () => (await lastRoleMessage())?.body === 'echo: hello',
      15_000,
      'echo: hello',
    );
    expect(reply).toBe(true);
  });

  it('stops a sleeping agent: its process tree is gone within 2 s and the turn is stopped', async () => {
    await owner.call('conversations.send', { id: conversationId, text: 'sleep 30' });
    const pid = await owner.waitFor(
      () => Promise.resolve(agentPids(server.process.pid!)[0]),
      15_000,
      'the agent process',
    );
    const started = Date.now();
    const result = await owner.call('conversations.stop', { id: conversationId });
    const elapsed = Date.now() - started;
    expect(result.stopped).toBe(true);
    expect(groupAlive(pid)).toBe(false);
    expect(processAlive(pid)).toBe(false);
    expect(elapsed).toBeLessThan(2000);
    const detail = await owner.call('conversations.get', { id: conversationId });
    expect(detail.turns.at(-1)?.status).toBe('stopped');
    expect(detail.conversation.run.state).toBe('idle');
  });

  it('tells the next turn it was stopped, and carries on', async () => {
    await owner.call('conversations.send', { id: conversationId, text: 'hi' });
    const reply = await owner.waitFor(async () => {
      const last = await lastRoleMessage();
      return last?.body.includes('echo: hi') ? last.body : undefined;
    });
    // The stop is said in Parley's words, never repeated as the agent's reply.
    expect(reply).toBe('echo: hi');
  });

  it('keeps a member out of the owner’s conversation', async () => {
    const { token } = await owner.call('people.add', { name: 'bob', kind: 'member' });
    const member = await server.connect(token);
    await expectApiError(member.call('conversations.get', { id: conversationId }), ['forbidden', 'not_found']);
    await expectApiError(member.call('conversations.send', { id: conversationId, text: 'hi' }), [
      'forbidden',
      'not_found',
    ]);
  });

  it('refuses malformed params with `invalid` and changes nothing', async () => {
    const before = await owner.call('conversations.get', { id: conversationId });
    const rolesBefore = await owner.call('roles.list', {});
    await expectApiError(owner.raw('conversations.send', { id: conversationId, text: 42 }), ['invalid']);
    await expectApiError(owner.raw('conversations.send', { id: 'one', text: 'x' }), ['invalid']);
    await expectApiError(owner.raw('roles.create', { name: 'Bad Name!', agent: { adapter: 'scripted' } }), ['invalid']);
    await expectApiError(owner.raw('roles.create', { name: 'worker', agent: { adapter: 'command', command: [] } }), [
      'invalid',
    ]);
    await expectApiError(owner.raw('people.add', { name: 'x', kind: 'admin', extra: true }), ['invalid']);
    const after = await owner.call('conversations.get', { id: conversationId });
    expect(after.messages).toEqual(before.messages);
    expect(await owner.call('roles.list', {})).toEqual(rolesBefore);
  });
});
