// The app API's methods for the agents' OS sandbox (docs/security.md): whether it runs
// here, and the one connection setting that lets a peer's runs start without it.
import { ApiError } from '../../shared/api-contract';
import { eventAudience } from '../access/rules';
import { roleMovedFrom, setSandboxRequired } from '../sandbox/folders';
import { getConnectionRow } from '../store/queries/connections';
import { requireOwner, requireReader } from './authorize';
import type { ApiServices, HandlerTable } from './handlers';

/** What the role shows of the sandbox: that it is missing here, and where it worked before it moved. */
export function roleSandboxNotes(services: ApiServices, roleId: number): { unsandboxed?: string; movedFrom?: string } {
  const status = services.sandbox;
  const movedFrom = roleMovedFrom(services.db, roleId);
  return {
    ...(status && !status.available ? { unsandboxed: status.reason } : {}),
    ...(movedFrom ? { movedFrom } : {}),
  };
}

export const sandboxHandlers: Pick<HandlerTable, 'connections.setSandbox' | 'sandbox.get'> = {
  'connections.setSandbox': ({ services, person }, { id, required }) => {
    requireOwner(person, 'choose whether a peer’s runs need the sandbox');
    const row = getConnectionRow(services.db, id);
    if (!row || row.removed_at !== null) throw new ApiError('not_found', `no connection ${id}`);
    setSandboxRequired(services.db, id, required);
    services.events.emit({ type: 'changed', kind: 'connection', id }, eventAudience.installation());
    return { id, required };
  },

  'sandbox.get': ({ services, person }) => {
    requireReader(person);
    const status = services.sandbox ?? { available: true };
    return { available: status.available, reason: status.available ? null : status.reason };
  },
};
