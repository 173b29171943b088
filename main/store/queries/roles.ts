import { agentSettingsSchema, type AgentSettings, type Role } from '../../../shared/domain';
import type { Db } from '../database';
import { all, get, insert, run } from '../sql';

interface RoleRow {
  id: number;
  name: string;
  description: string;
  agent: string;
  created_at: string;
}

function toRole(row: RoleRow): Role {
  // Parsed on the way out too: a row written by hand or by an older version fails
  // loudly here instead of deep inside an adapter.
  const agent = agentSettingsSchema.parse(JSON.parse(row.agent));
  return { id: row.id, name: row.name, description: row.description, agent, createdAt: row.created_at };
}

export function listRoles(db: Db): Role[] {
  return all<RoleRow>(db, 'SELECT * FROM roles ORDER BY name').map(toRole);
}

export function getRole(db: Db, id: number): Role | undefined {
  const row = get<RoleRow>(db, 'SELECT * FROM roles WHERE id = ?', id);
  return row && toRole(row);
}

export function getRoleByName(db: Db, name: string): Role | undefined {
  const row = get<RoleRow>(db, 'SELECT * FROM roles WHERE name = ?', name);
  return row && toRole(row);
}

export function insertRole(db: Db, name: string, description: string, agent: AgentSettings): Role {
  const id = insert(
    db,
    'INSERT INTO roles (name, description, agent) VALUES (?, ?, ?)',
    name,
    description,
    JSON.stringify(agent),
  );
  return getRole(db, id)!;
}

export function updateRole(db: Db, id: number, name: string, description: string, agent: AgentSettings): Role {
  run(
    db,
    'UPDATE roles SET name = ?, description = ?, agent = ? WHERE id = ?',
    name,
    description,
    JSON.stringify(agent),
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

export function roleByTokenHash(db: Db, tokenHash: string): Role | undefined {
  const row = get<RoleRow>(
    db,
    'SELECT roles.* FROM role_tokens JOIN roles ON roles.id = role_tokens.role_id WHERE token_hash = ?',
    tokenHash,
  );
  return row && toRole(row);
}
