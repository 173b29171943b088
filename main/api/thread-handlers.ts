// The app API's methods for agent conversations (threads.*): lists and pages of those a
// person may read, one with its texts, turns and run log, its stop and its withdrawal.
import { findRun, recentTurns, runLog } from '../store/queries/runs';
import { listThreads, pageThreads } from '../store/queries/thread-lists';
import { authorizeThreadList, authorizedThread, readableThreads } from './authorize';
import { engineCall } from './engine-errors';
import type { HandlerTable } from './handlers';

export const threadHandlers: Pick<HandlerTable, Extract<keyof HandlerTable, `threads.${string}`>> = {
  'threads.list': ({ services, person }, params) => {
    const { db, engine } = services;
    authorizeThreadList(db, person, params);
    return engine.threadSummaries(readableThreads(db, person, listThreads(db, params)));
  },
  'threads.page': ({ services, person }, params) => {
    const { db, engine } = services;
    const { offset, limit, ...filter } = params;
    authorizeThreadList(db, person, filter);
    // Whoever may ask for one of these lists reads every agent conversation in it (the
    // rules say so); each row is asked again all the same, and one refused leaves the page.
    const page = pageThreads(db, filter, offset ?? 0, limit ?? 100);
    const readable = readableThreads(db, person, page.rows);
    return {
      total: page.total - (page.rows.length - readable.length),
      threads: engine.threadSummaries(readable),
    };
  },
  'threads.get': ({ services, person }, { id, textsLimit, textsBefore }) => {
    const { db, engine, runs } = services;
    const thread = authorizedThread(db, person, id, 'read');
    const run = findRun(db, { kind: 'thread', id });
    return {
      thread: engine.threadSummary(thread),
      texts: engine.texts(id, textsLimit ?? 500, textsBefore),
      turns: run ? recentTurns(db, run.id) : [],
      live: run ? runs.liveOutput(run.id) : [],
      runLog: run ? runLog(db, run.id) : [],
    };
  },
  'threads.stop': ({ services, person }, { id }) => {
    authorizedThread(services.db, person, id, 'stop');
    return services.engine.stopThread(id, person.name);
  },
  'threads.withdraw': ({ services, person }, { id }) => {
    authorizedThread(services.db, person, id, 'withdraw');
    return engineCall(() => services.engine.withdraw(id, person.name));
  },
};
