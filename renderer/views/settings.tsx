// Settings: connections to peers, the people of this installation and its roles.
// Everyone reads them; the owner's controls are not there for members (main refuses
// them anyway).
import { useEffect, useId, useState, type FormEvent, type ReactNode } from 'react';
import type { Invitation } from '../../shared/api-contract';
import type {
  ConnectionSummary,
  IncomingPolicy,
  OutgoingPolicy,
  Person,
  RoleView,
  TrustLevel,
} from '../../shared/domain';
import { TRUST_LEVELS } from '../../shared/domain';
import {
  ArrowInIcon,
  ArrowOutIcon,
  GearIcon,
  LinkIcon,
  PauseIcon,
  PeopleIcon,
  PlayIcon,
  PlugIcon,
  PlusIcon,
  RobotIcon,
} from '../components/icons';
import { useTabs } from '../components/tabs';
import {
  Avatar,
  Badge,
  ConfirmDialog,
  CopyField,
  Dialog,
  DialogButtons,
  EmptyState,
  ErrorNote,
  Loading,
  useAction,
} from '../components/ui';
import { fullTime, shortTime } from '../format';
import { acceptFailure } from '../plain-errors';
import { messageOf } from '../store/client';
import { selectConnections, selectConnectionsError, useConnections } from '../store/connections';
import { selectNetwork, useNetwork } from '../store/network';
import { selectPeople, selectPeopleError, usePeople } from '../store/people';
import { selectRoles, selectRolesError, useRoles } from '../store/roles';
import { selectIsOwner, selectPerson, useSession } from '../store/session';
import { selectPendingInvitation, useUi, type SettingsTab } from '../store/ui';
import { PeerAddressCard, ThisComputerOnly } from './peer-address';
import { PendingInvitations } from './pending-invitations';
import { ActedBy, AlwaysAllowed, NotificationsButton } from './connection-remembered';
import { adapterLabel } from './adapter-label';
import { RoleEditor } from './role-editor';

const tabs: Array<{ id: SettingsTab; label: string; icon: ReactNode }> = [
  { id: 'connections', label: 'Connections', icon: <PlugIcon size={16} /> },
  { id: 'people', label: 'People', icon: <PeopleIcon size={16} /> },
  { id: 'roles', label: 'Roles', icon: <RobotIcon size={16} /> },
];

const tabIds = tabs.map((t) => t.id);

export function SettingsView({ tab }: { tab: SettingsTab }) {
  const navigate = useUi((s) => s.navigate);
  const tabsId = useId();
  const tabProps = useTabs(tabIds, tab, (id) => navigate({ kind: 'settings', tab: id }));
  return (
    <div className="view settings-view">
      <header className="view-header">
        <span className="view-icon" aria-hidden="true">
          <GearIcon size={22} />
        </span>
        <div className="view-title">
          <h1>Settings</h1>
          <p className="muted">Connections to other installations, the people here and their roles.</p>
        </div>
      </header>
      <div className="tabs" role="tablist" aria-label="Settings">
        {tabs.map((t) => (
          <button
            key={t.id}
            type="button"
            {...tabProps(t.id)}
            id={`${tabsId}-${t.id}`}
            aria-controls={`${tabsId}-panel`}
            className="tab"
          >
            {t.icon}
            {t.label}
          </button>
        ))}
      </div>
      {/* Focusable, as a tab panel is: it scrolls, and a member's may hold no control to reach it by. */}
      <div
        className="settings-body"
        role="tabpanel"
        tabIndex={0}
        id={`${tabsId}-panel`}
        aria-labelledby={`${tabsId}-${tab}`}
      >
        {tab === 'connections' && <ConnectionsPane />}
        {tab === 'people' && <PeoplePane />}
        {tab === 'roles' && <RolesPane />}
      </div>
    </div>
  );
}

function PaneHeader({ title, description, actions }: { title: string; description: ReactNode; actions?: ReactNode }) {
  return (
    <div className="pane-intro">
      <div>
        <h2>{title}</h2>
        <p className="muted">{description}</p>
      </div>
      {actions && <div className="pane-actions">{actions}</div>}
    </div>
  );
}

// ------------------------------------------------------------------ connections

function ConnectionsPane() {
  const list = useConnections(selectConnections);
  const error = useConnections(selectConnectionsError);
  const load = useConnections((s) => s.load);
  const isOwner = useSession(selectIsOwner);
  const pending = useUi(selectPendingInvitation);
  const [dialog, setDialog] = useState<'invite' | 'accept' | null>(null);
  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    if (pending && isOwner) setDialog('accept');
  }, [pending, isOwner]);
  return (
    <section aria-label="Connections">
      <PaneHeader
        title="Connections"
        description="Installations this one is paired with. Their roles and yours talk only through these."
        actions={
          <>
            <NotificationsButton />
            {isOwner && (
              <>
                <button type="button" className="btn btn-secondary" onClick={() => setDialog('accept')}>
                  <LinkIcon size={16} />
                  Accept
                </button>
                <button type="button" className="btn btn-primary" onClick={() => setDialog('invite')}>
                  <PlusIcon size={16} />
                  Invite
                </button>
              </>
            )}
          </>
        }
      />
      <PeerAddressCard />
      <PendingInvitations isOwner={isOwner} />
      {error && !list && <ErrorNote onRetry={() => void load()}>{error}</ErrorNote>}
      {!list && !error && <Loading />}
      {list?.length === 0 && (
        <EmptyState icon={<PlugIcon size={28} />} title="Not connected to anyone yet">
          {isOwner
            ? 'Invite another installation’s owner, or accept the invitation they sent you.'
            : 'An owner of this installation pairs it with others.'}
        </EmptyState>
      )}
      <ul className="connection-list">
        {list?.map((connection) => (
          <li key={connection.id}>
            <ConnectionCard connection={connection} isOwner={isOwner} />
          </li>
        ))}
      </ul>
      {dialog === 'invite' && <InviteDialog onClose={() => setDialog(null)} />}
      {dialog === 'accept' && (
        <AcceptDialog
          initial={pending ?? ''}
          onClose={() => {
            setDialog(null);
            useUi.getState().offerInvitation(null);
          }}
        />
      )}
    </section>
  );
}

const statusTone = { active: 'good', paused: 'warn', revoked: 'bad' } as const;
const statusLabel = { active: 'Active', paused: 'Paused', revoked: 'Revoked' } as const;

/** How the open link travels, in words: the relay sees only ciphertext. */
const pathWords: Record<NonNullable<ConnectionSummary['path']>, string> = {
  direct: 'direct',
  holepunched: 'direct over the DHT (holepunched)',
  relayed: 'relayed (the relay sees only ciphertext)',
};

function ConnectionCard({ connection: c, isOwner }: { connection: ConnectionSummary; isOwner: boolean }) {
  const { pause, unpause, revoke, remove } = useConnections.getState();
  const [busy, run] = useAction();
  const [dialog, setDialog] = useState<'pause' | 'revoke' | 'remove' | 'expose' | 'limit' | 'policy' | null>(null);
  const share = c.queue.limit > 0 ? Math.min(1, c.queue.used / c.queue.limit) : 0;
  const revoked = c.status === 'revoked';
  return (
    <article className={`card connection-card status-${c.status}`} aria-label={`Connection ${c.name}`}>
      <header className="connection-head">
        <Avatar name={c.name} />
        <div className="connection-title">
          <h3>{c.name}</h3>
          <p className="muted small">
            {c.address
              ? `${c.address}${c.addressFrom === 'peer' ? ' (as they announced it)' : ''}`
              : c.dhtKey
                ? 'Found by DHT key'
                : 'They dial in'}{' '}
            {c.path && `· ${pathWords[c.path]} `}· paired{' '}
            <time dateTime={c.createdAt} title={fullTime(c.createdAt)}>
              {shortTime(c.createdAt)}
            </time>
          </p>
        </div>
        <div className="connection-badges">
          {!revoked && (
            <span className={`presence ${c.online ? 'is-online' : 'is-offline'}`}>
              <span className="dot" aria-hidden="true" />
              {c.online ? 'Online' : 'Offline'}
            </span>
          )}
          {c.peerPausedAt && !revoked && c.status === 'active' ? (
            <Badge tone={statusTone.paused}>Paused by {c.name}</Badge>
          ) : (
            <Badge tone={statusTone[c.status]}>{statusLabel[c.status]}</Badge>
          )}
        </div>
      </header>
      <ActedBy connection={c} />
      <div className="connection-grid">
        <div className="stat">
          <span className="stat-label">Queue</span>
          <span className="stat-value" title="Outgoing texts waiting to be sent or acknowledged, against the limit">
            {c.queue.used.toLocaleString()} / {c.queue.limit.toLocaleString()}
          </span>
          <span className={`meter${share > 0.8 ? ' is-high' : ''}`} aria-hidden="true">
            <span style={{ width: `${Math.round(share * 100)}%` }} />
          </span>
          {isOwner && !revoked && (
            <button type="button" className="link-button small" onClick={() => setDialog('limit')}>
              Change limit
            </button>
          )}
        </div>
        <div className="stat">
          <span className="stat-label">You may address</span>
          <RoleChips
            names={c.peerRoles.map((r) => r.name)}
            titles={c.peerRoles.map((r) => r.description)}
            peer={c.name}
          />
        </div>
        <div className="stat">
          <span className="stat-label">They may address</span>
          <RoleChips names={c.exposedRoles} />
          {isOwner && !revoked && (
            <button type="button" className="link-button small" onClick={() => setDialog('expose')}>
              Choose roles
            </button>
          )}
        </div>
        <div className="stat">
          <span className="stat-label">Approval</span>
          <span className="policy-lines">
            <span>
              <ArrowOutIcon size={12} /> {outgoingWords[c.policy.outgoing]}
            </span>
            <span>
              <ArrowInIcon size={12} /> {incomingWords[c.policy.incoming]}
            </span>
          </span>
          {isOwner && !revoked && (
            <button type="button" className="link-button small" onClick={() => setDialog('policy')}>
              Change approval
            </button>
          )}
        </div>
        <TrustStat connection={c} editable={isOwner && !revoked} />
      </div>
      <AlwaysAllowed connection={c} />
      {c.lastError && !revoked && <p className="warning small">Last problem: {c.lastError}</p>}
      <footer className="connection-foot">
        <code className="fingerprint" title={`Certificate fingerprint ${c.fingerprint}`}>
          {c.fingerprint.slice(0, 20)}…
        </code>
        {isOwner && !revoked && (
          <div className="connection-actions">
            {c.status === 'active' ? (
              <button
                type="button"
                className="btn btn-secondary btn-sm"
                disabled={busy}
                onClick={() => setDialog('pause')}
              >
                <PauseIcon size={14} />
                Pause
              </button>
            ) : (
              <button
                type="button"
                className="btn btn-secondary btn-sm"
                disabled={busy}
                onClick={() => void run(() => unpause(c.id))}
              >
                <PlayIcon size={14} />
                Unpause
              </button>
            )}
            <button type="button" className="btn btn-ghost btn-sm btn-danger-text" onClick={() => setDialog('revoke')}>
              Revoke
            </button>
          </div>
        )}
        {isOwner && revoked && (
          <div className="connection-actions">
            <button type="button" className="btn btn-ghost btn-sm" onClick={() => setDialog('remove')}>
              Remove from list
            </button>
          </div>
        )}
      </footer>
      {c.status === 'paused' && (
        <p className="paused-note small">
          Paused here: its agents were stopped, nothing is sent to {c.name} and what it sends is refused until you
          unpause.
        </p>
      )}
      {c.peerPausedAt && !revoked && (
        <p className="paused-note small peer-paused-note">
          {c.name} paused the connection{' '}
          <time dateTime={c.peerPausedAt} title={fullTime(c.peerPausedAt)}>
            {shortTime(c.peerPausedAt)}
          </time>
          : your agents’ sends to {c.name} are refused until {c.name} unpauses.
        </p>
      )}
      {dialog === 'pause' && (
        <ConfirmDialog
          title={`Pause the connection to ${c.name}?`}
          body={
            <>
              <p>
                The agents at work in its agent conversations are stopped; nothing is sent to {c.name}, texts waiting to
                go out fail, and what {c.name} sends is refused.
              </p>
              <p className="muted">Unpausing later lets texts through again; it restarts nothing by itself.</p>
            </>
          }
          confirm="Pause"
          tone="primary"
          onConfirm={() => pause(c.id)}
          onClose={() => setDialog(null)}
        />
      )}
      {dialog === 'revoke' && (
        <ConfirmDialog
          title={`Revoke the connection to ${c.name}?`}
          body={
            <>
              <p>
                This is permanent: every agent conversation with {c.name} closes, and {c.name}&rsquo;s installation is
                refused from now on. The two installations cannot be paired again, not even with a new invitation.
              </p>
              <p className="muted">To stop it for a while, pause it instead.</p>
            </>
          }
          confirm="Revoke"
          onConfirm={() => revoke(c.id)}
          onClose={() => setDialog(null)}
        />
      )}
      {dialog === 'remove' && (
        <ConfirmDialog
          title={`Remove ${c.name} from the list?`}
          body={
            <>
              <p>
                The revoked connection leaves this list. Its agent conversations stay where they are, with their
                history.
              </p>
              <p className="muted">{c.name} stays refused: removing does not undo the revocation.</p>
            </>
          }
          confirm="Remove"
          tone="primary"
          onConfirm={() => remove(c.id)}
          onClose={() => setDialog(null)}
        />
      )}
      {dialog === 'expose' && <ExposeDialog connection={c} onClose={() => setDialog(null)} />}
      {dialog === 'limit' && <QueueLimitDialog connection={c} onClose={() => setDialog(null)} />}
      {dialog === 'policy' && <PolicyDialog connection={c} onClose={() => setDialog(null)} />}
    </article>
  );
}

function RoleChips({ names, titles, peer }: { names: string[]; titles?: string[]; peer?: string }) {
  if (names.length === 0) return <span className="muted small">No roles</span>;
  return (
    <span className="chips">
      {names.map((name, i) => (
        <span key={name} className="chip" title={titles?.[i] || undefined}>
          {peer ? `${peer}/${name}` : name}
        </span>
      ))}
    </span>
  );
}

function RoleChecklist({ selected, onChange }: { selected: string[]; onChange: (roles: string[]) => void }) {
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

function ExposeDialog({ connection, onClose }: { connection: ConnectionSummary; onClose: () => void }) {
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

function QueueLimitDialog({ connection, onClose }: { connection: ConnectionSummary; onClose: () => void }) {
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

const outgoingWords: Record<OutgoingPolicy, string> = {
  send: 'Sends go out at once',
  ask: 'Sends wait for approval',
};
const incomingWords: Record<IncomingPolicy, string> = {
  run: 'Their texts go to the agent at once',
  ask: 'Their texts wait for approval',
};

/** Owner: whether agents' sends to the peer, and the peer's texts to agents, wait for a person. */
function PolicyDialog({ connection, onClose }: { connection: ConnectionSummary; onClose: () => void }) {
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

const trustWords: Record<TrustLevel, { label: string; says: string }> = {
  answer: {
    label: 'Answers only',
    says: 'Agents working for them read the role’s folder and reach only their model; every tool request is denied.',
  },
  work: {
    label: 'Work in the role’s folder',
    says: 'Agents working for them may change files in the role’s folder; tool requests wait for a person.',
  },
  full: {
    label: 'Full: as the role’s own settings',
    says: 'Agents working for them run as the role’s settings say, as they do for you.',
  },
};

/** How far agents working for this peer may reach: owners change it, everyone reads it. */
function TrustStat({ connection, editable }: { connection: ConnectionSummary; editable: boolean }) {
  const [busy, run] = useAction();
  const id = useId();
  const words = trustWords[connection.trust];
  return (
    <div className="stat">
      <span className="stat-label" id={`${id}-label`}>
        Trust
      </span>
      {editable ? (
        <select
          aria-label={`Trust for ${connection.name}`}
          aria-describedby={`${id}-says`}
          value={connection.trust}
          disabled={busy}
          onChange={(event) => {
            const level = event.target.value as TrustLevel;
            void run(() => useConnections.getState().setTrust(connection.id, level));
          }}
        >
          {TRUST_LEVELS.map((level) => (
            <option key={level} value={level}>
              {trustWords[level].label}
            </option>
          ))}
        </select>
      ) : (
        <span aria-labelledby={`${id}-label`}>{words.label}</span>
      )}
      <span className="muted small" id={`${id}-says`}>
        {words.says}
      </span>
    </div>
  );
}

const expiries = [
  { minutes: 60, label: '1 hour' },
  { minutes: 24 * 60, label: '1 day' },
  { minutes: 7 * 24 * 60, label: '7 days' },
];

function InviteDialog({ onClose }: { onClose: () => void }) {
  const [roles, setRoles] = useState<string[]>([]);
  const [expires, setExpires] = useState(24 * 60);
  const [invitation, setInvitation] = useState<Invitation | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, run] = useAction();
  const network = useNetwork(selectNetwork);
  useEffect(() => {
    void useNetwork.getState().load();
  }, []);
  const create = () =>
    void run(async () => {
      try {
        setError(null);
        setInvitation(await useConnections.getState().invite(roles, expires));
      } catch (caught) {
        setError(messageOf(caught));
      }
    });
  return (
    <Dialog
      title="Invite an installation"
      description={
        invitation
          ? 'Send the code or the link to the other installation’s owner. It works once.'
          : 'Make a one-time invitation for another installation’s owner.'
      }
      onClose={onClose}
      footer={
        invitation ? (
          <button type="button" className="btn btn-primary" onClick={onClose}>
            Done
          </button>
        ) : (
          <>
            <button type="button" className="btn btn-ghost" onClick={onClose}>
              Cancel
            </button>
            <button type="button" className="btn btn-primary" disabled={busy} onClick={create}>
              Create invitation
            </button>
          </>
        )
      }
    >
      {invitation ? (
        <div className="form">
          <CopyField label="Invitation code" value={invitation.code} copyLabel="Copy code" multiline />
          <CopyField label="Invitation link" value={invitation.link} copyLabel="Copy link" />
          <p className="invite-address">
            {invitation.address ? (
              <>
                They will dial <code>{invitation.address}</code>
                {invitation.dht ? ', and find this installation by its DHT key if that fails' : ''}.
              </>
            ) : (
              'They will find this installation by its DHT key, wherever both of you are.'
            )}
          </p>
          {network && network.invitationAddress === invitation.address && <ThisComputerOnly status={network} />}
          <p className="muted small">
            Expires{' '}
            <time dateTime={invitation.expiresAt} title={fullTime(invitation.expiresAt)}>
              {fullTime(invitation.expiresAt)}
            </time>
            .
            {roles.length > 0 ? ` They may address: ${roles.join(', ')}.` : ' They may address none of your roles yet.'}
          </p>
        </div>
      ) : (
        <div className="form">
          <fieldset className="field">
            <legend className="field-label">Roles they may address</legend>
            <RoleChecklist selected={roles} onChange={setRoles} />
          </fieldset>
          {network && (
            <div className="invite-address">
              {network.invitationAddress ? (
                <p>
                  The invitation tells them to dial <code>{network.invitationAddress}</code>.
                </p>
              ) : (
                <p className="warning">{network.problem ?? 'There is no address peers could dial.'}</p>
              )}
              <ThisComputerOnly status={network} />
            </div>
          )}
          <label className="field">
            <span className="field-label">Valid for</span>
            <select value={expires} onChange={(event) => setExpires(Number(event.target.value))}>
              {expiries.map((e) => (
                <option key={e.minutes} value={e.minutes}>
                  {e.label}
                </option>
              ))}
            </select>
          </label>
          {error && (
            <p className="field-error" role="alert">
              {error}
            </p>
          )}
        </div>
      )}
    </Dialog>
  );
}

function AcceptDialog({ initial, onClose }: { initial: string; onClose: () => void }) {
  const [code, setCode] = useState(initial);
  const [roles, setRoles] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, run] = useAction();
  const formId = useId();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (code.trim().length < 10) return setError('Paste the whole invitation code or parley:// link.');
    setError(null);
    void run(async () => {
      try {
        const connection = await useConnections.getState().accept(code.trim(), roles);
        useUi.getState().toast(`Connected to ${connection.name}`);
        onClose();
      } catch (caught) {
        setError(acceptFailure(caught));
      }
    });
  };
  return (
    <Dialog
      title="Accept an invitation"
      description="Paste the code or link another installation’s owner sent you."
      onClose={onClose}
      footer={
        <DialogButtons
          formId={formId}
          busy={busy}
          submitLabel={busy ? 'Connecting…' : 'Accept'}
          onCancel={onClose}
          cancelWhileBusy={false}
        />
      }
    >
      <form id={formId} className="form" onSubmit={submit}>
        <label className={`field${error ? ' has-error' : ''}`}>
          <span className="field-label">Invitation code</span>
          <textarea
            value={code}
            rows={3}
            spellCheck={false}
            placeholder="parley://… or the code"
            onChange={(event) => setCode(event.target.value)}
            autoFocus
          />
          {error && <span className="field-error">{error}</span>}
        </label>
        <fieldset className="field">
          <legend className="field-label">Roles they may address</legend>
          <RoleChecklist selected={roles} onChange={setRoles} />
        </fieldset>
      </form>
    </Dialog>
  );
}

// ------------------------------------------------------------------ people

function PeoplePane() {
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

function AddPerson({ onAdded }: { onAdded: (added: { person: Person; token: string }) => void }) {
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

// ------------------------------------------------------------------ roles

function describeAgent(role: RoleView): string {
  const a = role.agent;
  switch (a.adapter) {
    case 'command':
      return a.command.join(' ');
    case 'claude-code':
    case 'codex':
      return [a.command ?? (a.adapter === 'codex' ? 'codex' : 'claude'), a.model].filter(Boolean).join(' · ');
    case 'openai-compatible':
      return `${a.model} at ${a.baseUrl}`;
    case 'acp':
      return [a.command.join(' '), a.model].filter(Boolean).join(' · ');
    default:
      return 'Built-in rules';
  }
}

function RolesPane() {
  const roles = useRoles(selectRoles);
  const error = useRoles(selectRolesError);
  const load = useRoles((s) => s.load);
  const isOwner = useSession(selectIsOwner);
  const [editing, setEditing] = useState<RoleView | 'new' | null>(null);
  const [removing, setRemoving] = useState<RoleView | null>(null);
  const [token, setToken] = useState<{ role: string; token: string } | null>(null);
  const [, run] = useAction();
  useEffect(() => {
    void load();
  }, [load]);
  return (
    <section aria-label="Roles">
      <PaneHeader
        title="Roles"
        description="The agents of this installation. Each has its own agent, settings and instructions."
        actions={
          isOwner && (
            <button type="button" className="btn btn-primary" onClick={() => setEditing('new')}>
              <PlusIcon size={16} />
              New role
            </button>
          )
        }
      />
      {token && (
        <div className="callout" role="status">
          <p>
            A role token for <strong>{token.role}</strong>: scripts read its agent conversations with it; it can never
            send. Shown only now.
          </p>
          <CopyField label="Role token" value={token.token} copyLabel="Copy token" />
          <button type="button" className="btn btn-ghost btn-sm" onClick={() => setToken(null)}>
            Done
          </button>
        </div>
      )}
      {roles?.find((role) => role.unsandboxed) && (
        <p className="callout" role="status">
          Agents start without a sandbox on this computer ({roles.find((role) => role.unsandboxed)!.unsandboxed}). Your
          own runs start; runs working for a peer start only on a connection an owner allowed without a sandbox.
        </p>
      )}
      {roles?.some((role) => role.movedFrom) && (
        <p className="callout" role="status">
          Roles now work in folders of their own, outside Parley’s data folder, which agents can no longer read. Their
          old files stay where they were:{' '}
          {roles
            .filter((role) => role.movedFrom)
            .map((role) => `${role.name} (${role.movedFrom})`)
            .join(', ')}
          .
        </p>
      )}
      {error && !roles && <ErrorNote onRetry={() => void load()}>{error}</ErrorNote>}
      {!roles && !error && <Loading />}
      {roles?.length === 0 && (
        <EmptyState icon={<RobotIcon size={28} />} title="No roles yet">
          {isOwner ? 'Make the first one: an assistant, a researcher…' : 'An owner of this installation makes roles.'}
        </EmptyState>
      )}
      <ul className="role-list">
        {roles?.map((role) => (
          <li key={role.id} className="card role-card" aria-label={`Role ${role.name}`}>
            <Avatar name={role.name} square />
            <div className="role-text">
              <div className="role-title">
                <h3>{role.name}</h3>
                <Badge tone="accent">{adapterLabel[role.agent.adapter]}</Badge>
              </div>
              {role.description && <p>{role.description}</p>}
              <p className="muted small mono">{describeAgent(role)}</p>
            </div>
            {isOwner && (
              <div className="role-actions">
                <button type="button" className="btn btn-secondary btn-sm" onClick={() => setEditing(role)}>
                  Edit
                </button>
                <button
                  type="button"
                  className="btn btn-ghost btn-sm"
                  onClick={() =>
                    void run(async () => setToken({ role: role.name, token: await useRoles.getState().token(role.id) }))
                  }
                >
                  Role token
                </button>
                <button
                  type="button"
                  className="btn btn-ghost btn-sm btn-danger-text"
                  onClick={() => setRemoving(role)}
                >
                  Remove
                </button>
              </div>
            )}
          </li>
        ))}
      </ul>
      {editing && <RoleEditor role={editing === 'new' ? null : editing} onClose={() => setEditing(null)} />}
      {removing && (
        <ConfirmDialog
          title={`Remove the role ${removing.name}?`}
          body={<p>Its agents are stopped, and its conversations and tasks are deleted with it.</p>}
          confirm="Remove"
          onConfirm={() => useRoles.getState().remove(removing.id)}
          onClose={() => setRemoving(null)}
        />
      )}
    </section>
  );
}
