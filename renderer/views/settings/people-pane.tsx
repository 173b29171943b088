// Settings › People: who uses this installation, and their sign-in tokens.
import { useEffect, useState, type FormEvent } from 'react';
import type { Person } from '../../../shared/domain';
import { Avatar, Badge, ConfirmDialog, CopyField, ErrorNote, Loading, useAction } from '../../components/ui';
import { fullTime, shortTime } from '../../format';
import { messageOf } from '../../state/client';
import { selectPeople, selectPeopleError, usePeople } from '../../state/people';
import { selectIsOwner, selectPerson, useSession } from '../../state/session';
import { PaneHeader } from './pane-header';

export function PeoplePane() {
  const people = usePeople(selectPeople);
  const error = usePeople(selectPeopleError);
  const load = usePeople((s) => s.load);
  const isOwner = useSession(selectIsOwner);
  const me = useSession(selectPerson);
  const [added, setAdded] = useState<{ person: Person; token: string } | null>(null);
  const [removing, setRemoving] = useState<Person | null>(null);
  const [reissuing, setReissuing] = useState<Person | null>(null);
  const [reissued, setReissued] = useState<{ person: Person; token: string } | null>(null);
  useEffect(() => {
    void load();
  }, [load]);
  return (
    <section aria-label="People">
      <PaneHeader
        title="People"
        description="Everyone who uses this installation. Owners manage people, roles and connections; members use them."
      />
      {isOwner && <AddPerson onAdded={setAdded} />}
      {added && (
        <div className="callout" role="status">
          <p>
            <strong>{added.person.name}</strong> was added as {added.person.kind === 'owner' ? 'an owner' : 'a member'}.
            Give them this sign-in token — it is shown only now.
          </p>
          <CopyField label={`Sign-in token for ${added.person.name}`} value={added.token} copyLabel="Copy token" />
          {window.location.protocol.startsWith('http') && (
            <CopyField
              label="Sign-in link"
              value={`${window.location.origin}/#token=${added.token}`}
              copyLabel="Copy link"
            />
          )}
          <button type="button" className="btn btn-ghost btn-sm" onClick={() => setAdded(null)}>
            Done
          </button>
        </div>
      )}
      {reissued && (
        <div className="callout" role="status">
          <p>
            A new sign-in token for <strong>{reissued.person.name}</strong>
            {reissued.person.id === me?.id ? ' (you)' : ''}: the old one no longer works, and every tab signed in with
            it was signed out. Shown only now.
          </p>
          <CopyField
            label={`New sign-in token for ${reissued.person.name}`}
            value={reissued.token}
            copyLabel="Copy token"
          />
          <button type="button" className="btn btn-ghost btn-sm" onClick={() => setReissued(null)}>
            Done
          </button>
        </div>
      )}
      {error && !people && <ErrorNote onRetry={() => void load()}>{error}</ErrorNote>}
      {!people && !error && <Loading />}
      <ul className="people-list card">
        {people?.map((person) => (
          <li key={person.id} className="person-row">
            <Avatar name={person.name} />
            <span className="person-text">
              <span>
                <strong>{person.name}</strong>
                {person.id === me?.id && <span className="muted"> (you)</span>}
              </span>
              <span className="muted small">
                joined{' '}
                <time dateTime={person.createdAt} title={fullTime(person.createdAt)}>
                  {shortTime(person.createdAt)}
                </time>
              </span>
            </span>
            <Badge tone={person.kind === 'owner' ? 'accent' : 'neutral'}>
              {person.kind === 'owner' ? 'Owner' : 'Member'}
            </Badge>
            {isOwner && (
              <button
                type="button"
                className="btn btn-ghost btn-sm"
                aria-label={`Reissue token for ${person.name}`}
                onClick={() => setReissuing(person)}
              >
                Reissue token
              </button>
            )}
            {isOwner && person.id !== me?.id && (
              <button
                type="button"
                className="btn btn-ghost btn-sm btn-danger-text"
                onClick={() => setRemoving(person)}
              >
                Remove
              </button>
            )}
          </li>
        ))}
      </ul>
      {removing && (
        <ConfirmDialog
          title={`Remove ${removing.name}?`}
          body={<p>Their conversations and sign-in tokens are deleted; their agents are stopped.</p>}
          confirm="Remove"
          onConfirm={() => usePeople.getState().remove(removing.id)}
          onClose={() => setRemoving(null)}
        />
      )}
      {reissuing && (
        <ConfirmDialog
          title={`Reissue ${reissuing.name}’s sign-in token?`}
          body={
            <p>
              A new token replaces the old one, which stops working at once: every tab signed in with it is signed out.
            </p>
          }
          confirm="Reissue"
          tone="primary"
          onConfirm={async () =>
            setReissued({ person: reissuing, token: await usePeople.getState().reissue(reissuing.id) })
          }
          onClose={() => setReissuing(null)}
        />
      )}
    </section>
  );
}

export function AddPerson({ onAdded }: { onAdded: (added: { person: Person; token: string }) => void }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<'member' | 'owner'>('member');
  const [error, setError] = useState<string | null>(null);
  const [busy, run] = useAction();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim()) return setError('Give a name.');
    setError(null);
    void run(async () => {
      try {
        onAdded(await usePeople.getState().add(name.trim(), kind));
        setName('');
      } catch (caught) {
        setError(messageOf(caught));
      }
    });
  };
  return (
    <form className="card add-person" onSubmit={submit} aria-label="Add a person">
      <label className={`field grow${error ? ' has-error' : ''}`}>
        <span className="field-label">Name</span>
        <input value={name} onChange={(event) => setName(event.target.value)} placeholder="Dana" />
        {error && <span className="field-error">{error}</span>}
      </label>
      <label className="field">
        <span className="field-label">Kind</span>
        <select value={kind} onChange={(event) => setKind(event.target.value as 'member' | 'owner')}>
          <option value="member">Member</option>
          <option value="owner">Owner</option>
        </select>
      </label>
      <button type="submit" className="btn btn-primary" disabled={busy}>
        Add person
      </button>
    </form>
  );
}
