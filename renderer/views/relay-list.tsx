// Settings → Connections: the blind relays this installation trusts. A relay joins two
// peers whose routers both change ports on every connection; it is used only when
// holepunching fails, and sees which keys talk and how much, never what they say.
import { useEffect, useId, useState, type FormEvent } from 'react';
import type { RelaySummary } from '../../shared/domain';
import { Badge, ConfirmDialog, ErrorNote, useAction } from '../components/ui';
import { messageOf } from '../state/client';
import { selectRelays, selectRelaysError, useRelays } from '../state/relays';
import './relay-list.css';

const answerWords = (relay: RelaySummary) =>
  relay.answers === null
    ? { tone: 'neutral' as const, label: 'Not asked (off the DHT)' }
    : relay.answers
      ? { tone: 'good' as const, label: 'Answers' }
      : { tone: 'bad' as const, label: 'Does not answer' };

export function RelayList({ isOwner }: { isOwner: boolean }) {
  const list = useRelays(selectRelays);
  const error = useRelays(selectRelaysError);
  const [removing, setRemoving] = useState<RelaySummary | null>(null);
  useEffect(() => {
    void useRelays.getState().load();
  }, []);
  return (
    <section className="relay-list card" aria-labelledby="relay-list-title">
      <h3 id="relay-list-title">Relays</h3>
      <p className="muted small">
        When both routers change ports on every connection, holepunching fails and only a relay can join you and a peer.
        Parley uses only the relays listed here and the ones your peers list, and only then. A relay passes on encrypted
        bytes: it learns which installations talk and how much, never what they say. Anyone with a public address can
        run one with <code>parley serve --relay</code>; its key is in its <code>serve.json</code>.
      </p>
      {error && !list && <ErrorNote onRetry={() => void useRelays.getState().load()}>{error}</ErrorNote>}
      {list && list.length === 0 && <p className="muted small">No relays: peers behind strict routers cannot meet.</p>}
      {list && list.length > 0 && (
        <ul className="relay-items">
          {list.map((relay) => {
            const answer = answerWords(relay);
            return (
              <li key={relay.id} className="relay-item" aria-label={`Relay ${relay.address ?? relay.key.slice(0, 12)}`}>
                <span className="relay-text">
                  <span>{relay.address ?? 'Relay'}</span>
                  <code className="muted small" title={relay.key}>
                    {relay.key.slice(0, 16)}…
                  </code>
                </span>
                <Badge tone={answer.tone}>{answer.label}</Badge>
                {isOwner && (
                  <button
                    type="button"
                    className="btn btn-ghost btn-sm btn-danger-text"
                    onClick={() => setRemoving(relay)}
                  >
                    Remove
                  </button>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {isOwner && <AddRelay />}
      {removing && (
        <ConfirmDialog
          title="Remove this relay?"
          body={<p>Parley stops using it, and your peers are told. Links through it now are kept until they close.</p>}
          confirm="Remove relay"
          onConfirm={() => useRelays.getState().remove(removing.id)}
          onClose={() => setRemoving(null)}
        />
      )}
    </section>
  );
}

function AddRelay() {
  const id = useId();
  const [key, setKey] = useState('');
  const [address, setAddress] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, run] = useAction();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setProblem(null);
    await run(async () => {
      try {
        await useRelays.getState().add(key.trim(), address.trim() || null);
        setKey('');
        setAddress('');
      } catch (error) {
        setProblem(messageOf(error));
      }
    });
  };
  return (
    <form className="form relay-add" onSubmit={(event) => void submit(event)} aria-label="Add a relay">
      <div className="form-row">
        <div className="field">
          <label className="field-label" htmlFor={`${id}-key`}>
            Relay key
          </label>
          <input
            id={`${id}-key`}
            value={key}
            onChange={(event) => setKey(event.target.value)}
            placeholder="64 hexadecimal characters"
            spellCheck={false}
            autoComplete="off"
          />
        </div>
        <div className="field">
          <label className="field-label" htmlFor={`${id}-address`}>
            Where it runs (optional)
          </label>
          <input
            id={`${id}-address`}
            value={address}
            onChange={(event) => setAddress(event.target.value)}
            placeholder="relay.example.org"
            autoComplete="off"
          />
        </div>
      </div>
      {problem && (
        <p className="field-error" role="alert">
          {problem}
        </p>
      )}
      <button type="submit" className="btn btn-secondary btn-sm" disabled={busy || key.trim() === ''}>
        Add relay
      </button>
    </form>
  );
}
