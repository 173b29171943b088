// Several installations side by side on loopback, paired for real over mutual TLS.
import { openTestInstallation, type TestInstallation } from './installation';
import type { InstallationOptions } from '../main/installation';

export async function openPeer(name: string, options: Partial<InstallationOptions> = {}): Promise<TestInstallation> {
  return openTestInstallation({ name, peerPort: 0, reconnect: { minMs: 50, maxMs: 500 }, ...options });
}

/** `inviter` invites `acceptor`; each exposes the given roles to the other. Resolves once both see the link. */
export async function pair(
  inviter: TestInstallation,
  acceptor: TestInstallation,
  exposes: { inviter?: string[]; acceptor?: string[] } = {},
): Promise<{ inviterConnectionId: number; acceptorConnectionId: number }> {
  const { code } = await inviter.owner('connections.invite', { roles: exposes.inviter ?? [] });
  const accepted = await acceptor.owner('connections.accept', { code, roles: exposes.acceptor ?? [] });
  const inviterSide = await inviter.waitFor(async () => {
    const list = await inviter.owner('connections.list', {});
    return list.find(
      (c) =>
        c.fingerprint === acceptor.installation.id &&
        c.online &&
        c.peerRoles.length === (exposes.acceptor ?? []).length,
    );
  }, 'the inviter to see the connection');
  await acceptor.waitFor(async () => {
    const list = await acceptor.owner('connections.list', {});
    return list.find(
      (c) =>
        c.fingerprint === inviter.installation.id && c.online && c.peerRoles.length === (exposes.inviter ?? []).length,
    );
  }, 'the acceptor to see the peer roles');
  return { inviterConnectionId: inviterSide.id, acceptorConnectionId: accepted.id };
}
