// The app API's methods for what waits for a person (DESIGN §11.9): each connection's
// policy, the list of what waits, and a person's word on it. The access rules decide who
// reads and who decides (../access, through ./authorize); the engine commits a decision
// on a held text with what follows from it.
import { ApiError } from '../../shared/api-contract';
import { approvalView, pendingApprovalsFor } from '../access/pending-approvals';
import type { Db } from '../store/database';
import { approvalConnection, type ApprovalRow } from '../store/queries/approvals';
import { getConnectionRow } from '../store/queries/connections';
import { authorizedApproval, requireOwner } from './authorize';
import { engineCall } from './engine-errors';
import type { HandlerTable } from './handlers';

const settled = (row: ApprovalRow): string =>
  row.state === 'cancelled'
    ? `this no longer waits: ${row.reason ?? 'it was cancelled'}`
    : `this was already ${row.state}${row.decided_by_name ? ` by ${row.decided_by_name}` : ''}`;

/** Why a decision came too late: a revoke says so with its own code, anything else is a conflict. */
function tooLate(db: Db, row: ApprovalRow): ApiError {
  const connection = row.state === 'cancelled' && row.reason === 'revoke' ? approvalConnection(db, row.id) : undefined;
  if (!connection) return new ApiError('conflict', settled(row));
  const who =
    connection.revoked_by === 'peer'
      ? `${connection.name} revoked the connection`
      : `the connection to ${connection.name} was revoked here`;
  return new ApiError(
    'revoked',
    `${who}: this text was dropped and ${row.kind === 'incoming' ? 'will not reach the agent' : 'was not sent'}`,
  );
}

export const approvalHandlers: Pick<HandlerTable, 'connections.setPolicy' | 'approvals.list' | 'approvals.decide'> = {
  'connections.setPolicy': ({ services, person }, { id, outgoing, incoming }) => {
    requireOwner(person, 'choose what waits for approval');
    engineCall(() =>
      services.engine.setPolicy(id, { ...(outgoing ? { outgoing } : {}), ...(incoming ? { incoming } : {}) }),
    );
    const row = getConnectionRow(services.db, id);
    if (!row) throw new ApiError('not_found', `no connection ${id}`);
    return services.engine.summary(row);
  },

  'approvals.list': ({ services, person }) => pendingApprovalsFor(services.db, person),

  'approvals.decide': async ({ services, person }, { id, approve }) => {
    const { db } = services;
    const row = authorizedApproval(db, person, id, 'decide');
    if (row.state !== 'pending') throw tooLate(db, row);
    const by = { id: person.id, name: person.name };
    const outcome =
      row.kind === 'permission'
        ? services.runs.permissions.decide(id, approve, by)
        : await engineCall(() => services.engine.decideHeld(id, approve, by));
    if (!outcome.decided) throw tooLate(db, outcome.approval);
    return approvalView(db, outcome.approval, person);
  },
};
