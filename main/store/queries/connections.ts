import type { IncomingPolicy, OutgoingPolicy, TrustLevel } from '../../../shared/domain';
import type { Db } from '../database';
import { all, get, getWide, insert, run } from '../sql';
import { cleanDescription } from '../../one-line';

export type ConnectionStatus = 'active' | 'paused' | 'revoked';

export interface ConnectionRow {
  id: number;
  fingerprint: string;
  cert: string;
  name: string;
  address: string | null;
  status: ConnectionStatus;
  queue_limit: number;
  created_at: string;
  revoked_at: string | null;
  /** Which side revoked it: `us` (an owner here) or the peer. */
  revoked_by: 'us' | 'peer' | null;
  /** Where `address` came from: the invitation we accepted, or what the peer announced. */
  address_from: 'invitation' | 'peer' | null;
  /** An owner took the revoked connection off the list; the row stays for its history and to refuse the peer. */
  removed_at: string | null;
  /** `ask`: an agent's send waits for a person before it goes out. */
  outgoing_policy: OutgoingPolicy;
  /** `ask`: a peer's text waits for a person before the agent takes it. */
  incoming_policy: IncomingPolicy;
  /** How far runs working for this peer may reach (DESIGN §12.3). */
  trust: TrustLevel;
  /** Since when the peer has paused the connection (its `status` frame); null: it has not. */
  peer_paused_at: string | null;
  /** Who paused it here and when; null while not paused (or not known). */
  paused_by: string | null;
  paused_at: string | null;
  /** Who revoked it: a person here, or the peer's name; null when not known. */
  revoked_by_name: string | null;
  /** The peer's DHT public key (hex): dialled by key when known. */
  dht_key: string | null;
  /** JSON array of the relay keys the peer named. */
  relays: string;
  /** Which path brought the last link we dialled: the next dial races it at once. */
  last_path: 'direct' | 'dht' | null;
  /** 0: an owner allowed runs for this peer to start where the agents' sandbox cannot. */
  sandbox_required: number;
}

/** The connections people see: every one but those removed. */
export function listConnectionRows(db: Db): ConnectionRow[] {
  return all<ConnectionRow>(db, 'SELECT * FROM connections WHERE removed_at IS NULL ORDER BY name');
}

/** Takes a revoked connection off the list (the schema refuses it for any other). */
export function markConnectionRemoved(db: Db, id: number): void {
  run(
    db,
    "UPDATE connections SET removed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ? AND removed_at IS NULL",
    id,
  );
}

export function getConnectionRow(db: Db, id: number): ConnectionRow | undefined {
  return getWide<ConnectionRow>(db, 'SELECT * FROM connections WHERE id = ?', id);
}

export function connectionByFingerprint(db: Db, fingerprint: string): ConnectionRow | undefined {
  return getWide<ConnectionRow>(db, 'SELECT * FROM connections WHERE fingerprint = ?', fingerprint);
}

export function connectionByName(db: Db, name: string): ConnectionRow | undefined {
  return getWide<ConnectionRow>(db, 'SELECT * FROM connections WHERE name = ?', name);
}

/**
 * A name not yet used by another connection, nor `taken` (our own name, as
 * `isTaken` compares): the wanted one, or it with a number.
 */
export function freeConnectionName(db: Db, wanted: string, isTaken: (name: string) => boolean = () => false): string {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? wanted : `${wanted}-${n}`;
    if (!isTaken(candidate) && !connectionByName(db, candidate)) return candidate;
  }
}

export function insertConnection(
  db: Db,
  fingerprint: string,
  cert: string,
  name: string,
  address: string | null,
  addressFrom: 'invitation' | 'peer',
): ConnectionRow {
  const id = insert(
    db,
    'INSERT INTO connections (fingerprint, cert, name, address, address_from) VALUES (?, ?, ?, ?, ?)',
    fingerprint,
    cert,
    name,
    address,
    address === null ? null : addressFrom,
  );
  return getConnectionRow(db, id)!;
}

export function connectionByDhtKey(db: Db, key: string): ConnectionRow | undefined {
  return getWide<ConnectionRow>(db, 'SELECT * FROM connections WHERE dht_key = ?', key);
}

/** The peer's DHT key, as its invitation, its DHT stream or its reach frame gave it. */
export function setDhtKey(db: Db, id: number, key: string): void {
  run(db, 'UPDATE connections SET dht_key = ? WHERE id = ?', key, id);
}

/** The relays the peer named, a JSON array of their keys. */
export function setRelays(db: Db, id: number, relays: string): void {
  run(db, 'UPDATE connections SET relays = ? WHERE id = ?', relays, id);
}

export function setLastPath(db: Db, id: number, path: 'direct' | 'dht'): void {
  run(db, 'UPDATE connections SET last_path = ? WHERE id = ? AND last_path IS NOT ?', path, id, path);
}

/** The address the peer announced (already checked): we dial it from now on. */
export function setAnnouncedAddress(db: Db, id: number, address: string): void {
  run(db, "UPDATE connections SET address = ?, address_from = 'peer' WHERE id = ?", address, id);
}

/** Pausing keeps who paused (`by`) and when; unpausing forgets both. */
export function setConnectionStatus(
  db: Db,
  id: number,
  status: Exclude<ConnectionStatus, 'revoked'>,
  by: string | null = null,
): void {
  run(
    db,
    `UPDATE connections SET status = ?,
       paused_by = CASE WHEN ? = 'paused' THEN ? END,
       paused_at = CASE WHEN ? = 'paused' THEN strftime('%Y-%m-%dT%H:%M:%fZ', 'now') END
     WHERE id = ? AND status != 'revoked'`,
    status,
    status,
    by,
    status,
    id,
  );
}

/** `who`: the person here who revoked it, or the peer's name. */
export function setConnectionRevoked(db: Db, id: number, by: 'us' | 'peer', who: string | null = null): void {
  run(
    db,
    "UPDATE connections SET status = 'revoked', revoked_by = ?, revoked_by_name = ?, revoked_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ? AND status != 'revoked'",
    by,
    who,
    id,
  );
}

export function setPolicy(db: Db, id: number, policy: { outgoing?: OutgoingPolicy; incoming?: IncomingPolicy }): void {
  run(
    db,
    'UPDATE connections SET outgoing_policy = coalesce(?, outgoing_policy), incoming_policy = coalesce(?, incoming_policy) WHERE id = ?',
    policy.outgoing ?? null,
    policy.incoming ?? null,
    id,
  );
}

export function setTrust(db: Db, id: number, level: TrustLevel): void {
  run(db, 'UPDATE connections SET trust = ? WHERE id = ?', level, id);
}

export function setQueueLimit(db: Db, id: number, limit: number): void {
  run(db, 'UPDATE connections SET queue_limit = ? WHERE id = ?', limit, id);
}

export function exposedRoleNames(db: Db, connectionId: number): string[] {
  return all<{ name: string }>(
    db,
    'SELECT roles.name FROM exposed_roles JOIN roles ON roles.id = exposed_roles.role_id WHERE connection_id = ? ORDER BY roles.name',
    connectionId,
  ).map((row) => row.name);
}

export function exposedRoles(db: Db, connectionId: number): Array<{ id: number; name: string; description: string }> {
  return all<{ id: number; name: string; description: string }>(
    db,
    'SELECT roles.id, roles.name, roles.description FROM exposed_roles JOIN roles ON roles.id = exposed_roles.role_id WHERE connection_id = ? ORDER BY roles.name',
    connectionId,
  );
}

export function setExposedRoles(db: Db, connectionId: number, roleIds: number[]): void {
  run(db, 'DELETE FROM exposed_roles WHERE connection_id = ?', connectionId);
  for (const roleId of roleIds)
    run(db, 'INSERT INTO exposed_roles (connection_id, role_id) VALUES (?, ?)', connectionId, roleId);
}

/** The roles the peer exposes to us; a description stored before it was cleaned on receipt is cleaned here. */
export function peerRoles(db: Db, connectionId: number): Array<{ name: string; description: string }> {
  return all<{ name: string; description: string }>(
    db,
    'SELECT name, description FROM peer_roles WHERE connection_id = ? ORDER BY name',
    connectionId,
  ).map((role) => ({ name: role.name, description: cleanDescription(role.description) }));
}

/** The names of the roles a peer lets us address (no descriptions to clean: a send's check). */
export function peerRoleNames(db: Db, connectionId: number): string[] {
  return all<{ name: string }>(db, 'SELECT name FROM peer_roles WHERE connection_id = ?', connectionId).map(
    (role) => role.name,
  );
}

export function setPeerRoles(db: Db, connectionId: number, roles: Array<{ name: string; description: string }>): void {
  run(db, 'DELETE FROM peer_roles WHERE connection_id = ?', connectionId);
  for (const role of roles)
    run(
      db,
      'INSERT INTO peer_roles (connection_id, name, description) VALUES (?, ?, ?)',
      connectionId,
      role.name,
      role.description,
    );
}

export interface InvitationRow {
  id: number;
  secret_hash: string;
  roles: string;
  expires_at: string;
  used_at: string | null;
}

export function insertInvitation(
  db: Db,
  secretHash: string,
  roles: string[],
  createdBy: number | null,
  expiresAt: string,
): number {
  return insert(
    db,
    'INSERT INTO invitations (secret_hash, roles, created_by, expires_at) VALUES (?, ?, ?, ?)',
    secretHash,
    JSON.stringify(roles),
    createdBy,
    expiresAt,
  );
}

/** Whether an invitation is unused and unexpired at `now` (an ISO time). */
export function hasOpenInvitation(db: Db, now: string): boolean {
  return (
    get<{ one: number }>(
      db,
      'SELECT 1 AS one FROM invitations WHERE used_at IS NULL AND expires_at > ? LIMIT 1',
      now,
    ) !== undefined
  );
}

export function invitationBySecretHash(db: Db, secretHash: string): InvitationRow | undefined {
  return get<InvitationRow>(db, 'SELECT * FROM invitations WHERE secret_hash = ?', secretHash);
}

export function useInvitation(db: Db, id: number, connectionId: number): void {
  run(
    db,
    "UPDATE invitations SET used_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), connection_id = ? WHERE id = ?",
    connectionId,
    id,
  );
}
