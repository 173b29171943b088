// The app API's side of the access rules (../access/rules.ts, which decides): each
// handler names what it is about to do to which object, and a refusal becomes the
// ApiError people see. An object a person may not read is reported as not found, so
// its existence does not leak.
import { ApiError } from '../../shared/api-contract';
import type { Person } from '../../shared/domain';
import { approvalTarget, threadTarget, threadTargets } from '../access/lookup';
import {
  decide,
  decideThreadList,
  taskTreeBlockers,
  type ActionOn,
  type Decision,
  type Target,
  type ThreadList,
} from '../access/rules';
import type { Db } from '../store/database';
import { getApproval, type ApprovalRow } from '../store/queries/approvals';
import { getConversationRow, type ConversationRow } from '../store/queries/conversations';
import { getPerson } from '../store/queries/people';
import { getTaskRow, type TaskRow } from '../store/queries/tasks';
import { getThread, type ThreadFilter, type ThreadRow } from '../store/queries/threads';

const notFound: Decision = { allowed: false, code: 'not_found' };

function enforce(decision: Decision, missing: string, doing: string): void {
  if (decision.allowed) return;
  if (decision.code === 'not_found') throw new ApiError('not_found', missing);
  throw new ApiError('forbidden', `only ${decision.needs} can ${doing}`);
}

/** Reading the installation's people, roles, connections and settings, or (`manage`) changing them: `doing` says what. */
export function authorizeInstallation(person: Person, action: ActionOn<'installation'>, doing: string): void {
  enforce(decide(person, { kind: 'installation' }, action), 'not found', doing);
}

/** Only owners manage the installation: people, roles, connections, invitations, role tokens, where peers reach it. */
export const requireOwner = (person: Person, doing: string): void => authorizeInstallation(person, 'manage', doing);
/** Every signed-in person reads the installation's people, roles, connections and settings. */
export const requireReader = (person: Person): void => authorizeInstallation(person, 'read', 'read this');

export function authorizedConversation(
  db: Db,
  person: Person,
  id: number,
  action: ActionOn<'conversation'>,
): ConversationRow {
  const row = getConversationRow(db, id);
  enforce(
    row ? decide(person, { kind: 'conversation', conversation: row }, action) : notFound,
    `no conversation ${id}`,
    '',
  );
  return row!;
}

export function authorizedTask(db: Db, person: Person, id: number, action: ActionOn<'task'>): TaskRow {
  const row = getTaskRow(db, id);
  enforce(row ? decide(person, { kind: 'task', task: row }, action) : notFound, `no task ${id}`, `${action} it`);
  return row!;
}

export function authorizedThread(db: Db, person: Person, id: number, action: ActionOn<'thread'>): ThreadRow {
  const row = getThread(db, id);
  enforce(row ? decide(person, threadTarget(db, row), action) : notFound, `no agent conversation ${id}`, '');
  return row!;
}

export function authorizedApproval(db: Db, person: Person, id: number, action: ActionOn<'approval'>): ApprovalRow {
  const row = getApproval(db, id);
  enforce(
    row ? decide(person, approvalTarget(db, row), action) : notFound,
    `no approval ${id}`,
    action === 'decide' ? 'decide what an agent does for a peer that asked' : 'read it',
  );
  return row!;
}

/** The conversations or tasks of `rows` the person may read. */
export function readableConversations<R extends ConversationRow>(person: Person, rows: R[]): R[] {
  return rows.filter((conversation) => decide(person, { kind: 'conversation', conversation }, 'read').allowed);
}
export function readableTasks<R extends TaskRow>(person: Person, rows: R[]): R[] {
  return rows.filter((task) => decide(person, { kind: 'task', task }, 'read').allowed);
}

/** The agent conversations of `rows` the person may read (each root read once, however many rows share it). */
export function readableThreads<R extends ThreadRow>(db: Db, person: Person, rows: R[]): R[] {
  const target = threadTargets(db);
  return rows.filter((row) => decide(person, target(row), 'read').allowed);
}

/** Who may ask for a list of agent conversations: whoever can read its root; owners for those whose root is gone. */
export function authorizeThreadList(db: Db, person: Person, filter: ThreadFilter): void {
  let list: ThreadList;
  let missing = 'not found';
  if ('root' in filter) {
    const { kind, id } = filter.root;
    let root: Target | undefined;
    if (kind === 'conversation') {
      const conversation = getConversationRow(db, id);
      root = conversation && { kind, conversation };
      missing = `no conversation ${id}`;
    } else if (kind === 'task') {
      const task = getTaskRow(db, id);
      root = task && { kind, task };
      missing = `no task ${id}`;
    } else {
      const thread = getThread(db, id);
      root = thread && threadTarget(db, thread);
      missing = `no agent conversation ${id}`;
    }
    list = { kind: 'root', root };
  } else list = 'peerStarted' in filter ? { kind: 'peerStarted' } : { kind: 'orphaned' };
  enforce(decideThreadList(person, list), missing, 'see agent conversations whose topic was deleted');
}

/**
 * Deleting a task takes its subtasks with it: refused, naming them, unless the person
 * may delete every one.
 */
export function authorizeTaskTreeDeletion(db: Db, person: Person, tree: TaskRow[]): void {
  const blockers = taskTreeBlockers(person, tree);
  if (blockers.length === 0) return;
  const [root] = tree;
  if (blockers.includes(root!)) enforce(decide(person, { kind: 'task', task: root! }, 'delete'), '', 'delete it');
  const named = blockers
    .slice(0, 5)
    .map((task) => {
      const creator = task.created_by === null ? undefined : getPerson(db, task.created_by);
      return `"${task.title}" (#${task.id}, made by ${creator?.name ?? 'someone who has left'})`;
    })
    .join(', ');
  const more = blockers.length > 5 ? ` and ${blockers.length - 5} more` : '';
  throw new ApiError(
    'forbidden',
    `deleting this task would delete subtasks that are not yours to delete: ${named}${more}; their creators or an owner can delete those first`,
  );
}
