// The app API's methods for connections to peers (connections.*): everyone reads them;
// only owners invite, accept, pause, revoke, expose roles or change queue limits.
import { ApiError } from '../../shared/api-contract';
import { getConnectionRow, listConnectionRows } from '../store/queries/connections';
import { requireOwner, requireReader } from './authorize';
import { engineCall } from './engine-errors';
import type { ApiServices, HandlerTable } from './handlers';
import { requireInvitable } from './network-handlers';

export const connectionHandlers: Pick<
  HandlerTable,
  | 'connections.list'
  | 'connections.invite'
  | 'connections.accept'
  | 'connections.pause'
  | 'connections.unpause'
  | 'connections.revoke'
  | 'connections.expose'
  | 'connections.setQueueLimit'
> = {
  'connections.list': ({ services, person }) => {
    requireReader(person);
    return listConnectionRows(services.db).map((row) => services.engine.summary(row));
  },
  'connections.invite': ({ services, person }, { roles, expiresInMinutes }) => {
    requireOwner(person, 'invite peers');
    requireInvitable(services.network);
    const invitation = engineCall(() => services.engine.invite(person.id, roles ?? [], expiresInMinutes));
    services.events.emit({ type: 'changed', kind: 'invitation', id: 0 }, 'everyone');
    return invitation;
  },
  'connections.accept': async ({ services, person }, { code, roles }) => {
    requireOwner(person, 'accept invitations');
    const row = await engineCall(() => services.engine.accept(code, roles ?? []));
    return services.engine.summary(row);
  },
  'connections.pause': async ({ services, person }, { id }) => {
    requireOwner(person, 'pause connections');
    await engineCall(() => services.engine.pause(id, person.name));
    return connectionView(services, id);
  },
  'connections.unpause': ({ services, person }, { id }) => {
    requireOwner(person, 'unpause connections');
    engineCall(() => services.engine.unpause(id));
    return connectionView(services, id);
  },
  'connections.revoke': async ({ services, person }, { id }) => {
    requireOwner(person, 'revoke connections');
    await engineCall(() => services.engine.revoke(id, person.name));
    return connectionView(services, id);
  },
  'connections.expose': ({ services, person }, { id, roles }) => {
    requireOwner(person, 'choose which roles a peer may address');
    engineCall(() => services.engine.expose(id, roles));
    return connectionView(services, id);
  },
  'connections.setQueueLimit': ({ services, person }, { id, limit }) => {
    requireOwner(person, 'change queue limits');
    engineCall(() => services.engine.setQueueLimit(id, limit));
    return connectionView(services, id);
  },
};

function connectionView(services: ApiServices, id: number) {
  const row = getConnectionRow(services.db, id);
  if (!row) throw new ApiError('not_found', `no connection ${id}`);
  return services.engine.summary(row);
}
