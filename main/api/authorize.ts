// Who may read and act (DESIGN §7), decided here in main and nowhere else. Objects a
// person may not read are reported as not found, so their existence does not leak.
import { ApiError } from '../../shared/api-contract';
import type { Person } from '../../shared/domain';
import type { ConversationRow } from '../store/queries/conversations';
import type { TaskRow } from '../store/queries/tasks';

export function requireOwner(person: Person, action: string): void {
  if (person.kind !== 'owner') throw new ApiError('forbidden', `only an owner can ${action}`);
}

/** A conversation is its person's alone: read and act. */
export function requireOwnConversation(
  person: Person,
  conversation: ConversationRow | undefined,
  id: number,
): ConversationRow {
  if (!conversation || conversation.person_id !== person.id) throw new ApiError('not_found', `no conversation ${id}`);
  return conversation;
}

/** Every person of the installation reads tasks, comments on them and stops their agents. */
export function requireTask(task: TaskRow | undefined, id: number): TaskRow {
  if (!task) throw new ApiError('not_found', `no task ${id}`);
  return task;
}

/** Finishing and deleting a task is for its creator or an owner. */
export function requireTaskManager(person: Person, task: TaskRow, action: string): void {
  if (person.kind !== 'owner' && task.created_by !== person.id)
    throw new ApiError('forbidden', `only the task's creator or an owner can ${action} it`);
}
