// The app API's one handler table. Both transports (Electron IPC and the headless
// JSON-RPC socket) call `dispatch`, which validates params against the shared
// contract, checks the session (its person, and the sign-in token it is bound to) and
// runs the handler. Every handler asks the access rules (../access, through ./authorize)
// before it reads or acts, and every event it emits carries the audience those rules
// give; no handler decides on its own who may.
import { conversationAsks, rootAsks } from '../store/queries/asks';
import {
  ApiError,
  describeIssues,
  isMethodName,
  methods,
  type MethodName,
  type ParsedParamsOf,
  type ResultOf,
} from '../../shared/api-contract';
import type { ContextRef, Conversation, Person, Task } from '../../shared/domain';
import { eventAudience } from '../access/rules';
import type { Attention } from '../attention/attention';
import type { ConnectionEngine } from '../engine/engine';
import type { EventHub } from '../events';
import type { PeerNetwork } from '../peer-listener/peer-network';
import { keepStoredSecrets, publicRole } from '../agents/secrets';
import { getConnectionRow, listConnectionRows } from '../store/queries/connections';
import { listThreads, pageThreads } from '../store/queries/thread-lists';
import { log } from '../log';
import { personAuthor, postLine } from '../posting/post-line';
import type { RunManager } from '../runs/run-manager';
import { DISK_FULL_MESSAGE, isDiskFull } from '../store/storage-errors';
import { transaction, type Db } from '../store/database';
import {
  deleteConversation,
  findConversation,
  insertConversation,
  listConversationRows,
  listMessages,
  toConversation,
  type ConversationRow,
  conversationIdsForRole,
} from '../store/queries/conversations';
import {
  countOwners,
  deletePerson,
  deleteSignInTokens,
  getPerson,
  insertPerson,
  insertSignInToken,
  listPeople,
  personBySignInToken,
  signInByTokenHash,
} from '../store/queries/people';
import {
  deleteRole,
  getRole,
  roleRefByName,
  insertRole,
  insertRoleToken,
  listRoles,
  updateRole,
} from '../store/queries/roles';
import { findRun, recentTurns, runLog, runSummary } from '../store/queries/runs';
import {
  deleteTask,
  finishTask,
  getTaskRow,
  insertTask,
  listSubtaskRows,
  listTaskLog,
  listTaskRows,
  taskSubtreeIds,
  toTask,
  type TaskRow,
  taskIdsForRole,
} from '../store/queries/tasks';
import { hashToken, newToken } from '../tokens';
import {
  authorizeTaskTreeDeletion,
  authorizeThreadList,
  authorizedConversation,
  authorizedTask,
  authorizedThread,
  readableConversations,
  readableTasks,
  readableThreads,
  requireOwner,
  requireReader,
} from './authorize';
import { approvalHandlers } from './approvals-handlers';
import { trustHandlers } from './trust-handlers';
import { rememberHandlers } from './remember-handlers';
import { roleSandboxNotes, sandboxHandlers } from './sandbox-handlers';
import type { SandboxStatus } from '../sandbox/sandbox';
import { attentionHandlers } from './attention-handlers';
import { engineCall } from './engine-errors';
import { firstRunHandlers } from './first-run-handlers';
import { ledgerHandlers } from './ledger-handlers';
import { networkHandlers, requireInvitable } from './network-handlers';
import { relayHandlers } from './relay-handlers';
import { pairingHandlers } from './pairing-handlers';
import { searchHandlers } from './search-handlers';
import { sessionEndReasons, type ApiSession, type SessionRegistry } from './session';

export interface ApiServices {
  db: Db;
  events: EventHub;
  runs: RunManager;
  engine: ConnectionEngine;
  network: PeerNetwork;
  sessions: SessionRegistry;
  attention: Attention;
  installation: { id: string; name: string };
  /** Whether agents start in the OS sandbox here; absent: as if it did. */
  sandbox?: SandboxStatus;
}

export interface Call {
  services: ApiServices;
  session: ApiSession;
  person: Person;
}

export type Handler<M extends MethodName> = (
  call: Call,
  params: ParsedParamsOf<M>,
) => ResultOf<M> | Promise<ResultOf<M>>;
export type HandlerTable = { [M in Exclude<MethodName, 'session.signIn'>]: Handler<M> };

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

const taskView = (services: ApiServices, row: TaskRow): Task =>
  toTask(
    row,
    runSummary(services.db, { kind: 'task', id: row.id }, services.runs.stoppingTurns(), services.runs.retryingTurns()),
  );

/** A person's words where a role reads them: the line, and the input that wakes its agent, in one step. */
function personSays<K extends 'conversation' | 'task'>(
  services: ApiServices,
  person: Person,
  place: { kind: K; id: number },
  roleId: number,
  text: string,
  input: 'message' | 'comment',
) {
  return postLine(services, place, { author: personAuthor(person), text, entry: 'comment' }, () =>
    services.runs.addInput(place, roleId, input, text, person.name),
  );
}

function requireRoleExists(db: Db, id: number) {
  const role = getRole(db, id);
  if (!role) throw new ApiError('not_found', `no role ${id}`);
  return role;
}

const everyone = eventAudience.installation();

const handlers: HandlerTable = {
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

  'roles.list': ({ services, person }) => {
    requireReader(person);
    return listRoles(services.db).map((role) => ({ ...publicRole(role), ...roleSandboxNotes(services, role.id) }));
  },
  'roles.create': ({ services, person }, { name, description, agent }) => {
    requireOwner(person, 'create roles');
    if (roleRefByName(services.db, name)) throw new ApiError('conflict', `a role named "${name}" already exists`);
    const role = transaction(services.db, () => insertRole(services.db, name, description ?? '', agent));
    services.events.emit({ type: 'changed', kind: 'role', id: role.id }, everyone);
    // The same view as roles.list gives, sandbox notes included.
    return { ...publicRole(role), ...roleSandboxNotes(services, role.id) };
  },
  'roles.update': ({ services, person }, { id, name, description, agent }) => {
    requireOwner(person, 'change roles');
    const role = requireRoleExists(services.db, id);
    if (name !== undefined && name !== role.name && roleRefByName(services.db, name))
      throw new ApiError('conflict', `a role named "${name}" already exists`);
    const updated = transaction(services.db, () =>
      updateRole(
        services.db,
        id,
        name ?? role.name,
        description ?? role.description,
        agent ? keepStoredSecrets(agent, role.agent) : role.agent,
      ),
    );
    services.events.emit({ type: 'changed', kind: 'role', id }, everyone);
    return { ...publicRole(updated), ...roleSandboxNotes(services, updated.id) };
  },
  'roles.remove': async ({ services, person }, { id }) => {
    requireOwner(person, 'remove roles');
    requireRoleExists(services.db, id);
    const contexts: ContextRef[] = [
      ...conversationIdsForRole(services.db, id).map((cid) => ({ kind: 'conversation' as const, id: cid })),
      ...taskIdsForRole(services.db, id).map((tid) => ({ kind: 'task' as const, id: tid })),
    ];
    await services.engine.deleteRoots(contexts, person.name, () => deleteRole(services.db, id));
    services.events.emit({ type: 'changed', kind: 'role', id }, everyone);
    return { removed: true as const };
  },
  'roles.token': ({ services, person }, { id }) => {
    requireOwner(person, 'make role tokens');
    requireRoleExists(services.db, id);
    const token = newToken('prl');
    transaction(services.db, () => insertRoleToken(services.db, id, hashToken(token), person.id));
    return { token };
  },

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

  'tasks.list': ({ services, person }) =>
    readableTasks(person, listTaskRows(services.db)).map((row) => taskView(services, row)),
  'tasks.create': ({ services, person }, { roleId, title, body, parentId }) => {
    requireReader(person);
    requireRoleExists(services.db, roleId);
    if (parentId !== undefined) authorizedTask(services.db, person, parentId, 'subtask');
    const row = transaction(services.db, () => {
      const row = insertTask(services.db, roleId, parentId ?? null, title, body ?? '', person.id);
      const brief = body?.trim() ? `New task: ${title}\n\n${body.trim()}` : `New task: ${title}`;
      services.runs.addInput({ kind: 'task', id: row.id }, roleId, 'message', brief, person.name);
      return row;
    });
    services.events.emit({ type: 'changed', kind: 'task', id: row.id }, eventAudience.task(row));
    return taskView(services, row);
  },
  'tasks.get': ({ services, person }, { id }) => {
    const row = authorizedTask(services.db, person, id, 'read');
    const run = findRun(services.db, { kind: 'task', id });
    return {
      task: taskView(services, row),
      log: listTaskLog(services.db, id),
      subtasks: readableTasks(person, listSubtaskRows(services.db, id)).map((sub) => taskView(services, sub)),
      turns: run ? recentTurns(services.db, run.id) : [],
      asks: rootAsks(services.db, 'task', id, null),
    };
  },
  'tasks.comment': ({ services, person }, { id, text }) => {
    const row = authorizedTask(services.db, person, id, 'comment');
    // Authorized a moment ago in this same step: it is there.
    return personSays(services, person, { kind: 'task', id }, row.role_id, text, 'comment')!.entry;
  },
  'tasks.finish': ({ services, person }, { id }) => {
    const row = authorizedTask(services.db, person, id, 'finish');
    if (row.status === 'finished') return taskView(services, row);
    postLine(
      services,
      { kind: 'task', id },
      { author: personAuthor(person), text: 'finished the task', entry: 'status' },
      () => finishTask(services.db, id),
    );
    return taskView(services, getTaskRow(services.db, id)!);
  },
  'tasks.stop': ({ services, person }, { id }) => {
    authorizedTask(services.db, person, id, 'stop');
    return services.runs.stop({ kind: 'task', id }, person.name);
  },
  'tasks.delete': async ({ services, person }, { id }) => {
    authorizedTask(services.db, person, id, 'delete');
    const tree = taskSubtreeIds(services.db, id)
      .map((taskId) => getTaskRow(services.db, taskId))
      .filter((task): task is TaskRow => task !== undefined);
    authorizeTaskTreeDeletion(services.db, person, tree);
    const subtree = tree.map((task) => task.id);
    // The task and its subtasks, their agent conversations' closing and their agents' stops: one step.
    await services.engine.deleteRoots(
      subtree.map((taskId): ContextRef => ({ kind: 'task', id: taskId })),
      person.name,
      () => deleteTask(services.db, id),
    );
    for (const task of tree)
      services.events.emit({ type: 'changed', kind: 'task', id: task.id }, eventAudience.task(task));
    return { deleted: true as const };
  },

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

  ...networkHandlers,
  ...relayHandlers,
  ...pairingHandlers,
  ...searchHandlers,
  ...firstRunHandlers,
  ...ledgerHandlers,
  ...approvalHandlers,
  ...trustHandlers,
  ...rememberHandlers,
  ...attentionHandlers,
  ...sandboxHandlers,
};

function connectionView(services: ApiServices, id: number) {
  const row = getConnectionRow(services.db, id);
  if (!row) throw new ApiError('not_found', `no connection ${id}`);
  return services.engine.summary(row);
}

/**
 * The session's person as the store has them now (their kind may have changed), while
 * the session is still theirs: its sign-in token still exists and still belongs to them,
 * or (a session bound to a person alone) they are still here. Otherwise the session ends.
 */
function currentPerson(services: ApiServices, session: ApiSession): Person {
  const bound = session.person;
  if (!bound) throw new ApiError('unauthenticated', 'sign in first (session.signIn)');
  const person =
    session.signInTokenId === undefined
      ? getPerson(services.db, bound.id)
      : personBySignInToken(services.db, session.signInTokenId);
  if (person?.id === bound.id) return person;
  const reason = getPerson(services.db, bound.id) ? sessionEndReasons.tokenReplaced : sessionEndReasons.removed;
  services.sessions.end(session, reason);
  throw new ApiError('unauthenticated', reason);
}

/** Validates and runs one app API call for a session. Throws ApiError only. */
export async function dispatch(
  services: ApiServices,
  session: ApiSession,
  method: string,
  params: unknown,
): Promise<unknown> {
  if (!isMethodName(method)) throw new ApiError('invalid', `unknown method "${method}"`);
  const parsed = methods[method].params.safeParse(params ?? {});
  if (!parsed.success) throw new ApiError('invalid', describeIssues(parsed.error));
  try {
    if (method === 'session.signIn') {
      const signIn = signInByTokenHash(services.db, hashToken((parsed.data as { token: string }).token));
      if (!signIn) throw new ApiError('unauthenticated', 'this sign-in token is not valid');
      session.person = signIn.person;
      session.signInTokenId = signIn.tokenId;
      services.sessions.add(session);
      return { person: signIn.person };
    }
    const person = currentPerson(services, session);
    session.person = person;
    const handler = handlers[method] as Handler<typeof method>;
    return await handler({ services, session, person }, parsed.data as never);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    if (isDiskFull(error)) {
      log.warn('refused an app API call: the disk is full', { method });
      throw new ApiError('disk_full', DISK_FULL_MESSAGE);
    }
    log.error('app API failure', { method, error: String((error as Error).stack ?? error) });
    throw new ApiError('internal', 'something went wrong inside Parley; the details are in its log');
  }
}
