import type { Db } from '../database';

/**
 * The asker always learns how its ask ended (protocol 2 revision 2):
 *
 * - `turn_signals`: per agent conversation a peer started, the latest state of our turn
 *   that the peer has not acknowledged yet. It is sent again on every new link until the
 *   peer's `turn-ack` names it, and it outlives a restart here;
 * - `threads.peer_relayed_on`: in an agent conversation we started, the peer said its
 *   turn ended while it waits on asks of its own (`relayed`); the PEER/ROLE names it
 *   gave, as JSON. `peer_turn` then holds `working` (its CHECK predates the state), and
 *   any later state clears it.
 */
export function keepTurnSignals(db: Db): void {
  db.exec(`
    CREATE TABLE turn_signals (
      thread_id INTEGER PRIMARY KEY REFERENCES threads(id) ON DELETE CASCADE,
      seq INTEGER NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('working', 'stopped', 'failed', 'ended', 'relayed')),
      waiting_on TEXT,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    );
    ALTER TABLE threads ADD COLUMN peer_relayed_on TEXT;
  `);
}
