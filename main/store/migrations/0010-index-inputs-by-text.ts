import type { Db } from '../database';

/**
 * Texts received in an agent conversation now wait as texts until a turn takes them;
 * "has this text an input yet?" is asked of every waiting text, so inputs are indexed
 * by the text they carry (it also spares removing a text a scan for the inputs to unlink).
 * Inputs made before this version keep working as they are.
 */
export function indexInputsByText(db: Db): void {
  db.exec('CREATE INDEX inputs_text ON inputs(text_id) WHERE text_id IS NOT NULL');
}
