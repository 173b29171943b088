import type { Db } from '../database';

/**
 * The asks of a conversation or a task (`rootAsks`, read with every `conversations.get`
 * and `tasks.get`), found through indexes of their own:
 *
 * - `threads_local_root`: the agent conversations we started under a root, without reading
 *   each row for who started it (a root can hold tens of thousands);
 * - `texts_asks`: of each, only the texts a turn sent, by time, so a page that starts
 *   somewhere in the history skips the older ones and never reads a text body.
 */
export function indexAskLookup(db: Db): void {
  db.exec(`
    CREATE INDEX threads_local_root ON threads(root_kind, root_id) WHERE started_by = 'local';
    CREATE INDEX texts_asks ON texts(thread_id, created_at) WHERE direction = 'out' AND sent_by_turn IS NOT NULL;
  `);
}
