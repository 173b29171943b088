import type { Db } from '../database';

/**
 * What the asking side keeps to tell the state of an ask:
 *
 * - the peer's word on the turn that took our texts of a thread we started (protocol 2
 *   revision 1's `turn` frame): its state, the last of our seqs it took, when we heard;
 * - which side made an outgoing text fail: `us` (a pause, revoke or delete here) or the
 *   peer (its rejection, its revoke). For texts that failed before, it follows from the
 *   reason where only one side could have caused it, and from who revoked; a `paused`
 *   text is left unknown, since a pause here and the peer's refusal gave the same reason;
 * - what a deleted conversation or task was called, for the agent conversations that
 *   outlive it (those deleted before are not known).
 */
export function keepAskState(db: Db): void {
  db.exec(`
    ALTER TABLE threads ADD COLUMN peer_turn TEXT CHECK (peer_turn IN ('working', 'stopped', 'failed', 'ended'));
    ALTER TABLE threads ADD COLUMN peer_turn_seq INTEGER;
    ALTER TABLE threads ADD COLUMN peer_turn_at TEXT;
    ALTER TABLE texts ADD COLUMN failed_by TEXT CHECK (failed_by IN ('us', 'peer'));
    UPDATE texts SET failed_by = CASE
        WHEN reason IN ('thread', 'roles', 'role', 'queue') THEN 'peer'
        WHEN reason = 'closed' THEN 'us'
        WHEN reason = 'revoke' THEN (
          SELECT connections.revoked_by FROM threads JOIN connections ON connections.id = threads.connection_id
          WHERE threads.id = texts.thread_id)
      END
      WHERE state = 'failed' AND direction = 'out';
    CREATE TABLE deleted_roots (
      kind TEXT NOT NULL CHECK (kind IN ('conversation', 'task')),
      id INTEGER NOT NULL,
      title TEXT NOT NULL,
      deleted_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
      PRIMARY KEY (kind, id)
    ) WITHOUT ROWID;
  `);
}
