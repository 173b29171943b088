// The app API's side of the home page's first-run checklist: each step is read from
// what the installation holds (the role's agent has answered, a connection exists, a
// role has asked a peer), never ticked by the page; hiding it is per person.
import type { FirstRunState } from '../../shared/api-contract';
import type { Person } from '../../shared/domain';
import { publicRole } from '../agents/secrets';
import { transaction, type Db } from '../store/database';
import {
  dismissFirstRun,
  firstRunDismissed,
  hasLiveConnection,
  personHasAsked,
  readFirstRunNote,
  roleHasAnswered,
} from '../store/queries/first-run';
import { getRole, listRoles } from '../store/queries/roles';
import type { HandlerTable } from './handlers';

function firstRunState(db: Db, person: Person): FirstRunState {
  const note = readFirstRunNote(db);
  const made = note ? getRole(db, note.roleId) : undefined;
  const role = made ?? [...listRoles(db)].sort((a, b) => a.id - b.id)[0] ?? null;
  return {
    offered: note !== undefined,
    dismissed: firstRunDismissed(db, person.id),
    role: role && publicRole(role),
    detected: made && note ? { adapter: note.adapter, found: note.found } : null,
    steps: {
      agent: role !== null && roleHasAnswered(db, role.id),
      connect: hasLiveConnection(db),
      ask: personHasAsked(db, person.id),
    },
  };
}

export const firstRunHandlers: Pick<HandlerTable, 'firstRun.get' | 'firstRun.dismiss'> = {
  'firstRun.get': ({ services, person }) => firstRunState(services.db, person),
  'firstRun.dismiss': ({ services, person }) => {
    transaction(services.db, () => dismissFirstRun(services.db, person.id));
    return firstRunState(services.db, person);
  },
};
