// Tasks as a tree with subtasks; the selected task's brief, log (each ask's state under the
// entry of the turn that made it) and comment box, with the agent conversations its role
// held for it. Each part is a component of its own in tasks/.
import { useEffect, useState } from 'react';
import { TasksIcon } from '../components/icons';
import { EmptyState, useMediaQuery } from '../components/ui';
import { useTasks } from '../state/tasks';
import { NewTaskDialog } from './tasks/new-task-dialog';
import { TaskDetailView } from './tasks/task-detail';
import { TaskTree } from './tasks/task-tree';

export function TasksView({ id }: { id: number | null }) {
  const load = useTasks((s) => s.load);
  const roomy = useMediaQuery('(min-width: 1000px)');
  const [creating, setCreating] = useState(false);

  useEffect(() => {
    void load();
  }, [load]);

  const showTree = roomy || id === null;
  const showDetail = roomy || id !== null;
  return (
    <div className="view tasks-view">
      {showTree && <TaskTree id={id} onNew={() => setCreating(true)} />}
      {showDetail && (
        <div className="task-main">
          {id === null ? (
            <div className="view-center">
              <EmptyState icon={<TasksIcon size={28} />} title="Pick a task">
                Its brief, its log and the agent conversations its role held for it show here.
              </EmptyState>
            </div>
          ) : (
            <TaskDetailView key={id} id={id} showBack={!roomy} />
          )}
        </div>
      )}
      {creating && <NewTaskDialog parent={null} onClose={() => setCreating(false)} />}
    </div>
  );
}
