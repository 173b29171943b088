// A paused or revoked connection says who did it and when (DESIGN §12.7): between real
// installations over mutual TLS, each side's connection summary names the person here who
// acted, or the peer by its name, with the time it happened.
import { afterEach, describe, expect, it } from 'vitest';
import type { ConnectionSummary } from '../../shared/domain';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});
async function peer(name: string) {
  const t = await openPeer(name);
  open.push(t);
  return t;
}

async function summary(t: TestInstallation, id: number, until: (c: ConnectionSummary) => boolean, what: string) {
  return t.waitFor(async () => (await t.owner('connections.list', {})).find((c) => c.id === id && until(c)), what);
}

const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('who paused or revoked a connection, and when', () => {
  it('pause names the owner here; unpausing forgets it; a revoke names the owner here and the peer there', async () => {
    const alice = await peer('alice');
    const bob = await peer('bob');
    await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    const ids = await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
    const { person: me } = await alice.owner('session.whoami', {});
    const before = Date.now();

    const paused = await alice.owner('connections.pause', { id: ids.acceptorConnectionId });
    expect(paused.pausedBy).toEqual({ name: me.name, at: expect.stringMatching(iso) as string });
    expect(Date.parse(paused.pausedBy!.at!)).toBeGreaterThanOrEqual(before - 1000);
    expect(paused.revokedBy).toBeNull();
    // bob hears of the pause as the peer's (peerPausedAt), and pauses nothing himself.
    const atBob = await summary(bob, ids.inviterConnectionId, (c) => !!c.peerPausedAt, 'bob to hear of the pause');
    expect(atBob.pausedBy).toBeNull();

    expect((await alice.owner('connections.unpause', { id: ids.acceptorConnectionId })).pausedBy).toBeNull();

    const revoked = await alice.owner('connections.revoke', { id: ids.acceptorConnectionId });
    expect(revoked.revokedBy).toEqual({ name: me.name, side: 'us', at: expect.stringMatching(iso) as string });
    const bobSees = await summary(bob, ids.inviterConnectionId, (c) => c.status === 'revoked', 'bob to hear of it');
    expect(bobSees.revokedBy).toEqual({ name: 'alice', side: 'peer', at: expect.stringMatching(iso) as string });
  });
});
