// The store's side of the access rules: reads the few columns ./rules.ts decides on,
// for callers that hold an id or a row rather than the facts themselves. Each read is
// one lookup by primary key.
import type { ContextRef, PersonKind } from '../../shared/domain';
import type { Db } from '../store/database';
import { get } from '../store/sql';
import {
  audienceOf,
  type ApprovalFacts,
  type ApprovalPlace,
  historyIncludes,
  type Audience,
  type ConversationFacts,
  type RoleCaller,
  type RootFacts,
  type Target,
  type TaskFacts,
  type ThreadFacts,
} from './rules';

const conversationFacts = (db: Db, id: number) =>
  get<ConversationFacts>(db, 'SELECT person_id FROM conversations WHERE id = ?', id);
const taskFacts = (db: Db, id: number) => get<TaskFacts>(db, 'SELECT id, created_by FROM tasks WHERE id = ?', id);
const threadFacts = (db: Db, id: number) =>
  get<ThreadFacts>(db, 'SELECT id, root_kind, root_id, root_gone, started_by FROM threads WHERE id = ?', id);

/** What a thread's root is now. */
export function rootFacts(db: Db, thread: ThreadFacts): RootFacts {
  switch (thread.root_kind) {
    case 'conversation':
      return { kind: 'conversation', conversation: conversationFacts(db, thread.root_id) };
    case 'task':
      return { kind: 'task', task: taskFacts(db, thread.root_id) };
    case 'thread':
      return { kind: 'thread', thread: thread.root_id === thread.id ? thread : threadFacts(db, thread.root_id) };
  }
}

export const threadTarget = (db: Db, thread: ThreadFacts): Target => ({
  kind: 'thread',
  thread,
  root: rootFacts(db, thread),
});

/** `threadTarget` for the rows of one list: each root is read once, however many rows share it. */
export function threadTargets(db: Db): (thread: ThreadFacts) => Target {
  const roots = new Map<string, RootFacts>();
  return (thread) => {
    const key = `${thread.root_kind} ${thread.root_id}`;
    let root = roots.get(key);
    if (!root) {
      root = rootFacts(db, thread);
      // A thread that is its own root is its own facts, not one to share.
      if (!(thread.root_kind === 'thread' && thread.root_id === thread.id)) roots.set(key, root);
    }
    return { kind: 'thread', thread, root };
  };
}

/** Who reads an agent conversation and hears of its changes. */
export const threadAudience = (db: Db, thread: ThreadFacts): Audience => audienceOf(threadTarget(db, thread));

/** A conversation, task or agent conversation by id, as a target; undefined when it does not exist. */
export function contextTarget(db: Db, context: ContextRef): Target | undefined {
  switch (context.kind) {
    case 'conversation': {
      const conversation = conversationFacts(db, context.id);
      return conversation && { kind: 'conversation', conversation };
    }
    case 'task': {
      const task = taskFacts(db, context.id);
      return task && { kind: 'task', task };
    }
    case 'thread': {
      const thread = threadFacts(db, context.id);
      return thread && threadTarget(db, thread);
    }
  }
}

/** What waits for a person, as a target: where it waits decides who reads and who decides it. */
export function approvalTarget(
  db: Db,
  approval: ApprovalFacts & { context_kind: ContextRef['kind']; context_id: number },
): Extract<Target, { kind: 'approval' }> {
  const place = contextTarget(db, { kind: approval.context_kind, id: approval.context_id }) as ApprovalPlace;
  return { kind: 'approval', approval: { kind: approval.kind }, place };
}

/** Who hears of a change to what waits for a person: who reads it. */
export const approvalAudience = (
  db: Db,
  approval: ApprovalFacts & { context_kind: ContextRef['kind']; context_id: number },
): Audience => audienceOf(approvalTarget(db, approval));

/** Who hears of a change to a conversation, task or agent conversation; owners once it is gone. */
export function contextAudience(db: Db, context: ContextRef): Audience {
  const target = contextTarget(db, context);
  return target ? audienceOf(target) : 'owners';
}

const personKind = (db: Db, id: number) =>
  get<{ kind: PersonKind }>(db, 'SELECT kind FROM people WHERE id = ?', id)?.kind;

/**
 * What `parley history` may list for a caller: a run answers for the audience of its own
 * context (a run in an agent conversation, for that one's root); a role token (an owner's
 * script) lists every agent conversation of its role. The filter takes an agent
 * conversation's row id (history comes a text at a time, so each is decided once).
 */
export function historyScope(db: Db, caller: { kind: 'role' } | { kind: 'run'; context: ContextRef }) {
  const roleCaller: RoleCaller =
    caller.kind === 'role' ? caller : { kind: 'run', rootAudience: contextAudience(db, caller.context) };
  const decided = new Map<number, boolean>();
  return (threadRowId: number): boolean => {
    let included = decided.get(threadRowId);
    if (included === undefined) {
      const thread = threadFacts(db, threadRowId);
      included =
        thread !== undefined && historyIncludes(roleCaller, threadAudience(db, thread), (id) => personKind(db, id));
      decided.set(threadRowId, included);
    }
    return included;
  };
}
