// The relays people here chose: only these and the ones a peer named are ever dialled through.
import type { Db } from '../database';
import { all, get, insert, run } from '../sql';

export interface RelayRow {
  id: number;
  /** The relay's DHT public key, hex. */
  key: string;
  address: string | null;
  added_by: number | null;
  added_at: string;
}

/** At most this many relays: invitations and `reach` frames carry every key. */
export const MAX_RELAYS = 8;

export function listRelays(db: Db): RelayRow[] {
  return all<RelayRow>(db, 'SELECT * FROM relays ORDER BY id');
}

export function relayKeys(db: Db): string[] {
  return listRelays(db).map((r) => r.key);
}

export function getRelay(db: Db, id: number): RelayRow | undefined {
  return get<RelayRow>(db, 'SELECT * FROM relays WHERE id = ?', id);
}

export function relayByKey(db: Db, key: string): RelayRow | undefined {
  return get<RelayRow>(db, 'SELECT * FROM relays WHERE key = ?', key);
}

export function insertRelay(db: Db, key: string, address: string | null, addedBy: number | null): RelayRow {
  const id = insert(db, 'INSERT INTO relays (key, address, added_by) VALUES (?, ?, ?)', key, address, addedBy);
  return getRelay(db, id)!;
}

export function deleteRelay(db: Db, id: number): boolean {
  return run(db, 'DELETE FROM relays WHERE id = ?', id).changes > 0;
}
