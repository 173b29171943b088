import { storedAgentSettingsSchema, type AgentSettings, type Role } from '../../../shared/domain';
import type { Db } from '../database';
import { openAgentSecrets, resealAgentSecrets, sealAgentSecrets } from '../role-secrets';
import { sealsSecrets } from '../secret-box';
import { all, get, insert, run } from '../sql';

interface RoleRow {
  id: number;
  name: string;
  description: string;
  agent: string;
  created_at: string;
}

function toRole(db: Db, row: RoleRow): Role {
  // Parsed on the way out too: a row written by hand or by an older version fails
  // loudly here instead of deep inside an adapter. Only its shape: the characters are
  // checked where settings come in, and a stored one must still show so it can be
  // fixed. Secrets are opened first.
  const agent = storedAgentSettingsSchema.parse(openAgentSecrets(db, JSON.parse(row.agent), row.name));
  return { id: row.id, name: row.name, description: row.description, agent, createdAt: row.created_at };
}

export function listRoles(db: Db): Role[] {
  return all<RoleRow>(db, 'SELECT * FROM roles ORDER BY name').map((row) => toRole(db, row));
}

export function getRole(db: Db, id: number): Role | undefined {
  const row = get<RoleRow>(db, 'SELECT * FROM roles WHERE id = ?', id);
  return row && toRole(db, row);
}

export function getRoleByName(db: Db, name: string): Role | undefined {
  const row = get<RoleRow>(db, 'SELECT * FROM roles WHERE name = ?', name);
  return row && toRole(db, row);
}

/** A role's identity without its agent settings, whose secrets stay sealed: for paths that only look a role up. */
export interface RoleRef {
  id: number;
  name: string;
  createdAt: string;
}

type RoleRefRow = Pick<RoleRow, 'id' | 'name' | 'created_at'>;

const toRoleRef = (row: RoleRefRow): RoleRef => ({ id: row.id, name: row.name, createdAt: row.created_at });

export function roleRefByName(db: Db, name: string): RoleRef | undefined {
  const row = get<RoleRefRow>(db, 'SELECT id, name, created_at FROM roles WHERE name = ?', name);
  return row && toRoleRef(row);
}

export function roleRefById(db: Db, id: number): RoleRef | undefined {
  const row = get<RoleRefRow>(db, 'SELECT id, name, created_at FROM roles WHERE id = ?', id);
  return row && toRoleRef(row);
}

export function insertRole(db: Db, name: string, description: string, agent: AgentSettings): Role {
  const id = insert(
    db,
    'INSERT INTO roles (name, description, agent) VALUES (?, ?, ?)',
    name,
    description,
    JSON.stringify(sealAgentSecrets(db, agent)),
  );
  return getRole(db, id)!;
}

export function updateRole(db: Db, id: number, name: string, description: string, agent: AgentSettings): Role {
  run(
    db,
    'UPDATE roles SET name = ?, description = ?, agent = ? WHERE id = ?',
    name,
    description,
    JSON.stringify(sealAgentSecrets(db, agent)),
    id,
  );
  return getRole(db, id)!;
}

export function deleteRole(db: Db, id: number): void {
  run(db, 'DELETE FROM roles WHERE id = ?', id);
}

export function insertRoleToken(db: Db, roleId: number, tokenHash: string, createdBy: number): void {
  run(db, 'INSERT INTO role_tokens (role_id, token_hash, created_by) VALUES (?, ?, ?)', roleId, tokenHash, createdBy);
}

export function roleRefByTokenHash(db: Db, tokenHash: string): RoleRef | undefined {
  const row = get<RoleRefRow>(
    db,
    'SELECT roles.id, roles.name, roles.created_at FROM role_tokens JOIN roles ON roles.id = role_tokens.role_id WHERE token_hash = ?',
    tokenHash,
  );
  return row && toRoleRef(row);
}

/** Seals the secrets still stored as written (roles from before the box, or from `parley serve`); returns how many roles changed. */
export function sealStoredSecrets(db: Db): number {
  if (!sealsSecrets(db)) return 0;
  let changed = 0;
  for (const row of all<{ id: number; agent: string }>(db, 'SELECT id, agent FROM roles')) {
    const sealed = resealAgentSecrets(db, JSON.parse(row.agent));
    if (!sealed) continue;
    run(db, 'UPDATE roles SET agent = ? WHERE id = ?', JSON.stringify(sealed), row.id);
    changed++;
  }
  return changed;
}
