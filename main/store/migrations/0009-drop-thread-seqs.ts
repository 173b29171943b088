import type { Db } from '../database';

/**
 * A thread's seqs are its texts' own (max(seq) each way), so the copies kept in the
 * thread row go: updating them cost every text a write to a page of its own. The
 * engine keeps them in memory, read from the texts on first use.
 */
export function dropThreadSeqs(db: Db): void {
  db.exec(`
    ALTER TABLE threads DROP COLUMN out_seq;
    ALTER TABLE threads DROP COLUMN in_seq;
  `);
}
