// Several installations side by side on loopback, paired for real over mutual TLS.
import path from 'node:path';
import { makeDataDir, removeDataDir } from './data-folder';
import { openTestInstallation, type TestInstallation } from './installation';
import { createIdentity } from '../main/engine/identity';
import { openDatabase } from '../main/store/database';
import type { InstallationOptions } from '../main/installation';

export async function openPeer(
  name: string,
  options: Partial<InstallationOptions> = {},
  /** Whether its folders go when it closes: by default, only when it made them. */
  ownsFolders?: boolean,
): Promise<TestInstallation> {
  const all = { name, peerPort: 0, reconnect: { minMs: 50, maxMs: 500 }, ...options };
  return openTestInstallation(all, ownsFolders ?? !all.dataDir);
}

/**
 * Two peers whose installation IDs sort as their names are given: `smaller` first. The
 * duplicate rule keeps the link the smaller ID dialled, so its tests must know which side
 * that is. Both identities are made anew until they sort that way (half of all pairs do),
 * before either installation opens: keeping one and remaking the other could take
 * thousands of tries when the kept ID sorts near an end.
 */
export async function openPeersInIdOrder(
  smaller: string,
  larger: string,
): Promise<[smaller: TestInstallation, larger: TestInstallation]> {
  const newFolder = () => makeDataDir('parley-test-');
  for (let tries = 0; tries < 64; tries++) {
    const folders = [newFolder(), newFolder()] as const;
    const [first, second] = await Promise.all([
      createIdentity(folders[0], smaller),
      createIdentity(folders[1], larger),
    ]);
    const removeFolders = () => {
      for (const folder of folders) removeDataDir(folder);
    };
    if (first.fingerprint > second.fingerprint) {
      removeFolders();
      continue;
    }
    // A folder with an identity and no database is one whose database was lost: Parley
    // refuses to start there. These are new, so each gets its empty database first.
    for (const folder of folders) openDatabase(path.join(folder, 'parley.db')).close();
    let a: TestInstallation | null = null;
    try {
      a = await openPeer(smaller, { dataDir: folders[0] }, true);
      return [a, await openPeer(larger, { dataDir: folders[1] }, true)];
    } catch (error) {
      await a?.close();
      removeFolders();
      throw error;
    }
  }
  throw new Error('64 pairs of identities all sorted the wrong way: the IDs are not random');
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
