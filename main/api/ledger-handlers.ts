// `ledger.get`: what a conversation's or a task's roles said to other installations on its
// people's behalf (DESIGN §12.8). Whoever reads the root reads its record, agent
// conversation by agent conversation as the access rules allow; Markdown on request.
import { readLedger } from '../store/queries/ledger';
import { authorizedConversation, authorizedTask, readableThreads } from './authorize';
import type { HandlerTable } from './handlers';
import { ledgerMarkdown } from './ledger-markdown';

export const ledgerHandlers: Pick<HandlerTable, 'ledger.get'> = {
  'ledger.get': ({ services, person }, { root, format }) => {
    const { db } = services;
    const title =
      root.kind === 'conversation'
        ? `${person.name} and ${authorizedConversation(db, person, root.id, 'read').role_name}`
        : authorizedTask(db, person, root.id, 'read').title;
    const ledger = readLedger(db, { ...root, title }, (rows) => readableThreads(db, person, rows));
    return { ledger, markdown: format === 'markdown' ? ledgerMarkdown(ledger) : null };
  },
};
