// "Always allow" rules (migration 0027): what a person chose to let through without
// asking again. Which ask a rule lets through is the access rules' (access/allow-rules.ts).
import type { ApprovalKind, ContextKind } from '../../../shared/domain';
import type { Db } from '../database';
import { all, get, insert, run } from '../sql';

export interface AllowRuleRow {
  id: number;
  connection_id: number;
  peer_role: string;
  kind: ApprovalKind;
  tool: string | null;
  root_kind: ContextKind | null;
  root_id: number | null;
  created_by: number | null;
  created_by_name: string;
  created_at: string;
}

/** Every rule for one peer role of a connection (few: one per choice a person made). */
export function allowRulesFor(db: Db, connectionId: number, peerRole: string): AllowRuleRow[] {
  return all<AllowRuleRow>(
    db,
    'SELECT * FROM allow_rules WHERE connection_id = ? AND peer_role = ? ORDER BY id',
    connectionId,
    peerRole,
  );
}

/** Every rule of a connection, or of all connections, oldest first. */
export function listAllowRules(db: Db, connectionId?: number): AllowRuleRow[] {
  return connectionId === undefined
    ? all<AllowRuleRow>(db, 'SELECT * FROM allow_rules ORDER BY connection_id, id')
    : all<AllowRuleRow>(db, 'SELECT * FROM allow_rules WHERE connection_id = ? ORDER BY id', connectionId);
}

export function getAllowRule(db: Db, id: number): AllowRuleRow | undefined {
  return get<AllowRuleRow>(db, 'SELECT * FROM allow_rules WHERE id = ?', id);
}

/** Adds a rule, or returns the one already made for the same choice. */
export function addAllowRule(db: Db, rule: Omit<AllowRuleRow, 'id' | 'created_at'>): number {
  const existing = get<{ id: number }>(
    db,
    `SELECT id FROM allow_rules WHERE connection_id = ? AND peer_role = ? AND kind = ? AND tool IS ?
       AND root_kind IS ? AND root_id IS ?`,
    rule.connection_id,
    rule.peer_role,
    rule.kind,
    rule.tool,
    rule.root_kind,
    rule.root_id,
  );
  if (existing) return existing.id;
  return insert(
    db,
    `INSERT INTO allow_rules (connection_id, peer_role, kind, tool, root_kind, root_id, created_by, created_by_name)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    rule.connection_id,
    rule.peer_role,
    rule.kind,
    rule.tool,
    rule.root_kind,
    rule.root_id,
    rule.created_by,
    rule.created_by_name,
  );
}

export function deleteAllowRule(db: Db, id: number): boolean {
  return run(db, 'DELETE FROM allow_rules WHERE id = ?', id).changes > 0;
}
