// The app API's methods for the session's own person and the people here (people.*):
// everyone signed in reads the list; only owners add, remove or reissue sign-in tokens.
import { ApiError } from '../../shared/api-contract';
import type { ContextRef } from '../../shared/domain';
import { eventAudience } from '../access/rules';
import { transaction } from '../store/database';
import { listConversationRows } from '../store/queries/conversations';
import {
  countOwners,
  deletePerson,
  deleteSignInTokens,
  getPerson,
  insertPerson,
  insertSignInToken,
  listPeople,
} from '../store/queries/people';
import { hashToken, newToken } from '../tokens';
import { requireOwner, requireReader } from './authorize';
import type { HandlerTable } from './handlers';
import { sessionEndReasons } from './session';

const everyone = eventAudience.installation();

export const peopleHandlers: Pick<HandlerTable, 'session.whoami' | Extract<keyof HandlerTable, `people.${string}`>> = {
  'session.whoami': ({ person, services }) => ({ person, installation: services.installation }),

  'people.list': ({ services, person }) => {
    requireReader(person);
    return listPeople(services.db);
  },
  'people.add': ({ services, person }, { name, kind }) => {
    requireOwner(person, 'add people');
    const token = newToken('pst');
    const added = transaction(services.db, () => {
      const added = insertPerson(services.db, name, kind);
      insertSignInToken(services.db, added.id, hashToken(token), 'sign-in');
      return added;
    });
    services.events.emit({ type: 'changed', kind: 'person', id: added.id }, everyone);
    return { person: added, token };
  },
  'people.remove': async ({ services, person }, { id }) => {
    requireOwner(person, 'remove people');
    const target = getPerson(services.db, id);
    if (!target) throw new ApiError('not_found', `no person ${id}`);
    if (target.id === person.id) throw new ApiError('conflict', 'you cannot remove yourself; ask another owner');
    const requireAnotherOwner = () => {
      if (getPerson(services.db, id)?.kind === 'owner' && countOwners(services.db) <= 1)
        throw new ApiError('conflict', 'an installation needs at least one owner');
    };
    requireAnotherOwner();
    const contexts = listConversationRows(services.db, id).map((row): ContextRef => ({
      kind: 'conversation',
      id: row.id,
    }));
    // The person's conversations are roots: deleted with their agent conversations in one step.
    await services.engine.deleteRoots(
      contexts,
      person.name,
      () => {
        // Checked inside the delete's transaction: meanwhile another owner may have gone, or the caller.
        const caller = getPerson(services.db, person.id);
        if (!caller) throw new ApiError('unauthenticated', sessionEndReasons.removed);
        requireOwner(caller, 'remove people');
        requireAnotherOwner();
        deletePerson(services.db, id);
      },
      // At once, before anything else is emitted: no call and no event reaches their sessions from here on.
      () => services.sessions.endPerson(id, sessionEndReasons.removed),
    );
    services.events.emit({ type: 'changed', kind: 'person', id }, everyone);
    return { removed: true as const };
  },
  'people.reissueToken': ({ services, person }, { id }) => {
    requireOwner(person, 'reissue sign-in tokens');
    if (!getPerson(services.db, id)) throw new ApiError('not_found', `no person ${id}`);
    const token = newToken('pst');
    const replaced = transaction(services.db, () => {
      const replaced = deleteSignInTokens(services.db, id);
      insertSignInToken(services.db, id, hashToken(token), 'sign-in');
      return replaced;
    });
    services.sessions.endTokens(replaced, sessionEndReasons.tokenReplaced);
    return { token };
  },
};
