// What a connection's card says of choices people made about it: who paused or revoked it
// and when, the "always allow" rules made for its peer's roles (each removable by an
// owner or whoever made it), and each person's own notification preferences.
import { useCallback, useEffect, useId, useState, type FormEvent } from 'react';
import { attentionKinds, type AttentionKind, type NotificationPrefs } from '../../../shared/attention';
import type { AllowRuleView, ConnectionSummary } from '../../../shared/domain';
import { Dialog, DialogButtons, ErrorNote, Loading, useAction } from '../../components/ui';
import { dayDate, fullTime } from '../../format';
import { useAttention } from '../../state/attention';
import { call, messageOf } from '../../state/client';
import './connection-remembered.css';

/** "Paused by alice on 3 Dec 2026", "Revoked by bob on …": null when nobody did. */
export function ActedBy({ connection: c }: { connection: ConnectionSummary }) {
  const acted =
    c.status === 'revoked' && c.revokedBy
      ? { verb: 'Revoked', name: c.revokedBy.name, at: c.revokedBy.at, here: c.revokedBy.side === 'us' }
      : c.status === 'paused' && c.pausedBy
        ? { verb: 'Paused', name: c.pausedBy.name, at: c.pausedBy.at, here: true }
        : null;
  if (!acted) return null;
  return (
    <p className="acted-by small">
      {acted.verb}
      {acted.name ? ` by ${acted.name}` : acted.here ? ' here' : ` by ${c.name}`}
      {acted.at && (
        <>
          {' on '}
          <time dateTime={acted.at} title={fullTime(acted.at)}>
            {dayDate(acted.at)}
          </time>
        </>
      )}
    </p>
  );
}

const kindWords: Record<AllowRuleView['kind'], string> = {
  outgoing: 'Texts your agents send to',
  incoming: 'Texts from',
  permission: 'Tool requests of runs working for',
};

function ruleWords(rule: AllowRuleView): string {
  const what =
    rule.kind === 'permission' ? `${rule.tool ?? 'a tool'} for ${rule.peer}` : `${kindWords[rule.kind]} ${rule.peer}`;
  const where = rule.root
    ? rule.root.kind === 'task'
      ? ` on the task “${rule.root.title}”`
      : rule.root.kind === 'conversation'
        ? ` in the conversation with ${rule.root.title}`
        : ` in the agent conversation with ${rule.root.title}`
    : ', everywhere';
  return `${rule.kind === 'permission' ? 'Use of ' : ''}${what}${where}`;
}

/** The rules made for this connection's peer roles: what goes through without asking. */
export function AlwaysAllowed({ connection }: { connection: ConnectionSummary }) {
  const [rules, setRules] = useState<AllowRuleView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, run] = useAction();
  const load = useCallback(async () => {
    try {
      setRules(await call('allowRules.list', { connectionId: connection.id }));
      setError(null);
    } catch (failure) {
      setError(messageOf(failure));
    }
  }, [connection.id]);
  // The connection's summary is read again when a rule is made or removed: read the rules with it.
  useEffect(() => {
    void load();
  }, [load, connection]);
  if (error) return <p className="warning small">{error}</p>;
  if (!rules || rules.length === 0) return null;
  return (
    <section className="always-allowed" aria-label={`Always allowed for ${connection.name}`}>
      <h4 className="stat-label">Always allowed</h4>
      <ul>
        {rules.map((rule) => (
          <li key={rule.id}>
            <span className="always-allowed-words">
              {ruleWords(rule)}
              <span className="muted">
                {' '}
                · by {rule.createdBy}{' '}
                <time dateTime={rule.createdAt} title={fullTime(rule.createdAt)}>
                  {dayDate(rule.createdAt)}
                </time>
              </span>
            </span>
            {rule.canRemove && (
              <button
                type="button"
                className="btn btn-ghost btn-sm btn-danger-text"
                disabled={busy}
                aria-label={`Stop allowing ${ruleWords(rule)}`}
                onClick={() => void run(() => call('allowRules.remove', { id: rule.id }).then(load))}
              >
                Stop allowing
              </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

const notificationKindWords: Record<AttentionKind, string> = {
  held: 'A text your agent wants to send waits for approval',
  held_in: 'A peer’s text waits for approval',
  permission: 'An agent asks to use a tool',
  not_delivered: 'A text was not delivered',
  agent_failed: 'An agent failed',
  peer_paused: 'A peer paused the connection',
  peer_revoked: 'A peer revoked the connection',
  answer: 'A role answered you',
  task_update: 'News on a task',
  peer_asked: 'A peer’s role asked one of yours',
};

/** Which notifications the signed-in person gets, per kind and per connection: their own choice. */
export function NotificationsDialog({ onClose }: { onClose: () => void }) {
  const [prefs, setPrefs] = useState<NotificationPrefs | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [busy, run] = useAction();
  const formId = useId();
  const load = useCallback(() => {
    setLoadError(null);
    call('notifications.get', {}).then(setPrefs, (error: unknown) => setLoadError(messageOf(error)));
  }, []);
  useEffect(load, [load]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!prefs) return;
    void run(() =>
      useAttention.getState().setPrefs({
        kinds: prefs.kinds,
        connections: prefs.connections.map(({ id, notify }) => ({ id, notify })),
      }),
    ).then((ok) => ok && onClose());
  };
  const kindOn = (kind: AttentionKind) => prefs?.kinds.find((entry) => entry.kind === kind)?.notify ?? true;
  return (
    <Dialog
      title="Notifications"
      description="What notifies you while Parley is not in front. It still waits in Waiting on you either way. Your choice only."
      onClose={onClose}
      footer={<DialogButtons formId={formId} busy={busy || !prefs} submitLabel="Save" onCancel={onClose} />}
    >
      {/* Not a checkbox until the saved choice is read: a default shown meanwhile would say the wrong thing. */}
      {!prefs && (loadError ? <ErrorNote onRetry={load}>{loadError}</ErrorNote> : <Loading />)}
      <form id={formId} className="form" onSubmit={submit} hidden={!prefs}>
        <fieldset className="field">
          <legend className="field-label">Notify me when</legend>
          {prefs &&
            attentionKinds.map((kind) => (
              <label key={kind} className="check">
                <input
                  type="checkbox"
                  checked={kindOn(kind)}
                  disabled={!prefs}
                  onChange={(event) =>
                    prefs &&
                    setPrefs({
                      ...prefs,
                      kinds: prefs.kinds.map((entry) =>
                        entry.kind === kind ? { ...entry, notify: event.target.checked } : entry,
                      ),
                    })
                  }
                />
                <span>{notificationKindWords[kind]}</span>
              </label>
            ))}
        </fieldset>
        {prefs && prefs.connections.length > 0 && (
          <fieldset className="field">
            <legend className="field-label">About these connections</legend>
            {prefs.connections.map((connection) => (
              <label key={connection.id} className="check">
                <input
                  type="checkbox"
                  checked={connection.notify}
                  onChange={(event) =>
                    setPrefs({
                      ...prefs,
                      connections: prefs.connections.map((entry) =>
                        entry.id === connection.id ? { ...entry, notify: event.target.checked } : entry,
                      ),
                    })
                  }
                />
                <span>{connection.name}</span>
              </label>
            ))}
          </fieldset>
        )}
      </form>
    </Dialog>
  );
}

/** Opens the notification preferences. */
export function NotificationsButton() {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className="btn btn-secondary" onClick={() => setOpen(true)}>
        Notifications…
      </button>
      {open && <NotificationsDialog onClose={() => setOpen(false)} />}
    </>
  );
}
