// The app API's methods for what pairing leaves behind: the invitations still out
// (everyone reads them, as they read connections; owners cancel them) and revoked
// connections, which owners take off the list. A removed connection's row stays: its
// agent conversations keep their history where DESIGN §7 lets people read them, and
// the peer's certificate stays refused.
import { ApiError } from '../../shared/api-contract';
import { transaction } from '../store/database';
import { getConnectionRow, markConnectionRemoved } from '../store/queries/connections';
import { deleteInvitation, invitationState, pendingInvitations } from '../store/queries/invitations';
import { requireOwner, requireReader } from './authorize';
import type { HandlerTable } from './handlers';

function roleNames(json: string): string[] {
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) ? parsed.filter((name): name is string => typeof name === 'string') : [];
  } catch {
    return [];
  }
}

export const pairingHandlers: Pick<HandlerTable, 'invitations.list' | 'invitations.cancel' | 'connections.remove'> = {
  'invitations.list': ({ services, person }) => {
    requireReader(person);
    return pendingInvitations(services.db).map((row) => ({
      id: row.id,
      roles: roleNames(row.roles),
      createdBy: row.created_by === null ? null : { id: row.created_by, name: row.created_by_name ?? 'someone' },
      createdAt: row.created_at,
      expiresAt: row.expires_at,
    }));
  },

  'invitations.cancel': ({ services, person }, { id }) => {
    requireOwner(person, 'cancel invitations');
    transaction(services.db, () => {
      const invitation = invitationState(services.db, id);
      if (!invitation) throw new ApiError('not_found', `no invitation ${id}`);
      if (invitation.used_at !== null)
        throw new ApiError(
          'conflict',
          `invitation ${id} was already used${invitation.connection_name ? `: it paired you with ${invitation.connection_name}` : ''}`,
        );
      deleteInvitation(services.db, id);
    });
    services.events.emit({ type: 'changed', kind: 'invitation', id }, 'everyone');
    return { cancelled: true as const };
  },

  'connections.remove': ({ services, person }, { id }) => {
    requireOwner(person, 'remove connections');
    transaction(services.db, () => {
      const row = getConnectionRow(services.db, id);
      if (!row || row.removed_at !== null) throw new ApiError('not_found', `no connection ${id}`);
      if (row.status !== 'revoked')
        throw new ApiError(
          'conflict',
          `${row.name} is ${row.status === 'paused' ? 'paused' : 'still connected'}; only a revoked connection can be removed (revoke it first)`,
        );
      markConnectionRemoved(services.db, id);
    });
    services.events.emit({ type: 'changed', kind: 'connection', id }, 'everyone');
    return { removed: true as const };
  },
};
