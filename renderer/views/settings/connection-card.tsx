// One peer connection: its state and path, its roles each way, and the owner's pause, revoke and remove.
import { useState } from 'react';
import type { ConnectionSummary } from '../../../shared/domain';
import { ArrowInIcon, ArrowOutIcon, PauseIcon, PlayIcon } from '../../components/icons';
import { Avatar, Badge, ConfirmDialog, useAction } from '../../components/ui';
import { fullTime, shortTime } from '../../format';
import { useConnections } from '../../state/connections';
import { ExposeDialog, PolicyDialog, QueueLimitDialog, incomingWords, outgoingWords } from './connection-dialogs';
import { ActedBy, AlwaysAllowed } from './connection-remembered';
import { SandboxSwitch } from './sandbox-switch';
import { TrustStat } from './trust-stat';

export const statusTone = { active: 'good', paused: 'warn', revoked: 'bad' } as const;

export const statusLabel = { active: 'Active', paused: 'Paused', revoked: 'Revoked' } as const;

/** How the open link travels, in words: the relay sees only ciphertext. */
export const pathWords: Record<NonNullable<ConnectionSummary['path']>, string> = {
  direct: 'direct',
  holepunched: 'direct over the DHT (holepunched)',
  relayed: 'relayed (the relay sees only ciphertext)',
};

/** The relay a link goes through, by the address it was added with here, else its key. */
const relayedThrough = (relay: NonNullable<ConnectionSummary['relay']>) =>
  `relayed through ${relay.address ?? `${relay.key.slice(0, 12)}…`} (the relay sees only ciphertext)`;

export function ConnectionCard({ connection: c, isOwner }: { connection: ConnectionSummary; isOwner: boolean }) {
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
            {c.path && `· ${c.relay ? relayedThrough(c.relay) : pathWords[c.path]} `}· paired{' '}
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
        <SandboxSwitch connection={c} editable={isOwner && !revoked} />
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

export function RoleChips({ names, titles, peer }: { names: string[]; titles?: string[]; peer?: string }) {
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
