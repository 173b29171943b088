// The tree of tasks with their subtasks, each with its role, its state and what is unread.
import { useId, useMemo, type CSSProperties } from 'react';
import { PlusIcon, TasksIcon } from '../../components/icons';
import { EmptyState, ErrorNote, Loading, UnreadBadge } from '../../components/ui';
import { useAttention } from '../../state/attention';
import { selectTasks, taskTree, useTasks } from '../../state/tasks';
import { useUi } from '../../state/ui';

export function TaskTree({ id, onNew }: { id: number | null; onNew: () => void }) {
  const tasks = useTasks(selectTasks);
  const error = useTasks((s) => s.error);
  const load = useTasks((s) => s.load);
  const navigate = useUi((s) => s.navigate);
  const tree = useMemo(() => (tasks ? taskTree(tasks) : []), [tasks]);
  const marks = useAttention((s) => s.marks);
  const headingId = useId();
  return (
    <section className="task-tree-pane" aria-labelledby={headingId}>
      <header className="pane-header">
        <h1 id={headingId}>Tasks</h1>
        <button type="button" className="btn btn-primary btn-sm" onClick={onNew}>
          <PlusIcon size={14} />
          New task
        </button>
      </header>
      {error && !tasks && <ErrorNote onRetry={() => void load()}>{error}</ErrorNote>}
      {!tasks && !error && <Loading />}
      {tasks?.length === 0 && (
        <EmptyState icon={<TasksIcon size={28} />} title="No tasks yet">
          Give a role something to work on; it can split the work into subtasks and ask peers along the way.
        </EmptyState>
      )}
      <ul className="task-tree" aria-label="Task tree">
        {tree.map(({ task, depth, children }) => {
          const current = task.id === id;
          return (
            <li key={task.id}>
              <button
                type="button"
                className={`task-item task-${task.status}${current ? ' is-current' : ''}`}
                style={{ '--depth': depth } as CSSProperties}
                aria-current={current ? 'page' : undefined}
                onClick={() => navigate({ kind: 'tasks', id: task.id })}
              >
                <span className={`task-check task-check-${task.status}`} aria-hidden="true" />
                <span className="task-item-text">
                  <span className="task-item-title" title={task.title}>
                    {task.title}
                  </span>
                  <span className="task-item-meta">
                    {task.roleName}
                    {children > 0 ? ` · ${children} subtask${children === 1 ? '' : 's'}` : ''}
                    {task.status === 'finished' ? ' · finished' : ''}
                  </span>
                </span>
                {task.run.state !== 'idle' && <span className={`live-dot run-${task.run.state}`} title="Working" />}
                <UnreadBadge count={marks.get(`task:${task.id}`) ?? 0} />
              </button>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
