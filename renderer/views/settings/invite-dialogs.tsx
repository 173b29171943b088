// Making an invitation for a peer and accepting one from a peer.
import { useEffect, useId, useState, type FormEvent } from 'react';
import type { Invitation } from '../../../shared/api-contract';
import { CopyField, Dialog, DialogButtons, useAction } from '../../components/ui';
import { fullTime } from '../../format';
import { acceptFailure } from '../../plain-errors';
import { messageOf } from '../../state/client';
import { useConnections } from '../../state/connections';
import { selectNetwork, useNetwork } from '../../state/network';
import { useUi } from '../../state/ui';
import { ThisComputerOnly } from '../peer-address';
import { RoleChecklist } from './connection-dialogs';

export const expiries = [
  { minutes: 60, label: '1 hour' },
  { minutes: 24 * 60, label: '1 day' },
  { minutes: 7 * 24 * 60, label: '7 days' },
];

export function InviteDialog({ onClose }: { onClose: () => void }) {
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

export function AcceptDialog({ initial, onClose }: { initial: string; onClose: () => void }) {
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
