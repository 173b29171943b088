// Tasks as a tree with subtasks; the selected task's brief, log (each ask's state under the
// entry of the turn that made it) and comment box, with the agent conversations its role
// held for it.
import {
  useEffect,
  useId,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type CSSProperties,
  type FormEvent,
  type ReactNode,
} from 'react';
import type { Task, TaskLogEntry } from '../../shared/domain';
import { BackIcon, PlusIcon, TasksIcon } from '../components/icons';
import { WaitingForApproval } from '../components/approvals';
import { AskLine, useAskLinks, type AskPlaces } from '../components/ask-state';
import { WithThreads } from '../components/layout';
import { Markdown } from '../components/markdown';
import { useMarkSeen } from '../components/seen';
import { TextWithCode } from '../components/text-with-code';
import { ThreadList } from '../components/threads';
import {
  Avatar,
  Badge,
  ConfirmDialog,
  Dialog,
  DialogButtons,
  EmptyState,
  ErrorNote,
  isActive,
  Loading,
  RunStateBadge,
  StopButton,
  UnreadBadge,
  useAction,
  useMediaQuery,
  useSendText,
} from '../components/ui';
import { fullTime, shortTime } from '../format';
import { approvalsForRoot, selectApprovals, useApprovals } from '../state/approvals';
import { useAttention } from '../state/attention';
import { messageOf } from '../state/client';
import { selectPersonName, usePeople } from '../state/people';
import { selectRoles, useRoles } from '../state/roles';
import { selectPerson, useSession } from '../state/session';
import { selectTask, selectTaskDetail, selectTaskError, selectTasks, taskTree, useTasks } from '../state/tasks';
import { useUi } from '../state/ui';
import { LedgerButton } from '../components/ledger-button';
import type { AskLink, LoneAsks } from '../thread-facts';

export function TasksView({ id }: { id: number | null }) {
  const tasks = useTasks(selectTasks);
  const error = useTasks((s) => s.error);
  const load = useTasks((s) => s.load);
  const navigate = useUi((s) => s.navigate);
  const roomy = useMediaQuery('(min-width: 1000px)');
  const [creating, setCreating] = useState(false);
  const tree = useMemo(() => (tasks ? taskTree(tasks) : []), [tasks]);
  const marks = useAttention((s) => s.marks);
  const headingId = useId();

  useEffect(() => {
    void load();
  }, [load]);

  const showTree = roomy || id === null;
  const showDetail = roomy || id !== null;
  return (
    <div className="view tasks-view">
      {showTree && (
        <section className="task-tree-pane" aria-labelledby={headingId}>
          <header className="pane-header">
            <h1 id={headingId}>Tasks</h1>
            <button type="button" className="btn btn-primary btn-sm" onClick={() => setCreating(true)}>
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
      )}
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

function TaskDetailView({ id, showBack }: { id: number; showBack: boolean }) {
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

/** The log in order, with each ask under the entry its turn posted, or alone where it was made. */
function TaskLog({ log, asks, roleName }: { log: TaskLogEntry[]; asks: AskPlaces; roleName: string }) {
  const lone = [...asks.alone].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.turnId - b.turnId));
  const rows: ReactNode[] = [];
  let next = 0;
  const loneRow = (row: LoneAsks) => (
    <li key={`asks-${row.turnId}`} className="log-entry log-asks">
      <Avatar name={roleName} size="sm" square />
      <div className="log-content">
        <div className="message-meta">
          <strong>{roleName}</strong>
          <time dateTime={row.at} title={fullTime(row.at)}>
            {shortTime(row.at)}
          </time>
        </div>
        {row.links.map((link) => (
          <AskLine key={link.textId} link={link} asked />
        ))}
      </div>
    </li>
  );
  for (const entry of log) {
    while (next < lone.length && lone[next]!.at < entry.createdAt) rows.push(loneRow(lone[next++]!));
    rows.push(<LogEntry key={entry.id} entry={entry} asks={asks.under.get(entry.id)} />);
  }
  while (next < lone.length) rows.push(loneRow(lone[next++]!));
  return <ol className="log">{rows}</ol>;
}

const logLabel: Record<TaskLogEntry['kind'], string> = {
  comment: 'commented',
  output: 'worked on it',
  report: 'reported',
  notice: '',
  status: '',
};

function LogEntry({ entry, asks }: { entry: TaskLogEntry; asks?: AskLink[] }) {
  const time = (
    <time dateTime={entry.createdAt} title={fullTime(entry.createdAt)}>
      {shortTime(entry.createdAt)}
    </time>
  );
  if (entry.kind === 'notice' || entry.kind === 'status')
    return (
      <li className={`log-entry log-${entry.kind}`}>
        <span className="log-line">
          {entry.kind === 'status' && <strong>{entry.author.name} </strong>}
          <TextWithCode text={entry.body} />
        </span>
        {time}
      </li>
    );
  return (
    <li className={`log-entry log-${entry.kind}`}>
      <Avatar name={entry.author.name} size="sm" square={entry.author.kind === 'role'} />
      <div className="log-content">
        <div className="message-meta">
          <strong>{entry.author.name}</strong>
          <span className="muted">{logLabel[entry.kind]}</span>
          {time}
        </div>
        {entry.author.kind === 'person' ? <p className="message-text">{entry.body}</p> : <Markdown text={entry.body} />}
        {asks?.map((link) => (
          <AskLine key={link.textId} link={link} />
        ))}
      </div>
    </li>
  );
}

/**
 * The task's brief, subtasks and log scroll; the comment box stays below them, always
 * on screen. Once the person comments, or has scrolled to the end, new entries (the
 * answer) keep the end in view.
 */
function TaskPane({
  log,
  composer,
  children,
}: {
  log: number;
  composer: (follow: () => void) => ReactNode;
  children: ReactNode;
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const follow = useRef(false);
  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (el && follow.current) el.scrollTop = el.scrollHeight;
  }, [log]);
  return (
    <div className="task-pane">
      <div
        ref={scrollRef}
        className="task-body"
        onScroll={(event) => {
          const el = event.currentTarget;
          follow.current = el.scrollHeight - el.scrollTop - el.clientHeight < 120;
        }}
      >
        {children}
      </div>
      {composer(() => {
        follow.current = true;
      })}
    </div>
  );
}

/**
 * What waits for approval for this task and has no log line to show it under: its agent's
 * tool requests, a peer's answer held before the agent takes it, a send no line names.
 */
function TaskApprovals({ id, asks }: { id: number; asks: AskPlaces }) {
  const approvals = useApprovals(selectApprovals);
  const here = useMemo(() => {
    const linked = new Set(
      [...asks.under.values(), ...asks.alone.map((row) => row.links)].flat().map((link) => link.textId),
    );
    return approvalsForRoot(approvals, { kind: 'task', id }).filter(
      (approval) => !(approval.text && linked.has(approval.text.id)),
    );
  }, [approvals, asks, id]);
  return <WaitingForApproval approvals={here} />;
}

function CommentBox({ task, onSending }: { task: Task; onSending: () => void }) {
  const comment = useTasks((s) => s.comment);
  const [text, setText] = useState('');
  const { submit, enterSends, busy, error } = useSendText(
    text,
    (body) => {
      onSending();
      return comment(task.id, body);
    },
    () => setText(''),
  );
  return (
    <form className="composer composer-inline" onSubmit={submit}>
      <div className="composer-box">
        <textarea
          aria-label="Comment"
          placeholder={`Comment for ${task.roleName}`}
          rows={1}
          value={text}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={enterSends}
        />
        <button type="submit" className="btn btn-primary" disabled={busy || text.trim() === ''}>
          Comment
        </button>
      </div>
      {error && (
        <p className="composer-error" role="alert">
          <TextWithCode text={error} />
        </p>
      )}
    </form>
  );
}

export function NewTaskDialog({ parent, onClose }: { parent: Task | null; onClose: () => void }) {
  const roles = useRoles(selectRoles);
  const create = useTasks((s) => s.create);
  const navigate = useUi((s) => s.navigate);
  const [roleId, setRoleId] = useState<number | null>(parent?.roleId ?? null);
  const [title, setTitle] = useState('');
  const [body, setBody] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, run] = useAction();
  const formId = useId();
  const chosenRole = roleId ?? roles?.[0]?.id ?? null;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (chosenRole === null) return setError('Choose a role.');
    if (!title.trim()) return setError('Give the task a title.');
    setError(null);
    void run(async () => {
      try {
        const task = await create({
          roleId: chosenRole,
          title: title.trim(),
          ...(body.trim() ? { body } : {}),
          ...(parent ? { parentId: parent.id } : {}),
        });
        onClose();
        navigate({ kind: 'tasks', id: task.id });
      } catch (caught) {
        setError(messageOf(caught));
      }
    });
  };

  return (
    <Dialog
      title={parent ? 'New subtask' : 'New task'}
      description={
        parent ? <>A subtask of “{parent.title}”, a topic of its own.</> : 'A role works on it in its own run.'
      }
      onClose={onClose}
      footer={
        <DialogButtons
          formId={formId}
          busy={busy}
          submitLabel={parent ? 'Create subtask' : 'Create task'}
          onCancel={onClose}
        />
      }
    >
      <form id={formId} className="form" onSubmit={submit}>
        <label className="field">
          <span className="field-label">Role</span>
          <select value={chosenRole ?? ''} onChange={(event) => setRoleId(Number(event.target.value))}>
            {roles?.map((role) => (
              <option key={role.id} value={role.id}>
                {role.name}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span className="field-label">Title</span>
          <input value={title} onChange={(event) => setTitle(event.target.value)} maxLength={200} autoFocus />
        </label>
        <label className="field">
          <span className="field-label">
            Details <span className="muted">(optional, Markdown)</span>
          </span>
          <textarea value={body} onChange={(event) => setBody(event.target.value)} rows={5} />
        </label>
        {error && (
          <p className="field-error" role="alert">
            <TextWithCode text={error} />
          </p>
        )}
      </form>
    </Dialog>
  );
}
