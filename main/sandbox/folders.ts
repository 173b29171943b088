// Where roles work, and the connection setting that lets runs for a peer start without a
// sandbox. Roles' folders are outside the data folder, which agents cannot read.
import path from 'node:path';
import type { AgentContext } from '../agents/types';
import type { Db } from '../store/database';
import { get, run } from '../store/sql';

/** `~/.local/share/parley` → `~/.local/share/parley-roles`: beside the data folder, never in it. */
export function defaultRolesDir(dataDir: string): string {
  const resolved = path.resolve(dataDir);
  return path.join(path.dirname(resolved), `${path.basename(resolved)}-roles`);
}

/** A role's own folder, by id: a rename keeps it. */
export function roleFolder(rolesDir: string, roleId: number): string {
  return path.join(rolesDir, `role-${roleId}`);
}

/** Whether an owner allowed the peer this run works for to have runs without a sandbox. */
export function unsandboxedAllowed(db: Db, context: AgentContext | null): boolean {
  if (!context?.peer) return false;
  const row = get<{ sandbox_required: number }>(
    db,
    'SELECT sandbox_required FROM connections WHERE name = ? AND removed_at IS NULL',
    // PEER/ROLE: a connection's name never holds a slash.
    context.peer.split('/')[0]!,
  );
  return row !== undefined && row.sandbox_required === 0;
}

export function setSandboxRequired(db: Db, connectionId: number, required: boolean): void {
  run(db, 'UPDATE connections SET sandbox_required = ? WHERE id = ?', required ? 1 : 0, connectionId);
}

export function sandboxRequired(db: Db, connectionId: number): boolean {
  return (
    get<{ sandbox_required: number }>(db, 'SELECT sandbox_required FROM connections WHERE id = ?', connectionId)
      ?.sandbox_required !== 0
  );
}

/** Where a role worked before it moved out of the data folder, until its owner has seen it. */
export function roleMovedFrom(db: Db, roleId: number): string | null {
  return (
    get<{ moved_from: string | null }>(db, 'SELECT moved_from FROM roles WHERE id = ?', roleId)?.moved_from ?? null
  );
}
