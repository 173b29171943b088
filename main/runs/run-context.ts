// Where a run is and for whom, in the words its agent is given.
import type { AgentContext } from '../agents/types';
import type { Db } from '../store/database';
import { getConversationRow } from '../store/queries/conversations';
import { getPerson } from '../store/queries/people';
import { roleRefById } from '../store/queries/roles';
import type { RunRow } from '../store/queries/runs';
import { getTaskRow } from '../store/queries/tasks';
import { turnTrustOf } from './turn-trust';

/**
 * What a run works on, as told to its agent and returned by `parley context`: where it is
 * and for whom, with the trust its turn starts under now (./turn-trust). `describeThread`
 * (the engine's) describes agent conversations.
 */
export function describeRun(db: Db, run: RunRow, describeThread: ((run: RunRow) => AgentContext) | null): AgentContext {
  return {
    ...placeOf(db, run, describeThread),
    trust: turnTrustOf(db, { kind: run.context_kind, id: run.context_id }),
  };
}

function placeOf(db: Db, run: RunRow, describeThread: ((run: RunRow) => AgentContext) | null): AgentContext {
  const role = roleRefById(db, run.role_id)!;
  const roleRef = { id: role.id, name: role.name };
  if (run.context_kind === 'conversation') {
    const conversation = getConversationRow(db, run.context_id);
    if (!conversation) throw new Error('the conversation no longer exists');
    const person = getPerson(db, conversation.person_id)!;
    const summary = `your conversation with ${person.name}`;
    return {
      kind: 'conversation',
      id: conversation.id,
      role: roleRef,
      summary: `You are ${role.name}, in ${summary}.`,
      person: { id: person.id, name: person.name },
      root: { kind: 'conversation', id: conversation.id, summary },
      reporting: `Your final output is your message to ${person.name}. \`report\` posts a message to ${person.name} right away.`,
    };
  }
  if (run.context_kind === 'task') {
    const task = getTaskRow(db, run.context_id);
    if (!task) throw new Error('the task no longer exists');
    const summary = `task #${task.id} "${task.title}"`;
    return {
      kind: 'task',
      id: task.id,
      role: roleRef,
      summary: `You are ${role.name}, working on ${summary}.`,
      task: { id: task.id, title: task.title, body: task.body, status: task.status, parentId: task.parent_id },
      root: { kind: 'task', id: task.id, summary },
      reporting: 'Your final output goes to the task log. `report` adds an entry to the task log right away.',
    };
  }
  if (!describeThread) throw new Error('agent conversations need the connection engine');
  return describeThread(run);
}
