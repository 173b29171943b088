// A new task or subtask: the role that works on it, its title and its brief.
import { useId, useState, type FormEvent } from 'react';
import type { Task } from '../../../shared/domain';
import { TextWithCode } from '../../components/text-with-code';
import { Dialog, DialogButtons, useAction } from '../../components/ui';
import { messageOf } from '../../state/client';
import { selectRoles, useRoles } from '../../state/roles';
import { useTasks } from '../../state/tasks';
import { useUi } from '../../state/ui';

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
