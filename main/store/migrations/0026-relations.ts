import type { Db } from '../database';

/**
 * Which turn did what, kept rather than inferred from names and clocks:
 *
 * - `texts.sent_by_turn`: the turn whose agent sent an outgoing text (a send, a reply, a
 *   report to a peer's agent conversation, the reply guard's output);
 * - `messages.posted_by_turn`, `task_log.posted_by_turn`: the turn whose agent posted the
 *   line (a report, or the turn's final output).
 *
 * Which turn took an incoming text was already kept (`inputs.turn_id`). A turn that goes
 * (its run deleted) leaves NULL behind, so each column is indexed for that lookup.
 *
 * The past is filled in only where it follows from what was stored: an outgoing text that
 * waited for approval names the run that sent it, a run takes one turn at a time, and a
 * text is sent only while a turn of its run runs; so the turn of that run that started
 * last at or before the text was written sent it — unless another turn of the run
 * started at that same instant, or the text was written at the instant a later turn
 * started (the earlier one could have sent it as it ended). Everything else stays NULL.
 */
export function recordRelations(db: Db): void {
  db.exec(`
    ALTER TABLE texts ADD COLUMN sent_by_turn INTEGER REFERENCES turns(id) ON DELETE SET NULL;
    ALTER TABLE messages ADD COLUMN posted_by_turn INTEGER REFERENCES turns(id) ON DELETE SET NULL;
    ALTER TABLE task_log ADD COLUMN posted_by_turn INTEGER REFERENCES turns(id) ON DELETE SET NULL;
    CREATE INDEX texts_sent_by_turn ON texts(sent_by_turn) WHERE sent_by_turn IS NOT NULL;
    CREATE INDEX messages_posted_by_turn ON messages(posted_by_turn) WHERE posted_by_turn IS NOT NULL;
    CREATE INDEX task_log_posted_by_turn ON task_log(posted_by_turn) WHERE posted_by_turn IS NOT NULL;

    WITH sender AS (
      SELECT texts.id AS text_id, texts.created_at, approvals.run_id
      FROM approvals JOIN texts ON texts.id = approvals.text_id
      WHERE approvals.kind = 'outgoing' AND approvals.run_id IS NOT NULL AND texts.direction = 'out'
    ),
    latest AS (
      SELECT sender.text_id, sender.created_at,
             (SELECT count(*) FROM turns WHERE turns.run_id = sender.run_id AND turns.started_at <= sender.created_at)
               AS before_count,
             (SELECT max(started_at) FROM turns WHERE turns.run_id = sender.run_id AND turns.started_at <= sender.created_at)
               AS started_at,
             sender.run_id
      FROM sender
    ),
    known AS (
      SELECT latest.text_id, (SELECT turns.id FROM turns WHERE turns.run_id = latest.run_id AND turns.started_at = latest.started_at) AS turn_id
      FROM latest
      WHERE latest.before_count > 0
        AND (SELECT count(*) FROM turns WHERE turns.run_id = latest.run_id AND turns.started_at = latest.started_at) = 1
        AND (latest.started_at < latest.created_at OR latest.before_count = 1)
    )
    UPDATE texts SET sent_by_turn = (SELECT known.turn_id FROM known WHERE known.text_id = texts.id)
      WHERE id IN (SELECT text_id FROM known);
  `);
}
