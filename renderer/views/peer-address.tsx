// Where peers reach this installation: the address invitations carry, whether peers
// can reach it, and (owners of the desktop app) where it listens. `parley serve` takes
// these from its flags, so there they are shown and not changed.
import { useEffect, useId, useState, type FormEvent } from 'react';
import type { PeerNetworkStatus } from '../../shared/api-contract';
import { AlertIcon, PlugIcon } from '../components/icons';
import { Badge, Dialog, DialogButtons, ErrorNote, Loading, useAction } from '../components/ui';
import { fullTime } from '../format';
import { messageOf } from '../state/client';
import { selectChecking, selectNetwork, selectNetworkError, useNetwork } from '../state/network';
import { selectIsOwner, useSession } from '../state/session';

function reachability(status: PeerNetworkStatus): { tone: 'good' | 'bad' | 'neutral'; label: string } {
  if (!status.listening) return { tone: 'bad', label: 'Not listening' };
  if (!status.invitationAddress) return { tone: 'bad', label: 'No address to give' };
  if (!status.check) return { tone: 'neutral', label: 'Not checked yet' };
  return status.check.reachable ? { tone: 'good', label: 'Reachable' } : { tone: 'bad', label: 'Not reachable' };
}

/** A sentence for peers who are only on this computer, or for none. */
export function ThisComputerOnly({ status }: { status: PeerNetworkStatus }) {
  if (!status.thisComputerOnly) return null;
  return (
    <p className="muted small">
      Only programs on this computer can dial {status.invitationAddress}. For someone on another computer,{' '}
      {status.configuredBy === 'settings'
        ? 'change where peers reach you (Settings → Connections): listen on every network, advertise an address they can reach, and let the port through your firewall.'
        : 'start parley serve with --peer-host and --advertise set to an address they can reach.'}
    </p>
  );
}

export function PeerAddressCard() {
  const status = useNetwork(selectNetwork);
  const error = useNetwork(selectNetworkError);
  const checking = useNetwork(selectChecking);
  const { load, check } = useNetwork.getState();
  const isOwner = useSession(selectIsOwner);
  const [editing, setEditing] = useState(false);
  const [, run] = useAction();
  useEffect(() => {
    void load();
  }, [load]);
  if (error && !status) return <ErrorNote onRetry={() => void load()}>{error}</ErrorNote>;
  if (!status) return <Loading />;
  const badge = reachability(status);
  return (
    <article className="card peer-address" aria-label="How peers reach you">
      <header className="peer-address-head">
        <span className="view-icon" aria-hidden="true">
          <PlugIcon size={18} />
        </span>
        <div className="peer-address-title">
          <h3>How peers reach you</h3>
          <p>
            {status.invitationAddress ? (
              <>
                Invitations tell peers to dial <code className="peer-address-value">{status.invitationAddress}</code>
              </>
            ) : status.dht.state === 'on' ? (
              'Invitations carry this installation’s DHT key: peers find it from anywhere.'
            ) : (
              'Invitations cannot be made: there is no address peers could dial.'
            )}
          </p>
        </div>
        <Badge tone={badge.tone} title={status.check ? `Checked ${fullTime(status.check.at)}` : undefined}>
          {badge.label}
        </Badge>
      </header>
      <dl className="peer-address-facts small">
        <div>
          <dt>Listening on</dt>
          <dd>{status.listening ?? '—'}</dd>
        </div>
        <div>
          <dt>Advertised address</dt>
          <dd>{status.advertise ?? 'the listening address'}</dd>
        </div>
        <div>
          <dt>By DHT</dt>
          <dd className="peer-address-dht">
            {status.dht.state === 'on'
              ? `reachable from anywhere by key ${status.dht.key!.slice(0, 16)}… (${status.dht.bootstrap})`
              : status.dht.state === 'off'
                ? 'off: peers reach you only at the address above'
                : `not reachable: ${status.dht.problem ?? 'not on the DHT'}`}
          </dd>
        </div>
        <div>
          <dt>Set by</dt>
          <dd>
            {status.configuredBy === 'settings'
              ? 'these settings'
              : status.configuredBy === 'command line'
                ? 'parley serve’s flags (--peer-host, --peer-port, --advertise)'
                : 'nothing: this installation does not listen'}
          </dd>
        </div>
      </dl>
      {status.problem ? (
        <p className="warning small peer-address-problem" role="status">
          <AlertIcon size={14} /> {status.problem}
        </p>
      ) : (
        status.check && <p className="muted small">{status.check.message}</p>
      )}
      <ThisComputerOnly status={status} />
      {isOwner && status.configuredBy !== 'none' && (
        <div className="peer-address-actions">
          {status.configuredBy === 'settings' && (
            <button type="button" className="btn btn-secondary btn-sm" onClick={() => setEditing(true)}>
              Change address
            </button>
          )}
          {status.configuredBy === 'settings' && (status.dht.state !== 'off' || status.dht.bootstrap !== 'off') && (
            <button
              type="button"
              className="btn btn-ghost btn-sm"
              onClick={() => void run(() => useNetwork.getState().update({ dht: status.dht.state === 'off' }))}
            >
              {status.dht.state === 'off' ? 'Turn the DHT on' : 'Turn the DHT off'}
            </button>
          )}
          <button
            type="button"
            className="btn btn-ghost btn-sm"
            disabled={checking || !status.invitationAddress}
            onClick={() => void run(check)}
          >
            {checking ? 'Checking…' : 'Check now'}
          </button>
        </div>
      )}
      {editing && <PeerAddressDialog status={status} onClose={() => setEditing(false)} />}
    </article>
  );
}

type ListenChoice = 'this-computer' | 'every-network' | 'other';

const choiceOf = (host: string): ListenChoice =>
  host === '127.0.0.1' ? 'this-computer' : host === '0.0.0.0' ? 'every-network' : 'other';

function PeerAddressDialog({ status, onClose }: { status: PeerNetworkStatus; onClose: () => void }) {
  const [choice, setChoice] = useState<ListenChoice>(choiceOf(status.listenHost));
  const [otherHost, setOtherHost] = useState(choiceOf(status.listenHost) === 'other' ? status.listenHost : '');
  const [port, setPort] = useState(String(status.port));
  const [advertise, setAdvertise] = useState(status.advertise ?? '');
  const [error, setError] = useState<string | null>(null);
  const [busy, run] = useAction();
  const formId = useId();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const number = Number(port);
    if (!/^\d+$/.test(port.trim()) || number > 65535) return setError('The port is a whole number from 0 to 65535.');
    const listenHost = choice === 'this-computer' ? '127.0.0.1' : choice === 'every-network' ? '0.0.0.0' : otherHost;
    setError(null);
    void run(async () => {
      try {
        await useNetwork.getState().update({ listenHost, port: number, advertise: advertise.trim() || null });
        onClose();
      } catch (caught) {
        setError(messageOf(caught));
      }
    });
  };
  return (
    <Dialog
      title="Where peers reach you"
      description="Parley listens here first and keeps the old address if the new one cannot be had. Peers it can dial learn the new address at once."
      onClose={onClose}
      footer={<DialogButtons formId={formId} busy={busy} submitLabel="Save" onCancel={onClose} />}
    >
      <form id={formId} className="form" onSubmit={submit}>
        <label className="field">
          <span className="field-label">Listen on</span>
          <select value={choice} onChange={(event) => setChoice(event.target.value as ListenChoice)}>
            <option value="this-computer">This computer only (127.0.0.1)</option>
            <option value="every-network">Every network (0.0.0.0)</option>
            <option value="other">One address of this computer…</option>
          </select>
        </label>
        {choice === 'other' && (
          <label className="field">
            <span className="field-label">Listen address</span>
            <input
              value={otherHost}
              onChange={(event) => setOtherHost(event.target.value)}
              placeholder="192.0.2.7"
              spellCheck={false}
            />
          </label>
        )}
        <div className="field">
          <label className="field-label" htmlFor={`${formId}-port`}>
            Port
          </label>
          <input
            id={`${formId}-port`}
            inputMode="numeric"
            value={port}
            onChange={(event) => setPort(event.target.value)}
            aria-describedby={`${formId}-port-hint`}
          />
          <span className="field-hint" id={`${formId}-port-hint`}>
            0 picks a free port, which is then kept. Let it through your firewall.
          </span>
        </div>
        <div className="field">
          <label className="field-label" htmlFor={`${formId}-advertise`}>
            Advertised address
          </label>
          <input
            id={`${formId}-advertise`}
            value={advertise}
            onChange={(event) => setAdvertise(event.target.value)}
            placeholder="parley.example.org or 192.0.2.7:4180"
            spellCheck={false}
            aria-describedby={`${formId}-advertise-hint`}
          />
          <span className="field-hint" id={`${formId}-advertise-hint`}>
            What invitations tell peers to dial: HOST or HOST:PORT. Empty: the listen address and port. Needed when you
            listen on every network, or when peers reach you through a router that forwards the port.
          </span>
        </div>
        {error && (
          <p className="field-error" role="alert">
            {error}
          </p>
        )}
      </form>
    </Dialog>
  );
}
