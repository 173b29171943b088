import type { Db } from '../database';

/**
 * Where a peer is reached besides its address: its DHT public key (hex), learned from the
 * invitation we accepted, from the DHT stream its link came over, or from its `reach`
 * frame; and the relays it named (a JSON array of relay keys). Which path won the last
 * link is kept too, so the next dial races it at once.
 */
export function recordReach(db: Db): void {
  db.exec(`
    ALTER TABLE connections ADD COLUMN dht_key TEXT CHECK (dht_key IS NULL OR length(dht_key) = 64);
    ALTER TABLE connections ADD COLUMN relays TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE connections ADD COLUMN last_path TEXT CHECK (last_path IN ('direct', 'dht'));
    CREATE UNIQUE INDEX connections_by_dht_key ON connections (dht_key) WHERE dht_key IS NOT NULL;
  `);
}
