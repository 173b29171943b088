import path from 'node:path';
import type { Db } from '../database';

/**
 * The agents' sandbox (docs/security.md):
 *
 * - `connections.sandbox_required`: runs working for the peer start only inside the
 *   sandbox (1, the default), or also where it cannot start, when an owner said so (0);
 * - roles move out of the data folder, which agents can no longer read. A role whose
 *   folder was inside it forgets that folder and works in its own; a role with no folder
 *   worked in the data folder's `work` and does too. `roles.moved_from` keeps where it
 *   worked, so the owner is told and can move what they need (roles.list shows it).
 */
export function keepAgentsOutOfTheDataFolder(db: Db): void {
  db.exec(`
    ALTER TABLE connections ADD COLUMN sandbox_required INTEGER NOT NULL DEFAULT 1 CHECK (sandbox_required IN (0, 1));
    ALTER TABLE roles ADD COLUMN moved_from TEXT;
  `);
  // The data folder is the database's own folder; an in-memory database has none.
  const file = db.name;
  if (!file || file === ':memory:') return;
  const dataDir = path.dirname(path.resolve(file));
  const roles = db.prepare('SELECT id, agent FROM roles').all() as Array<{ id: number; agent: string }>;
  const update = db.prepare('UPDATE roles SET agent = ?, moved_from = ? WHERE id = ?');
  for (const role of roles) {
    const agent = JSON.parse(role.agent) as { cwd?: unknown };
    if (typeof agent.cwd !== 'string') {
      update.run(role.agent, path.join(dataDir, 'work'), role.id);
      continue;
    }
    const relative = path.relative(dataDir, agent.cwd);
    if (relative.startsWith('..') || path.isAbsolute(relative)) continue;
    const from = agent.cwd;
    delete agent.cwd;
    update.run(JSON.stringify(agent), from, role.id);
  }
}
