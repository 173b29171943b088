// The invitations an installation has out: listed for Settings, cancelled by owners.
// Making and redeeming them is the engine's (../../engine).
import type { Db } from '../database';
import { all, get, run } from '../sql';

export interface PendingInvitationRow {
  id: number;
  roles: string;
  created_by: number | null;
  created_by_name: string | null;
  created_at: string;
  expires_at: string;
}

/** Invitations not used yet that have not expired at `now`, newest first. */
export function pendingInvitations(db: Db, now: Date = new Date()): PendingInvitationRow[] {
  return all<PendingInvitationRow>(
    db,
    `SELECT i.id, i.roles, i.created_by, p.name AS created_by_name, i.created_at, i.expires_at
       FROM invitations i LEFT JOIN people p ON p.id = i.created_by
      WHERE i.used_at IS NULL AND i.expires_at > ?
      ORDER BY i.id DESC`,
    now.toISOString(),
  );
}

export function invitationState(
  db: Db,
  id: number,
): { used_at: string | null; expires_at: string; connection_name: string | null } | undefined {
  return get(
    db,
    `SELECT i.used_at, i.expires_at, c.name AS connection_name
       FROM invitations i LEFT JOIN connections c ON c.id = i.connection_id WHERE i.id = ?`,
    id,
  );
}

/** The row goes: its secret's hash with it, so nothing can redeem it any more. */
export function deleteInvitation(db: Db, id: number): void {
  run(db, 'DELETE FROM invitations WHERE id = ?', id);
}
