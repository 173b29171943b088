// The selected task: its header and actions, its brief, subtasks and log with the comment
// box, and beside them the agent conversations its role held for it.
import { useEffect, useState } from 'react';
import { BackIcon, PlusIcon } from '../../components/icons';
import { useAskLinks } from '../../components/ask-state';
import { WithThreads } from '../../components/layout';
import { LedgerButton } from '../../components/ledger-button';
import { Markdown } from '../../components/markdown';
import { useMarkSeen } from '../../components/seen';
import { ThreadList } from '../../components/threads';
import {
  Badge,
  ConfirmDialog,
  EmptyState,
  isActive,
  Loading,
  RunStateBadge,
  StopButton,
  useAction,
} from '../../components/ui';
import { fullTime, shortTime } from '../../format';
import { selectPersonName, usePeople } from '../../state/people';
import { selectPerson, useSession } from '../../state/session';
import { selectTask, selectTaskDetail, selectTaskError, useTasks } from '../../state/tasks';
import { useUi } from '../../state/ui';
import { CommentBox } from './comment-box';
import { NewTaskDialog } from './new-task-dialog';
import { TaskApprovals } from './task-approvals';
import { TaskLog } from './task-log';
import { TaskPane } from './task-pane';

export function TaskDetailView({ id, showBack }: { id: number; showBack: boolean }) {
  const task = useTasks(selectTask(id));
  const detail = useTasks(selectTaskDetail(id));
  const error = useTasks(selectTaskError(id));
  const parent = useTasks(selectTask(task?.parentId ?? null));
  const loadDetail = useTasks((s) => s.loadDetail);
  const stop = useTasks((s) => s.stop);
  const finish = useTasks((s) => s.finish);
  const me = useSession(selectPerson);
  const creator = usePeople(selectPersonName(task?.createdBy));
  const navigate = useUi((s) => s.navigate);
  const [dialog, setDialog] = useState<'subtask' | 'delete' | null>(null);
  const [finishing, runFinish] = useAction();
  const asks = useAskLinks(`task:${id}`, detail?.asks, detail?.log);

  useEffect(() => {
    void loadDetail(id);
  }, [id, loadDetail]);
  // Shown is read: the agent's output and reports, others' comments, a failure.
  useMarkSeen(task ? { kind: 'task', id } : null);

  if (!task || (!detail && error))
    return (
      <div className="view-center">
        {error ? (
          <EmptyState title={error}>
            <button type="button" className="btn btn-secondary" onClick={() => navigate({ kind: 'tasks', id: null })}>
              Back to tasks
            </button>
          </EmptyState>
        ) : (
          <Loading />
        )}
      </div>
    );
  const canManage = me?.kind === 'owner' || (task.createdBy !== null && task.createdBy === me?.id);
  const subtasks = detail?.subtasks ?? [];

  return (
    <div className="task-detail">
      <header className="view-header task-header">
        {showBack && (
          <button
            type="button"
            className="btn btn-ghost btn-icon"
            aria-label="Back to tasks"
            onClick={() => navigate({ kind: 'tasks', id: null })}
          >
            <BackIcon />
          </button>
        )}
        <div className="view-title">
          {parent && (
            <button type="button" className="crumb" onClick={() => navigate({ kind: 'tasks', id: parent.id })}>
              {parent.title} /
            </button>
          )}
          <h1 title={task.title}>{task.title}</h1>
          <p className="muted small">
            for <strong>{task.roleName}</strong>
            {creator ? ` · by ${creator}` : ''} ·{' '}
            <time dateTime={task.createdAt} title={fullTime(task.createdAt)}>
              {shortTime(task.createdAt)}
            </time>
          </p>
        </div>
        <div className="view-actions">
          <Badge tone={task.status === 'open' ? 'good' : 'neutral'}>
            {task.status === 'open' ? 'Open' : 'Finished'}
          </Badge>
          <LedgerButton root={{ kind: 'task', id }} />
          <RunStateBadge run={task.run} />
          {isActive(task.run) && <StopButton onStop={() => stop(id)} disabled={task.run.state === 'stopping'} />}
        </div>
      </header>
      <div className="task-toolbar">
        <button type="button" className="btn btn-secondary btn-sm" onClick={() => setDialog('subtask')}>
          <PlusIcon size={14} />
          Add subtask
        </button>
        {canManage && task.status === 'open' && (
          <button
            type="button"
            className="btn btn-secondary btn-sm"
            disabled={finishing}
            onClick={() => void runFinish(() => finish(id))}
          >
            Finish
          </button>
        )}
        {canManage && (
          <button type="button" className="btn btn-ghost btn-sm btn-danger-text" onClick={() => setDialog('delete')}>
            Delete
          </button>
        )}
      </div>
      <WithThreads
        listKey={`task:${id}`}
        mainLabel="Task"
        main={
          <TaskPane
            log={detail?.log.length ?? 0}
            composer={(follow) => (
              <>
                <TaskApprovals id={id} asks={asks} />
                <CommentBox task={task} onSending={follow} />
              </>
            )}
          >
            {task.body.trim() && (
              <section className="card brief" aria-label="Brief">
                <Markdown text={task.body} />
              </section>
            )}
            {subtasks.length > 0 && (
              <section className="subtasks" aria-label="Subtasks">
                <h2 className="section-title">Subtasks</h2>
                <ul>
                  {subtasks.map((sub) => (
                    <li key={sub.id}>
                      <button
                        type="button"
                        className="subtask-link"
                        onClick={() => navigate({ kind: 'tasks', id: sub.id })}
                      >
                        <span className={`task-check task-check-${sub.status}`} aria-hidden="true" />
                        <span>{sub.title}</span>
                        <span className="muted small">{sub.roleName}</span>
                        <RunStateBadge run={sub.run} hideIdle />
                      </button>
                    </li>
                  ))}
                </ul>
              </section>
            )}
            <section className="activity" aria-label="Activity">
              <h2 className="section-title">Activity</h2>
              {!detail ? (
                <Loading />
              ) : detail.log.length === 0 ? (
                <p className="muted small">Nothing yet: {task.roleName} gets the brief in its first turn.</p>
              ) : (
                <TaskLog log={detail.log} asks={asks} roleName={task.roleName} />
              )}
            </section>
          </TaskPane>
        }
        threads={
          <ThreadList
            listKey={`task:${id}`}
            description={`What ${task.roleName} asked the roles of your connections for this task.`}
            empty={
              <EmptyState title="No agent conversations for this task">
                When {task.roleName} asks a peer&rsquo;s role while working on it, the exchange shows up here.
              </EmptyState>
            }
          />
        }
      />
      {dialog === 'subtask' && <NewTaskDialog parent={task} onClose={() => setDialog(null)} />}
      {dialog === 'delete' && (
        <ConfirmDialog
          title={`Delete “${task.title}”?`}
          body={
            <>
              <p>
                The task
                {subtasks.length > 0
                  ? ` and its ${subtasks.length} subtask${subtasks.length === 1 ? '' : 's'}`
                  : ''}{' '}
                and their logs are deleted, and their agents stopped.
              </p>
              <p className="muted">Their agent conversations close; owners can still read them.</p>
            </>
          }
          confirm="Delete"
          onConfirm={async () => {
            await useTasks.getState().remove(id);
            navigate({ kind: 'tasks', id: task.parentId });
          }}
          onClose={() => setDialog(null)}
        />
      )}
    </div>
  );
}
