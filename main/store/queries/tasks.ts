import type {
  Author,
  AuthorKind,
  RunSummary,
  Task,
  TaskLogEntry,
  TaskLogKind,
  TaskStatus,
} from '../../../shared/domain';
import type { Db } from '../database';
import { all, get, insert, run } from '../sql';

export interface TaskRow {
  id: number;
  role_id: number;
  role_name: string;
  parent_id: number | null;
  title: string;
  body: string;
  status: TaskStatus;
  created_by: number | null;
  created_at: string;
  finished_at: string | null;
}

interface LogRow {
  id: number;
  task_id: number;
  kind: TaskLogKind;
  author_kind: AuthorKind;
  author_id: number | null;
  author_name: string;
  body: string;
  posted_by_turn: number | null;
  created_at: string;
}

const SELECT_TASK = 'SELECT tasks.*, roles.name AS role_name FROM tasks JOIN roles ON roles.id = tasks.role_id';

export const toTask = (row: TaskRow, runSummary: RunSummary): Task => ({
  id: row.id,
  roleId: row.role_id,
  roleName: row.role_name,
  parentId: row.parent_id,
  title: row.title,
  body: row.body,
  status: row.status,
  createdBy: row.created_by,
  createdAt: row.created_at,
  finishedAt: row.finished_at,
  run: runSummary,
});

const toLog = (row: LogRow): TaskLogEntry => ({
  id: row.id,
  taskId: row.task_id,
  kind: row.kind,
  author: { kind: row.author_kind, id: row.author_id, name: row.author_name },
  body: row.body,
  postedByTurnId: row.posted_by_turn,
  createdAt: row.created_at,
});

export function getTaskRow(db: Db, id: number): TaskRow | undefined {
  return get<TaskRow>(db, `${SELECT_TASK} WHERE tasks.id = ?`, id);
}

export function listTaskRows(db: Db): TaskRow[] {
  return all<TaskRow>(db, `${SELECT_TASK} ORDER BY tasks.id`);
}

export function listSubtaskRows(db: Db, parentId: number): TaskRow[] {
  return all<TaskRow>(db, `${SELECT_TASK} WHERE parent_id = ? ORDER BY tasks.id`, parentId);
}

/** The task and every task below it, for stopping their agents before a delete. */
export function taskSubtreeIds(db: Db, id: number): number[] {
  return all<{ id: number }>(
    db,
    `WITH RECURSIVE subtree(id) AS (SELECT ? UNION ALL SELECT tasks.id FROM tasks JOIN subtree ON tasks.parent_id = subtree.id)
     SELECT id FROM subtree`,
    id,
  ).map((row) => row.id);
}

export function insertTask(
  db: Db,
  roleId: number,
  parentId: number | null,
  title: string,
  body: string,
  createdBy: number,
): TaskRow {
  const id = insert(
    db,
    'INSERT INTO tasks (role_id, parent_id, title, body, created_by) VALUES (?, ?, ?, ?, ?)',
    roleId,
    parentId,
    title,
    body,
    createdBy,
  );
  return getTaskRow(db, id)!;
}

export function finishTask(db: Db, id: number): void {
  run(
    db,
    "UPDATE tasks SET status = 'finished', finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ? AND status = 'open'",
    id,
  );
}

export function deleteTask(db: Db, id: number): void {
  run(db, 'DELETE FROM tasks WHERE id = ?', id);
}

/** `postedByTurn`: the turn whose agent posted it, for an entry a turn posted. */
export function insertTaskLog(
  db: Db,
  taskId: number,
  kind: TaskLogKind,
  author: Author,
  body: string,
  postedByTurn: number | null = null,
): TaskLogEntry {
  const id = insert(
    db,
    'INSERT INTO task_log (task_id, kind, author_kind, author_id, author_name, body, posted_by_turn) VALUES (?, ?, ?, ?, ?, ?, ?)',
    taskId,
    kind,
    author.kind,
    author.id,
    author.name,
    body,
    postedByTurn,
  );
  return toLog(get<LogRow>(db, 'SELECT * FROM task_log WHERE id = ?', id)!);
}

export function listTaskLog(db: Db, taskId: number, limit = 1000): TaskLogEntry[] {
  return all<LogRow>(db, 'SELECT * FROM task_log WHERE task_id = ? ORDER BY id DESC LIMIT ?', taskId, limit)
    .reverse()
    .map(toLog);
}

export function taskIdsForRole(db: Db, roleId: number): number[] {
  return all<{ id: number }>(db, 'SELECT id FROM tasks WHERE role_id = ?', roleId).map((row) => row.id);
}
