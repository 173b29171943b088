import type { Db } from '../database';

/**
 * What a withdrawal, a decline and the peer's pause leave behind:
 *
 * - on an agent conversation, its withdrawal: up to which seq of the asker's texts, by
 *   whom (a person here, or the peer's name when the peer withdrew), when; and, where we
 *   withdrew, whether the peer has yet to confirm it (the `withdraw` frame is sent again
 *   on every link until it does, so a crash between here and the peer loses none);
 * - on a peer's text a person here declined, whether its sender has yet to be told;
 * - on a connection, since when its peer has paused it (null: it has not, or unpaused).
 */
export function withdrawAndPeerPause(db: Db): void {
  db.exec(`
    ALTER TABLE threads ADD COLUMN withdrawn_seq INTEGER;
    ALTER TABLE threads ADD COLUMN withdrawn_by TEXT;
    ALTER TABLE threads ADD COLUMN withdrawn_at TEXT;
    ALTER TABLE threads ADD COLUMN withdraw_untold INTEGER NOT NULL DEFAULT 0 CHECK (withdraw_untold IN (0, 1));
    CREATE INDEX threads_withdraw_untold ON threads(connection_id) WHERE withdraw_untold = 1;
    ALTER TABLE texts ADD COLUMN decline_untold INTEGER NOT NULL DEFAULT 0 CHECK (decline_untold IN (0, 1));
    CREATE INDEX texts_decline_untold ON texts(thread_id) WHERE decline_untold = 1;
    ALTER TABLE connections ADD COLUMN peer_paused_at TEXT;
  `);
}
