// A new peer may not take a name that reads like a connection's or our own (TR39
// skeletons after NFKC and case folding), on either side of pairing: real
// installations on loopback, and a hand-driven stranger for names a real one would
// not announce.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import { RawPeer } from '../../test-support/raw-peer';
import { loadOrCreateIdentity } from './identity';
import { decodeInvite } from './invitation';

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});
async function peer(name: string) {
  const t = await openPeer(name);
  open.push(t);
  return t;
}

describe('confusable peer names', () => {
  it('refuses a peer named like a connection or like us, on the inviting and the accepting side, saying which name it reads as', async () => {
    const alice = await peer('alice');
    const eve = await peer('eve');
    await pair(alice, eve);
    const names = async () => (await alice.owner('connections.list', {})).map((c) => c.name).sort();
    expect(await names()).toEqual(['eve']);

    // Inviting side: alice invites, an impostor accepts.
    for (const [impostor, like] of [
      ['EVE', 'the inviter’s peer "eve"'],
      ['\u0435ve', 'the inviter’s peer "eve"'],
      ['\uff45\uff56\uff45', 'the inviter’s peer "eve"'],
    ] as const) {
      const stranger = await peer(impostor);
      const { code } = await alice.owner('connections.invite', {});
      await expect(stranger.owner('connections.accept', { code })).rejects.toMatchObject({
        code: 'invalid',
        message: expect.stringContaining(`alice refused the invitation: your name reads the same as ${like}`) as string,
      });
      // The invitation stays open for a peer that picks another name.
      expect(await names()).toEqual(['eve']);
    }

    // Accepting side: an impostor invites alice; alice refuses before it dials.
    for (const [impostor, like] of [
      ['\u0435ve', 'your connection "eve"'],
      ['Al\u0456ce', 'your own name "alice"'],
    ] as const) {
      const inviter = await peer(impostor);
      const { code } = await inviter.owner('connections.invite', {});
      await expect(alice.owner('connections.accept', { code })).rejects.toMatchObject({
        code: 'invalid',
        message: `this invitation is from "${impostor}", which reads the same as ${like}; a peer whose name could pass for another is refused: ask them to choose a name that does not`,
      });
      expect(await inviter.owner('connections.list', {})).toEqual([]);
    }
    expect(await names()).toEqual(['eve']);

    // Names a real installation would refuse to accept with (its own check stops it first):
    // one that reads like the inviter's, one that looks alike once its invisible characters are gone.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-confusable-'));
    try {
      for (const [i, [name, reason]] of [
        ['ALICE', 'your name reads the same as the inviter’s own; choose another name and accept again'],
        ['\u202Ee\u200Bve\u0007', 'your name reads the same as the inviter’s peer "eve"; choose another name'],
      ].entries()) {
        const identity = await loadOrCreateIdentity(path.join(dir, String(i)), 'stranger');
        const { code } = await alice.owner('connections.invite', {});
        const raw = await RawPeer.dial(identity, alice.installation.peerAddress!, alice.installation.id, {
          type: 'hello',
          protocol: 2,
          name,
          address: null,
          invitation: decodeInvite(code).secret,
        });
        expect(await raw.closedWith()).toEqual({ code: 4004, reason });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await names()).toEqual(['eve']);

    // A name that reads differently pairs as before.
    const evan = await peer('evan');
    await pair(alice, evan);
    expect(await names()).toEqual(['evan', 'eve']);
  });
});
