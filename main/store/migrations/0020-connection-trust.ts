import type { Db } from '../database';

/**
 * How far the owner trusts a peer with the agents that work for it (DESIGN §12.3). Every
 * connection starts at `answer`, the safest level, old ones too: nobody chose more for them.
 */
export function addConnectionTrust(db: Db): void {
  db.exec(`
    ALTER TABLE connections ADD COLUMN trust TEXT NOT NULL DEFAULT 'answer' CHECK (trust IN ('answer', 'work', 'full'));
  `);
}
