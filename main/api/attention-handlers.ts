// The app API's methods for what waits on a person (attention.*). The list holds only
// what its person may read (../attention decides through ../access); marking something
// read asks first, through ./authorize, whether they may read it.
import { eventAudience, inAudience } from '../access/rules';
import { getConnectionRow } from '../store/queries/connections';
import { ApiError } from '../../shared/api-contract';
import { authorizedConversation, authorizedTask, authorizedThread, requireReader } from './authorize';
import type { HandlerTable } from './handlers';

export const attentionHandlers: Pick<HandlerTable, 'attention.list' | 'attention.markRead'> = {
  'attention.list': ({ services, person }, { limit }) => {
    requireReader(person);
    return services.attention.list(person, limit ?? 100);
  },
  'attention.markRead': ({ services, person }, target) => {
    const { db } = services;
    switch (target.kind) {
      case 'conversation':
        authorizedConversation(db, person, target.id, 'read');
        break;
      case 'task':
        authorizedTask(db, person, target.id, 'read');
        break;
      case 'thread':
        authorizedThread(db, person, target.id, 'read');
        break;
      case 'connection':
        if (!getConnectionRow(db, target.id)) throw new ApiError('not_found', `no connection ${target.id}`);
        // What a peer did to a connection is news for owners only: nothing of it to mark for a member.
        if (!inAudience(person, eventAudience.connectionNotice()))
          throw new ApiError('forbidden', 'only an owner hears what a peer did to a connection');
        break;
      case 'peerStarted':
      case 'all':
        requireReader(person);
        break;
    }
    services.attention.markRead(person, target);
    return { marked: true as const };
  },
};
