// The app API's methods for roles (roles.*): everyone reads them, with their sandbox
// notes and never their stored secrets; only owners create, change, remove or make tokens.
import { ApiError } from '../../shared/api-contract';
import type { ContextRef } from '../../shared/domain';
import { eventAudience } from '../access/rules';
import { keepStoredSecrets, publicRole } from '../agents/secrets';
import { transaction, type Db } from '../store/database';
import { conversationIdsForRole } from '../store/queries/conversations';
import {
  deleteRole,
  getRole,
  insertRole,
  insertRoleToken,
  listRoles,
  roleRefByName,
  updateRole,
} from '../store/queries/roles';
import { taskIdsForRole } from '../store/queries/tasks';
import { hashToken, newToken } from '../tokens';
import { requireOwner, requireReader } from './authorize';
import type { HandlerTable } from './handlers';
import { roleSandboxNotes } from './sandbox-handlers';

const everyone = eventAudience.installation();

export function requireRoleExists(db: Db, id: number) {
  const role = getRole(db, id);
  if (!role) throw new ApiError('not_found', `no role ${id}`);
  return role;
}

export const roleHandlers: Pick<HandlerTable, Extract<keyof HandlerTable, `roles.${string}`>> = {
  'roles.list': ({ services, person }) => {
    requireReader(person);
    return listRoles(services.db).map((role) => ({ ...publicRole(role), ...roleSandboxNotes(services, role.id) }));
  },
  'roles.create': ({ services, person }, { name, description, agent }) => {
    requireOwner(person, 'create roles');
    if (roleRefByName(services.db, name)) throw new ApiError('conflict', `a role named "${name}" already exists`);
    const role = transaction(services.db, () => insertRole(services.db, name, description ?? '', agent));
    services.events.emit({ type: 'changed', kind: 'role', id: role.id }, everyone);
    // The same view as roles.list gives, sandbox notes included.
    return { ...publicRole(role), ...roleSandboxNotes(services, role.id) };
  },
  'roles.update': ({ services, person }, { id, name, description, agent }) => {
    requireOwner(person, 'change roles');
    const role = requireRoleExists(services.db, id);
    if (name !== undefined && name !== role.name && roleRefByName(services.db, name))
      throw new ApiError('conflict', `a role named "${name}" already exists`);
    const updated = transaction(services.db, () =>
      updateRole(
        services.db,
        id,
        name ?? role.name,
        description ?? role.description,
        agent ? keepStoredSecrets(agent, role.agent) : role.agent,
      ),
    );
    services.events.emit({ type: 'changed', kind: 'role', id }, everyone);
    return { ...publicRole(updated), ...roleSandboxNotes(services, updated.id) };
  },
  'roles.remove': async ({ services, person }, { id }) => {
    requireOwner(person, 'remove roles');
    requireRoleExists(services.db, id);
    const contexts: ContextRef[] = [
      ...conversationIdsForRole(services.db, id).map((cid) => ({ kind: 'conversation' as const, id: cid })),
      ...taskIdsForRole(services.db, id).map((tid) => ({ kind: 'task' as const, id: tid })),
    ];
    await services.engine.deleteRoots(contexts, person.name, () => deleteRole(services.db, id));
    services.events.emit({ type: 'changed', kind: 'role', id }, everyone);
    return { removed: true as const };
  },
  'roles.token': ({ services, person }, { id }) => {
    requireOwner(person, 'make role tokens');
    requireRoleExists(services.db, id);
    const token = newToken('prl');
    transaction(services.db, () => insertRoleToken(services.db, id, hashToken(token), person.id));
    return { token };
  },
};
