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
 *   any later state clears it;
 * - `inputs.answers`: a notice that its turn answers for. The relaying run of an agent
 *   conversation a peer started is told so when an ask it made ends without an answer,
 *   and that turn's output goes back as the reply, as for the peer's own text.
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
    ALTER TABLE inputs ADD COLUMN answers INTEGER NOT NULL DEFAULT 0 CHECK (answers IN (0, 1));
  `);
}
