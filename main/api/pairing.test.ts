// Invitations still out and revoked connections, on real installations paired over
// mutual TLS: a cancelled or expired invitation is refused when a real peer presents
// it, and a removed connection leaves the list while its history stays readable.
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/api-contract';
import { assertBuilt } from '../paths';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';

const open: TestInstallation[] = [];
async function peers(a: string, b: string): Promise<[TestInstallation, TestInstallation]> {
  const made = await Promise.all([openPeer(a), openPeer(b)]);
  open.push(...made);
  return made;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
});

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => new Error('expected a refusal'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('invitations.list and invitations.cancel', () => {
  it('lists what is still out, never the code, and a cancelled one is refused to the peer presenting it', async () => {
    assertBuilt();
    const [alice, bob] = await peers('alice', 'bob');
    await alice.owner('roles.create', { name: 'helper', agent: { adapter: 'scripted' } });
    const invitation = await alice.owner('connections.invite', { roles: ['helper'], expiresInMinutes: 60 });
    const [listed] = await alice.owner('invitations.list', {});
    const owner = alice.installation.owner();
    expect(listed).toEqual({
      id: expect.any(Number) as number,
      roles: ['helper'],
      createdBy: { id: owner.id, name: owner.name },
      createdAt: expect.any(String) as string,
      expiresAt: invitation.expiresAt,
    });
    expect(JSON.stringify(listed)).not.toContain(invitation.code);

    expect(await alice.owner('invitations.cancel', { id: listed!.id })).toEqual({ cancelled: true });
    expect(await alice.owner('invitations.list', {})).toEqual([]);
    const error = await refusal(bob.owner('connections.accept', { code: invitation.code }));
    expect(error.message).toMatch(/^alice refused the invitation/);
    expect(await bob.owner('connections.list', {})).toEqual([]);
    expect(await alice.owner('connections.list', {})).toEqual([]);
    // Gone means gone: cancelling again finds nothing.
    expect(await refusal(alice.owner('invitations.cancel', { id: listed!.id }))).toMatchObject({ code: 'not_found' });
  });

  it('leaves out an invitation that expired, and the inviter refuses it', async () => {
    assertBuilt();
    const [alice, bob] = await peers('alice', 'bob');
    const invitation = await alice.owner('connections.invite', {});
    // The code still says it is valid; the inviter's own record has run out.
    alice.installation.db.prepare("UPDATE invitations SET expires_at = '2000-01-01T00:00:00.000Z'").run();
    expect(await alice.owner('invitations.list', {})).toEqual([]);
    const error = await refusal(bob.owner('connections.accept', { code: invitation.code }));
    expect(error.message).toMatch(/^alice refused the invitation/);
    expect(await alice.owner('connections.list', {})).toEqual([]);
  });

  it('takes a used invitation off the list, and will not cancel it', async () => {
    assertBuilt();
    const [alice, bob] = await peers('alice', 'bob');
    await pair(alice, bob);
    const waiting = await alice.owner('connections.invite', {});
    const used = alice.installation.db.prepare('SELECT id FROM invitations WHERE used_at IS NOT NULL').get() as {
      id: number;
    };
    expect((await alice.owner('invitations.list', {})).map((i) => i.expiresAt)).toEqual([waiting.expiresAt]);
    const error = await refusal(alice.owner('invitations.cancel', { id: used.id }));
    expect(error).toMatchObject({
      code: 'conflict',
      message: `invitation ${used.id} was already used: it paired you with bob`,
    });
  });
});

describe('connections.remove', () => {
  it('removes only a revoked connection; its agent conversations keep their history, and the peer stays refused', async () => {
    assertBuilt();
    const [alice, bob] = await peers('alice', 'bob');
    const asker = await alice.owner('roles.create', { name: 'asker', agent: { adapter: 'scripted' } });
    await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    const { acceptorConnectionId: id } = await pair(bob, alice, { inviter: ['researcher'] });
    const conversation = await alice.owner('conversations.open', { roleId: asker.id });
    await alice.owner('conversations.send', {
      id: conversation.id,
      text: 'ask bob/researcher: how tall is the tower?',
    });
    const root = { root: { kind: 'conversation' as const, id: conversation.id } };
    const thread = await alice.waitFor(async () => {
      const [found] = await alice.owner('threads.list', root);
      return found && found.counts.handled >= 1 && found;
    }, 'the answer from bob');

    // Still connected, or only paused: refused, and nothing changes.
    expect(await refusal(alice.owner('connections.remove', { id }))).toMatchObject({
      code: 'conflict',
      message: 'bob is still connected; only a revoked connection can be removed (revoke it first)',
    });
    await alice.owner('connections.pause', { id });
    expect(await refusal(alice.owner('connections.remove', { id }))).toMatchObject({ code: 'conflict' });
    await alice.owner('connections.revoke', { id });
    expect(await alice.owner('connections.remove', { id })).toEqual({ removed: true });

    expect(await alice.owner('connections.list', {})).toEqual([]);
    const history = await alice.owner('threads.get', { id: thread.id });
    expect(history.thread).toMatchObject({ connection: { id, name: 'bob' }, peerRole: 'researcher', status: 'closed' });
    expect(history.texts.map((t) => t.body)).toEqual([
      'how tall is the tower?',
      'answer from researcher: how tall is the tower?',
    ]);
    expect((await alice.owner('threads.list', root)).map((t) => t.id)).toEqual([thread.id]);
    expect(await refusal(alice.owner('connections.remove', { id }))).toMatchObject({ code: 'not_found' });

    // Removing is not forgetting: a new invitation from bob is still refused here.
    const again = await bob.owner('connections.invite', {});
    const error = await refusal(alice.owner('connections.accept', { code: again.code }));
    expect(error.message).toBe('you revoked bob; a revoked peer cannot be paired again');
    expect(await alice.owner('connections.list', {})).toEqual([]);
  });
});

describe('pairing again after a revoke', () => {
  it('names the side that revoked: "you revoked bob" here, "alice revoked this connection" there', async () => {
    assertBuilt();
    const [alice, bob] = await peers('alice', 'bob');
    const { acceptorConnectionId } = await pair(bob, alice);
    await alice.owner('connections.revoke', { id: acceptorConnectionId });
    await bob.waitFor(
      async () => (await bob.owner('connections.list', {}))[0]?.status === 'revoked',
      'bob to hear of the revocation',
    );

    // Alice revoked: a new invitation from bob is refused at alice's in her own words…
    const fromBob = await bob.owner('connections.invite', {});
    expect(await refusal(alice.owner('connections.accept', { code: fromBob.code }))).toMatchObject({
      code: 'revoked',
      message: 'you revoked bob; a revoked peer cannot be paired again',
    });
    // …and one from alice is refused at bob's without telling bob he revoked.
    const fromAlice = await alice.owner('connections.invite', {});
    expect(await refusal(bob.owner('connections.accept', { code: fromAlice.code }))).toMatchObject({
      code: 'revoked',
      message: 'alice revoked this connection; a revoked peer cannot be paired again',
    });
    // Neither refusal paired anything again.
    expect((await alice.owner('connections.list', {})).map((c) => c.status)).toEqual(['revoked']);
    expect((await bob.owner('connections.list', {})).map((c) => c.status)).toEqual(['revoked']);
  });
});
