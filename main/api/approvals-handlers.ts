// The app API's methods for what waits for a person (DESIGN §11.9): each connection's
// policy, the list of what waits, and a person's word on it. The access rules decide who
// reads and who decides (../access, through ./authorize); the engine commits a decision
// on a held text with what follows from it.
import { ApiError } from '../../shared/api-contract';
import { approvalAsk } from '../access/allow-rule-lookup';
import { allowingRule, decideRemember, ruleFor } from '../access/allow-rules';
import { approvalTarget } from '../access/lookup';
import { approvalView, pendingApprovalRows, pendingApprovalsFor } from '../access/pending-approvals';
import { approvalDeciders, eventAudience } from '../access/rules';
import type { Person, RememberScope } from '../../shared/domain';
import { transaction } from '../store/database';
import { addAllowRule } from '../store/queries/allow-rules';
import type { Db } from '../store/database';
import { approvalConnection, getApproval, type ApprovalRow } from '../store/queries/approvals';
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

/** The rule "always allow" on this approval makes, if the person may make it; refused in words otherwise. */
function authorizedRemember(db: Db, person: Person, row: ApprovalRow, scope: RememberScope) {
  const ask = approvalAsk(db, row);
  if (!ask)
    throw new ApiError(
      'invalid',
      'always allow is for what a peer’s role sends, receives or asks: this has no peer role',
    );
  const decision = decideRemember(person, approvalDeciders(approvalTarget(db, row)), scope);
  if (!decision.allowed)
    throw new ApiError(
      'forbidden',
      decision.code === 'forbidden'
        ? `only ${decision.needs} can always allow ${scope === 'peer-role' ? 'a peer role everywhere' : 'this'}`
        : 'only those who decide this can always allow it',
    );
  return ruleFor(ask, scope);
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

  'approvals.decide': async ({ services, person }, { id, approve, remember }) => {
    const { db } = services;
    const row = authorizedApproval(db, person, id, 'decide');
    if (row.state !== 'pending') throw tooLate(db, row);
    // Checked before deciding: a choice that may not be remembered decides nothing.
    const rule = remember ? authorizedRemember(db, person, row, remember) : undefined;
    const by = { id: person.id, name: person.name };
    const decideOne = (approvalId: number, kind: ApprovalRow['kind']) =>
      kind === 'permission'
        ? services.runs.permissions.decide(approvalId, approve, by)
        : engineCall(() => services.engine.decideHeld(approvalId, approve, by));
    const outcome = await decideOne(id, row.kind);
    if (!outcome.decided) throw tooLate(db, outcome.approval);
    if (rule) {
      transaction(db, () => addAllowRule(db, { ...rule, created_by: person.id, created_by_name: person.name }));
      services.events.emit(
        { type: 'changed', kind: 'connection', id: rule.connection_id },
        eventAudience.installation(),
      );
      // What already waits and the rule now covers goes through too, oldest first, as the person chose.
      for (const other of pendingApprovalRows(db, person)) {
        const ask = approvalAsk(db, other);
        if (!ask || !allowingRule([{ ...rule, created_by: person.id }], ask)) continue;
        if (!decideRemember(person, approvalDeciders(approvalTarget(db, other)), remember!).allowed) continue;
        try {
          await decideOne(other.id, other.kind);
        } catch {
          // One that cannot go now (its connection paused) keeps waiting for a person.
        }
      }
    }
    return approvalView(db, getApproval(db, id)!, person);
  },
};
