// The app API's methods for a person's conversations with roles (conversations.*): each
// person opens, reads and writes their own, as the access rules say.
import type { Conversation } from '../../shared/domain';
import { eventAudience } from '../access/rules';
import { conversationAsks } from '../store/queries/asks';
import { transaction } from '../store/database';
import {
  deleteConversation,
  findConversation,
  insertConversation,
  listConversationRows,
  listMessages,
  toConversation,
  type ConversationRow,
} from '../store/queries/conversations';
import { findRun, recentTurns, runSummary } from '../store/queries/runs';
import { authorizedConversation, readableConversations, requireReader } from './authorize';
import type { ApiServices, HandlerTable } from './handlers';
import { personSays } from './person-says';
import { requireRoleExists } from './role-handlers';

const conversationView = (services: ApiServices, row: ConversationRow): Conversation =>
  toConversation(
    services.db,
    row,
    runSummary(
      services.db,
      { kind: 'conversation', id: row.id },
      services.runs.stoppingTurns(),
      services.runs.retryingTurns(),
    ),
  );

export const conversationHandlers: Pick<HandlerTable, Extract<keyof HandlerTable, `conversations.${string}`>> = {
  'conversations.list': ({ services, person }) =>
    readableConversations(person, listConversationRows(services.db, person.id)).map((row) =>
      conversationView(services, row),
    ),
  'conversations.open': ({ services, person }, { roleId }) => {
    requireReader(person);
    requireRoleExists(services.db, roleId);
    const row = transaction(
      services.db,
      () => findConversation(services.db, person.id, roleId) ?? insertConversation(services.db, person.id, roleId),
    );
    services.events.emit({ type: 'changed', kind: 'conversation', id: row.id }, eventAudience.conversation(row));
    return conversationView(services, row);
  },
  'conversations.get': ({ services, person }, { id, limit, before }) => {
    const row = authorizedConversation(services.db, person, id, 'read');
    const run = findRun(services.db, { kind: 'conversation', id });
    const messages = listMessages(services.db, id, limit ?? 200, before);
    // A full page starts somewhere in the history: asks from before its first line are not shown.
    const since = messages.length === (limit ?? 200) ? (messages[0]?.createdAt ?? null) : null;
    return {
      conversation: conversationView(services, row),
      messages,
      turns: run ? recentTurns(services.db, run.id) : [],
      asks: conversationAsks(services.db, id, since),
    };
  },
  'conversations.send': ({ services, person }, { id, text }) => {
    const row = authorizedConversation(services.db, person, id, 'send');
    // Authorized a moment ago in this same step: it is there.
    return personSays(services, person, { kind: 'conversation', id }, row.role_id, text, 'message')!.message;
  },
  'conversations.stop': ({ services, person }, { id }) => {
    authorizedConversation(services.db, person, id, 'stop');
    return services.runs.stop({ kind: 'conversation', id }, person.name);
  },
  'conversations.delete': async ({ services, person }, { id }) => {
    const row = authorizedConversation(services.db, person, id, 'delete');
    // The conversation, its agent conversations' closing and its agents' stops: one step.
    await services.engine.deleteRoots([{ kind: 'conversation', id }], person.name, () =>
      deleteConversation(services.db, id),
    );
    services.events.emit({ type: 'changed', kind: 'conversation', id }, eventAudience.conversation(row));
    return { deleted: true as const };
  },
};
