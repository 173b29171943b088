// A session is bound to the sign-in token it used (DESIGN §11.1), tried the way a person
// would meet it: `parley serve` as a real child process, people on real WebSockets.
// Removing a person, or replacing their token, ends every socket of theirs at once, and
// no later person, owner or not, ever inherits one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, SESSION_ENDED_CLOSE_CODE, type AppEvent } from '../../shared/api-contract';
import type { ApiClient } from '../../test-support/api-client';
import { removeDataDir, startServe, type ServeProcess } from '../../test-support/serve-process';

/** The call's ApiError code, or `closed` when the socket is gone; fails if the call was allowed. */
async function refusedWith(promise: Promise<unknown>): Promise<string> {
  try {
    const result = await promise;
    throw new Error(`expected a refusal, got ${JSON.stringify(result)}`);
  } catch (error) {
    if (error instanceof ApiError) return error.code;
    if ((error as Error).message === 'socket closed') return 'closed';
    throw error;
  }
}

describe('sessions bound to their sign-in token', () => {
  let server: ServeProcess;
  let owner: ApiClient;
  let roleId: number;

  beforeAll(async () => {
    server = await startServe({ name: 'alice' });
    owner = await server.connect();
    roleId = (await owner.call('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } })).id;
  }, 30_000);

  afterAll(async () => {
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  it('closes every socket of a removed member at once, and the next owner added never inherits them', async () => {
    const bob = await owner.call('people.add', { name: 'bob', kind: 'member' });
    const first = await server.connect(bob.token);
    const second = await server.connect(bob.token);
    await first.call('conversations.open', { roleId });
    const heard: AppEvent[] = [];
    first.onEvent((event) => heard.push(event));
    const ownerHeard: AppEvent[] = [];
    owner.onEvent((event) => ownerHeard.push(event));

    await owner.call('people.remove', { id: bob.person.id });
    // The newest person was removed; the next one added is an owner with a conversation of their own.
    const eve = await owner.call('people.add', { name: 'eve', kind: 'owner' });
    const eveClient = await server.connect(eve.token);
    const eveConversation = await eveClient.call('conversations.open', { roleId });
    await eveClient.call('conversations.send', { id: eveConversation.id, text: 'for eve only' });

    // Neither of bob's sockets speaks for anyone any more: not as bob, not as eve.
    for (const socket of [first, second]) {
      expect(await refusedWith(socket.call('session.whoami', {}))).toBe('closed');
      expect(await refusedWith(socket.call('people.add', { name: 'sneaky', kind: 'owner' }))).toBe('closed');
      expect(await refusedWith(socket.call('roles.token', { id: roleId }))).toBe('closed');
      expect(await refusedWith(socket.call('conversations.get', { id: eveConversation.id }))).toBe('closed');
      expect(await socket.closed).toEqual({
        code: SESSION_ENDED_CLOSE_CODE,
        reason: 'you were removed from this installation',
      });
    }
    // Ids are never handed out again (DESIGN §11.1).
    expect(eve.person.id).toBeGreaterThan(bob.person.id);
    // The removal was told to everyone still here, and never to bob's socket.
    await owner.waitFor(
      () =>
        Promise.resolve(ownerHeard.some((e) => e.type === 'changed' && e.kind === 'person' && e.id === bob.person.id)),
      15_000,
      'the owner to hear of the removal',
    );
    expect(heard.filter((e) => e.type === 'changed' && e.kind === 'person')).toEqual([]);
    expect((await owner.call('people.list', {})).map((p) => p.name)).not.toContain('sneaky');
    // Bob's token is gone with him.
    await expect(server.connect(bob.token)).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('ends every socket of a person whose token an owner reissues; the old token is refused, the new one works', async () => {
    const carol = await owner.call('people.add', { name: 'carol', kind: 'member' });
    const sockets = [await server.connect(carol.token), await server.connect(carol.token)];
    const { token } = await owner.call('people.reissueToken', { id: carol.person.id });
    expect(token).toMatch(/^pst_/);
    expect(token).not.toBe(carol.token);
    for (const socket of sockets) {
      expect(await socket.closed).toEqual({
        code: SESSION_ENDED_CLOSE_CODE,
        reason: 'your sign-in token was replaced',
      });
      expect(await refusedWith(socket.call('session.whoami', {}))).toBe('closed');
    }
    await expect(server.connect(carol.token)).rejects.toMatchObject({ code: 'unauthenticated' });
    const again = await server.connect(token);
    expect((await again.call('session.whoami', {})).person).toEqual(carol.person);
    // Nobody else was signed out.
    expect((await owner.call('session.whoami', {})).person.kind).toBe('owner');
  });

  it('lets an owner reissue their own token: the answer arrives first, then that socket closes', async () => {
    const dana = await owner.call('people.add', { name: 'dana', kind: 'owner' });
    const socket = await server.connect(dana.token);
    const { token } = await socket.call('people.reissueToken', { id: dana.person.id });
    expect(await socket.closed).toEqual({ code: SESSION_ENDED_CLOSE_CODE, reason: 'your sign-in token was replaced' });
    const again = await server.connect(token);
    expect((await again.call('session.whoami', {})).person).toEqual(dana.person);
  });

  it('lets only owners reissue tokens, and refuses a person who does not exist', async () => {
    const erin = await owner.call('people.add', { name: 'erin', kind: 'member' });
    const member = await server.connect(erin.token);
    expect(await refusedWith(member.call('people.reissueToken', { id: erin.person.id }))).toBe('forbidden');
    expect(await refusedWith(owner.call('people.reissueToken', { id: 999_999 }))).toBe('not_found');
    // Refused: her socket and token still work.
    expect((await member.call('session.whoami', {})).person).toEqual(erin.person);
  });
});
