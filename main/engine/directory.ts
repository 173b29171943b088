// Whom roles can ask (DESIGN §11.8): every connection not revoked, whether it is online
// or paused, and the peer roles it lets us address. Refusals name the alternatives.
import type { PeerDirectoryEntry } from '../agents/types';
import type { Db } from '../store/database';
import { listConnectionRows, peerRoles, type ConnectionRow } from '../store/queries/connections';
import { EngineError } from './errors';

export function peerDirectory(
  db: Db,
  isOnline: (connectionId: number) => boolean,
  /** How an open link travels; only a link over the DHT is named (a direct one is the usual case). */
  path: (connectionId: number) => 'direct' | 'holepunched' | 'relayed' | null = () => null,
  /** The relay a relayed link goes through. */
  relayOf: (connectionId: number) => string | null = () => null,
): PeerDirectoryEntry[] {
  return listConnectionRows(db)
    .filter((connection) => connection.status !== 'revoked')
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((connection) => {
      const via = path(connection.id);
      const relay = via === 'relayed' ? relayOf(connection.id) : null;
      return {
        peer: connection.name,
        state:
          connection.status === 'paused' || connection.peer_paused_at !== null
            ? ('paused' as const)
            : isOnline(connection.id)
              ? ('online' as const)
              : ('offline' as const),
        // Paused by the peer (it told us), not here: said so, since only the peer can undo it.
        ...(connection.status !== 'paused' && connection.peer_paused_at !== null
          ? { pausedBy: 'peer' as const, pausedAt: connection.peer_paused_at }
          : {}),
        ...(via && via !== 'direct' ? { path: via } : {}),
        ...(relay ? { relay } : {}),
        roles: peerRoles(db, connection.id).map((role) => ({
          address: `${connection.name}/${role.name}`,
          description: role.description,
        })),
      };
    });
}

/** A refusal for a connection that does not exist, naming whom the role can ask instead. */
export function noConnection(directory: PeerDirectoryEntry[], name: string): EngineError {
  const addresses = directory.flatMap((entry) =>
    entry.roles.map((role) => (entry.state === 'paused' ? `${role.address} (paused)` : role.address)),
  );
  const alternatives =
    directory.length === 0
      ? 'this installation is not connected to any peer yet'
      : addresses.length === 0
        ? `no peer lets you address any of its roles yet (connections: ${directory.map((entry) => entry.peer).join(', ')})`
        : `you can address ${addresses.join(', ')}`;
  return new EngineError('not_found', `no connection named "${name}"; ${alternatives}`);
}

/** A refusal for a role the peer does not expose, naming the ones it does. */
export function notExposed(db: Db, connection: ConnectionRow, role: string): EngineError {
  const exposed = peerRoles(db, connection.id).map((r) => `${connection.name}/${r.name}`);
  const alternatives = exposed.length
    ? `${connection.name} lets you address ${exposed.join(', ')}`
    : `${connection.name} lets you address none of its roles`;
  return new EngineError(
    'not_exposed',
    `${connection.name} does not let you address a role named "${role}"; ${alternatives}`,
  );
}
