// Where a peer is reached, as links tell us: the DHT key and relays of its reach frame,
// the address its hello announced, the path our dial came by. Each is a note worth
// keeping, not worth a link when the disk will not take it (a full disk).
import { log } from '../log';
import { isStorageFailure } from '../store/storage-errors';
import { transaction, type Db } from '../store/database';
import {
  connectionByDhtKey,
  getConnectionRow,
  setAnnouncedAddress,
  setDhtKey,
  setLastPath,
  setRelays,
  type ConnectionRow,
} from '../store/queries/connections';
import { checkPeerAddress } from './announced';
import type { LinkPath, ReachTarget } from './reach';
import type { ReachFrame } from './wire';

/** Writes a note about a peer; one the disk refuses is logged and dropped. */
export function remember(db: Db, connectionId: number, write: (db: Db) => void): void {
  try {
    transaction(db, () => write(db));
  } catch (error) {
    if (!isStorageFailure(error)) throw error;
    log.warn('could not record how a peer is reached', { connectionId, error: String(error) });
  }
}

/**
 * Where the peer says it is reached: its DHT key is dialled from now on, as its address
 * is. Returns why its key was ignored, or null.
 */
export function takeReach(db: Db, connection: ConnectionRow, frame: ReachFrame): string | null {
  const connectionId = connection.id;
  // Its address is taken from its hello as before (by the side it dialled), not from here:
  // a dialler keeps dialling the address it was given, a proxy's included.
  let note: string | null = null;
  const key = frame.dht;
  const relays = JSON.stringify(frame.relays);
  if (key !== null && key !== connection.dht_key) {
    const holder = connectionByDhtKey(db, key);
    if (holder && holder.id !== connectionId)
      note = `ignored the DHT key ${connection.name} announced: it is ${holder.name}'s`;
    else remember(db, connectionId, (db) => setDhtKey(db, connectionId, key));
  }
  if (relays !== connection.relays) remember(db, connectionId, (db) => setRelays(db, connectionId, relays));
  return note;
}

/**
 * The address a known peer announced: dialled from now on if it is one; otherwise why
 * not. Not worth refusing the link over when it cannot be saved (the disk is full): the
 * peer announces it again on every link.
 */
export function takeAnnouncedAddress(db: Db, connectionId: number, address: string): string | null {
  const connection = getConnectionRow(db, connectionId)!;
  if (address === connection.address) return null;
  const checked = checkPeerAddress(address);
  if (!checked.ok)
    return `ignored the address ${connection.name} announced (${JSON.stringify(address)}): ${checked.reason}`;
  try {
    transaction(db, () => setAnnouncedAddress(db, connectionId, address));
  } catch (error) {
    if (!isStorageFailure(error)) throw error;
    log.warn('could not record the address a peer announced', { error: String(error) });
  }
  return null;
}

/** Our dial reached the peer by `path`: the path to try first next time, and the DHT key it answered at. */
export function rememberDialledPath(db: Db, connectionId: number, target: ReachTarget, path: LinkPath): void {
  if (target.address && target.dhtKey)
    remember(db, connectionId, (db) => setLastPath(db, connectionId, path === 'direct' ? 'direct' : 'dht'));
  if (path !== 'direct' && target.dhtKey) {
    const key = target.dhtKey;
    remember(db, connectionId, (db) => setDhtKey(db, connectionId, key));
  }
}

/** The relays a connection's peer named (a JSON array of keys); nothing when it is not one. */
export function parseRelays(json: string): string[] {
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) ? parsed.filter((k): k is string => typeof k === 'string') : [];
  } catch {
    return [];
  }
}

/** Whether anything can dial the connection: an address or a DHT key. */
export function reachable(connection: ConnectionRow): boolean {
  return connection.address !== null || connection.dht_key !== null;
}
