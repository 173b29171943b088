// The app API's method for a connection's trust level (DESIGN §12.3): an owner's choice,
// which the run manager reads at each turn's start (main/runs/turn-trust.ts).
import { ApiError } from '../../shared/api-contract';
import { getConnectionRow } from '../store/queries/connections';
import { requireOwner } from './authorize';
import { engineCall } from './engine-errors';
import type { HandlerTable } from './handlers';

export const trustHandlers: Pick<HandlerTable, 'connections.setTrust'> = {
  'connections.setTrust': ({ services, person }, { id, level }) => {
    requireOwner(person, 'choose how far a peer is trusted');
    engineCall(() => services.engine.setTrust(id, level));
    const row = getConnectionRow(services.db, id);
    if (!row) throw new ApiError('not_found', `no connection ${id}`);
    return services.engine.summary(row);
  },
};
