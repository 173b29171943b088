// Tasks (every member reads them) as a tree, and the open ones' logs.
import { create } from 'zustand';
import type { TaskDetail } from '../../shared/api-contract';
import type { Task } from '../../shared/domain';
import { call, isNotFound, messageOf } from './client';

interface TasksState {
  list: Task[] | null;
  error: string | null;
  details: Record<number, TaskDetail | undefined>;
  detailErrors: Record<number, string | undefined>;
  load: () => Promise<void>;
  loadDetail: (id: number) => Promise<void>;
  create: (params: { roleId: number; title: string; body?: string; parentId?: number }) => Promise<Task>;
  comment: (id: number, text: string) => Promise<void>;
  finish: (id: number) => Promise<void>;
  stop: (id: number) => Promise<boolean>;
  remove: (id: number) => Promise<void>;
  changed: (id: number) => Promise<void>;
}

export const useTasks = create<TasksState>()((set, get) => ({
  list: null,
  error: null,
  details: {},
  detailErrors: {},

  async load() {
    try {
      set({ list: await call('tasks.list', {}), error: null });
    } catch (error) {
      set({ error: messageOf(error) });
    }
  },

  async loadDetail(id) {
    try {
      const detail = await call('tasks.get', { id });
      set((s) => ({
        details: { ...s.details, [id]: detail },
        detailErrors: { ...s.detailErrors, [id]: undefined },
      }));
    } catch (error) {
      set((s) => ({
        details: { ...s.details, [id]: undefined },
        detailErrors: { ...s.detailErrors, [id]: isNotFound(error) ? 'This task was deleted.' : messageOf(error) },
      }));
    }
  },

  async create(params) {
    const task = await call('tasks.create', params);
    set((s) => ({ list: [...(s.list ?? []).filter((t) => t.id !== task.id), task] }));
    return task;
  },

  async comment(id, text) {
    await call('tasks.comment', { id, text });
    await get().loadDetail(id);
  },

  async finish(id) {
    await call('tasks.finish', { id });
    await Promise.all([get().load(), get().loadDetail(id)]);
  },

  async stop(id) {
    const { stopped } = await call('tasks.stop', { id });
    await get().loadDetail(id);
    return stopped;
  },

  async remove(id) {
    await call('tasks.delete', { id });
    await get().load();
  },

  async changed(id) {
    const tasks: Promise<void>[] = [get().load()];
    if (get().details[id]) tasks.push(get().loadDetail(id));
    await Promise.all(tasks);
  },
}));

export interface TaskNode {
  task: Task;
  depth: number;
  children: number;
}

/** The task list as a depth-first tree: parents before their subtasks, newest roots first. */
export function taskTree(list: Task[]): TaskNode[] {
  const children = new Map<number | null, Task[]>();
  const ids = new Set(list.map((t) => t.id));
  for (const task of list) {
    const parent = task.parentId !== null && ids.has(task.parentId) ? task.parentId : null;
    const siblings = children.get(parent) ?? [];
    siblings.push(task);
    children.set(parent, siblings);
  }
  const out: TaskNode[] = [];
  const walk = (parent: number | null, depth: number) => {
    const siblings = children.get(parent) ?? [];
    // Open before finished; roots newest first, subtasks in the order they were made.
    siblings.sort(
      (a, b) => (a.status === b.status ? 0 : a.status === 'open' ? -1 : 1) || (depth === 0 ? b.id - a.id : a.id - b.id),
    );
    for (const task of siblings) {
      out.push({ task, depth, children: children.get(task.id)?.length ?? 0 });
      walk(task.id, depth + 1);
    }
  };
  walk(null, 0);
  return out;
}

export const selectTasks = (s: TasksState) => s.list;
export const selectTasksError = (s: TasksState) => s.error;
export const selectTask = (id: number | null) => (s: TasksState) =>
  id === null ? undefined : (s.details[id]?.task ?? s.list?.find((t) => t.id === id));
export const selectTaskDetail = (id: number | null) => (s: TasksState) => (id === null ? undefined : s.details[id]);
export const selectTaskError = (id: number | null) => (s: TasksState) => (id === null ? undefined : s.detailErrors[id]);
