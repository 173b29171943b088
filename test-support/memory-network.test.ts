// The in-memory links keep what a link over TLS promises: the certificate is pinned, a
// dial where nothing listens fails as TCP's would, and both ends agree a revision.
import { afterEach, describe, expect, it } from 'vitest';
import type { TestInstallation } from './installation';
import { memoryNetwork } from './memory-network';
import { openPeer, pair } from './network';

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});
async function peer(name: string, options: Parameters<typeof openPeer>[1]) {
  const t = await openPeer(name, options);
  open.push(t);
  return t;
}

describe('installations linked in memory', () => {
  it('pins the peer’s certificate: another installation at its address is refused', async () => {
    const links = memoryNetwork();
    const alice = await peer('alice', links.options());
    const bob = await peer('bob', links.options());
    await pair(bob, alice);
    const address = (await alice.owner('connections.list', {}))[0]!.address!;
    const port = Number(address.split(':').at(-1));
    await bob.close();
    open.splice(open.indexOf(bob), 1);
    // mallory takes bob's address: alice's redial reaches her and refuses her certificate.
    const mallory = await peer('mallory', { ...links.options(), peerPort: port });
    const refused = await alice.waitFor(async () => {
      const [c] = await alice.owner('connections.list', {});
      return c?.lastError?.includes('not the pinned') ? c : undefined;
    }, 'the pin to refuse mallory');
    expect(refused.online).toBe(false);
    expect(await mallory.owner('connections.list', {})).toEqual([]);
  });

  it('fails a dial where nothing listens, as TCP would', async () => {
    const links = memoryNetwork();
    const alice = await peer('alice', links.options());
    const bob = await peer('bob', links.options());
    const { code } = await bob.owner('connections.invite', { roles: [] });
    await bob.close();
    open.splice(open.indexOf(bob), 1);
    await expect(alice.owner('connections.accept', { code, roles: [] })).rejects.toThrow(/ECONNREFUSED/);
  });
});
