// The app API's methods for tasks and their subtasks (tasks.*), each asked of the access
// rules: who reads, comments, finishes, stops or deletes a task (and its whole subtree).
import type { ContextRef, Task } from '../../shared/domain';
import { eventAudience } from '../access/rules';
import { personAuthor, postLine } from '../posting/post-line';
import { rootAsks } from '../store/queries/asks';
import { transaction } from '../store/database';
import { findRun, recentTurns, runSummary } from '../store/queries/runs';
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
} from '../store/queries/tasks';
import { authorizeTaskTreeDeletion, authorizedTask, readableTasks, requireReader } from './authorize';
import type { ApiServices, HandlerTable } from './handlers';
import { personSays } from './person-says';
import { requireRoleExists } from './role-handlers';

const taskView = (services: ApiServices, row: TaskRow): Task =>
  toTask(
    row,
    runSummary(services.db, { kind: 'task', id: row.id }, services.runs.stoppingTurns(), services.runs.retryingTurns()),
  );

export const taskHandlers: Pick<HandlerTable, Extract<keyof HandlerTable, `tasks.${string}`>> = {
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
};
