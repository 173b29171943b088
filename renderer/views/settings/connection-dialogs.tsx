// The owner's dialogs on a connection: which roles it may reach, its queue limit, and what waits for a person.
import { useId, useState, type FormEvent } from 'react';
import type { ConnectionSummary, IncomingPolicy, OutgoingPolicy } from '../../../shared/domain';
import { Dialog, DialogButtons, Loading, useAction } from '../../components/ui';
import { useConnections } from '../../state/connections';
import { selectRoles, useRoles } from '../../state/roles';

export function RoleChecklist({ selected, onChange }: { selected: string[]; onChange: (roles: string[]) => void }) {
  const roles = useRoles(selectRoles);
  if (!roles) return <Loading />;
  if (roles.length === 0) return <p className="muted small">This installation has no roles yet.</p>;
  return (
    <ul className="checklist">
      {roles.map((role) => (
        <li key={role.id}>
          <label className="check">
            <input
              type="checkbox"
              checked={selected.includes(role.name)}
              onChange={(event) =>
                onChange(event.target.checked ? [...selected, role.name] : selected.filter((n) => n !== role.name))
              }
            />
            <span>
              <strong>{role.name}</strong>
              {role.description && <span className="muted"> — {role.description}</span>}
            </span>
          </label>
        </li>
      ))}
    </ul>
  );
}

export function ExposeDialog({ connection, onClose }: { connection: ConnectionSummary; onClose: () => void }) {
  const [selected, setSelected] = useState(connection.exposedRoles);
  const [busy, run] = useAction();
  return (
    <Dialog
      title={`Roles ${connection.name} may address`}
      description={`Its roles can ask these roles of yours; the others refuse what ${connection.name} sends.`}
      onClose={onClose}
      size="sm"
      footer={
        <>
          <button type="button" className="btn btn-ghost" onClick={onClose}>
            Cancel
          </button>
          <button
            type="button"
            className="btn btn-primary"
            disabled={busy}
            onClick={() =>
              void run(() => useConnections.getState().expose(connection.id, selected)).then((ok) => ok && onClose())
            }
          >
            Save
          </button>
        </>
      }
    >
      <RoleChecklist selected={selected} onChange={setSelected} />
    </Dialog>
  );
}

export function QueueLimitDialog({ connection, onClose }: { connection: ConnectionSummary; onClose: () => void }) {
  const [value, setValue] = useState(String(connection.queue.limit));
  const [error, setError] = useState<string | null>(null);
  const [busy, run] = useAction();
  const formId = useId();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const limit = Number(value);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100_000) return setError('A whole number from 1 to 100,000.');
    setError(null);
    void run(() => useConnections.getState().setQueueLimit(connection.id, limit)).then((ok) => ok && onClose());
  };
  return (
    <Dialog
      title={`Queue limit for ${connection.name}`}
      description="How many outgoing texts may wait to be sent or acknowledged on this connection; a send over it is refused."
      size="sm"
      onClose={onClose}
      footer={<DialogButtons formId={formId} busy={busy} submitLabel="Save" onCancel={onClose} />}
    >
      <form id={formId} className="form" onSubmit={submit}>
        <label className={`field${error ? ' has-error' : ''}`}>
          <span className="field-label">Queue limit</span>
          <input inputMode="numeric" value={value} onChange={(event) => setValue(event.target.value)} autoFocus />
          {error && <span className="field-error">{error}</span>}
        </label>
      </form>
    </Dialog>
  );
}

export const outgoingWords: Record<OutgoingPolicy, string> = {
  send: 'Sends go out at once',
  ask: 'Sends wait for approval',
};

export const incomingWords: Record<IncomingPolicy, string> = {
  run: 'Their texts go to the agent at once',
  ask: 'Their texts wait for approval',
};

/** Owner: whether agents' sends to the peer, and the peer's texts to agents, wait for a person. */
export function PolicyDialog({ connection, onClose }: { connection: ConnectionSummary; onClose: () => void }) {
  const [outgoing, setOutgoing] = useState(connection.policy.outgoing);
  const [incoming, setIncoming] = useState(connection.policy.incoming);
  const [busy, run] = useAction();
  const formId = useId();
  const name = connection.name;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run(() => useConnections.getState().setPolicy(connection.id, { outgoing, incoming })).then(
      (ok) => ok && onClose(),
    );
  };
  return (
    <Dialog
      title={`Approval for ${name}`}
      description={`Whether a person approves what your agents send to ${name}, and what ${name} sends them, before it moves.`}
      size="sm"
      onClose={onClose}
      footer={<DialogButtons formId={formId} busy={busy} submitLabel="Save" onCancel={onClose} />}
    >
      <form id={formId} className="form" onSubmit={submit}>
        <fieldset className="field">
          <legend className="field-label">What your agents send to {name}</legend>
          <label className="check">
            <input type="radio" name="outgoing" checked={outgoing === 'send'} onChange={() => setOutgoing('send')} />
            <span>Send at once</span>
          </label>
          <label className="check">
            <input type="radio" name="outgoing" checked={outgoing === 'ask'} onChange={() => setOutgoing('ask')} />
            <span>
              Wait for approval
              <span className="muted">
                {' '}
                — by the person whose conversation or task it is for; an owner for answers to {name}
              </span>
            </span>
          </label>
        </fieldset>
        <fieldset className="field">
          <legend className="field-label">What {name} sends your agents</legend>
          <label className="check">
            <input type="radio" name="incoming" checked={incoming === 'run'} onChange={() => setIncoming('run')} />
            <span>Give it to the agent at once</span>
          </label>
          <label className="check">
            <input type="radio" name="incoming" checked={incoming === 'ask'} onChange={() => setIncoming('ask')} />
            <span>
              Wait for approval
              <span className="muted">
                {' '}
                — it is stored and acknowledged, but no agent sees it until someone approves
              </span>
            </span>
          </label>
        </fieldset>
        <p className="muted small">Texts already waiting keep waiting until someone approves or denies them.</p>
      </form>
    </Dialog>
  );
}
