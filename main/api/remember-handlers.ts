// The app API's methods for what people chose to remember: "always allow" rules (made by
// approvals.decide with `remember`, listed and removed here) and each person's own
// notification preferences. Who may see and remove a rule is the access rules'
// (../access/allow-rules.ts).
import { ApiError } from '../../shared/api-contract';
import type { NotificationPrefs } from '../../shared/attention';
import { attentionKinds } from '../../shared/attention';
import type { AllowRuleView, Person } from '../../shared/domain';
import { decideRemoveRule, mayReadRule } from '../access/allow-rules';
import { contextAudience } from '../access/lookup';
import { eventAudience } from '../access/rules';
import { transaction, type Db } from '../store/database';
import { deleteAllowRule, getAllowRule, listAllowRules, type AllowRuleRow } from '../store/queries/allow-rules';
import { getConnectionRow } from '../store/queries/connections';
import { notificationPrefRows, setConnectionPref, setKindPref } from '../store/queries/notification-prefs';
import { hitTitle } from '../store/queries/search';
import type { HandlerTable } from './handlers';

const rootReaders = (db: Db, rule: AllowRuleRow) =>
  rule.root_kind === null || rule.root_id === null
    ? undefined
    : contextAudience(db, { kind: rule.root_kind, id: rule.root_id });

export function allowRuleView(db: Db, rule: AllowRuleRow, person: Person): AllowRuleView {
  const connection = getConnectionRow(db, rule.connection_id);
  return {
    id: rule.id,
    connectionId: rule.connection_id,
    peer: `${connection?.name ?? 'peer'}/${rule.peer_role}`,
    kind: rule.kind,
    tool: rule.tool,
    root:
      rule.root_kind === null || rule.root_id === null
        ? null
        : { kind: rule.root_kind, id: rule.root_id, title: hitTitle(db, rule.root_kind, rule.root_id) },
    createdBy: rule.created_by_name,
    createdAt: rule.created_at,
    canRemove: decideRemoveRule(person, rule, rootReaders(db, rule)).allowed,
  };
}

function notificationPrefs(db: Db, personId: number): NotificationPrefs {
  const rows = notificationPrefRows(db, personId);
  const off = new Set(rows.kinds.filter((row) => row.notify === 0).map((row) => row.kind));
  return {
    kinds: attentionKinds.map((kind) => ({ kind, notify: !off.has(kind) })),
    connections: rows.connections.map((row) => ({ id: row.id, name: row.name, notify: row.notify === 1 })),
  };
}

/** One person's preferences, for the desktop app's notifier. */
export const notificationPrefsOf = notificationPrefs;

export const rememberHandlers: Pick<
  HandlerTable,
  'allowRules.list' | 'allowRules.remove' | 'notifications.get' | 'notifications.set'
> = {
  'allowRules.list': ({ services, person }, { connectionId }) => {
    const { db } = services;
    return listAllowRules(db, connectionId)
      .filter((rule) => mayReadRule(person, rule, rootReaders(db, rule)))
      .map((rule) => allowRuleView(db, rule, person));
  },

  'allowRules.remove': ({ services, person }, { id }) => {
    const { db } = services;
    const rule = getAllowRule(db, id);
    const decision = rule ? decideRemoveRule(person, rule, rootReaders(db, rule)) : undefined;
    if (!rule || !decision || (!decision.allowed && decision.code === 'not_found'))
      throw new ApiError('not_found', `no rule ${id}`);
    if (!decision.allowed)
      throw new ApiError('forbidden', `only ${decision.needs} or the person who made it can stop always allowing`);
    transaction(db, () => deleteAllowRule(db, id));
    services.events.emit({ type: 'changed', kind: 'connection', id: rule.connection_id }, eventAudience.installation());
    return { removed: true };
  },

  'notifications.get': ({ services, person }) => notificationPrefs(services.db, person.id),

  'notifications.set': ({ services, person }, { kinds, connections }) => {
    const { db } = services;
    transaction(db, () => {
      for (const entry of kinds ?? []) setKindPref(db, person.id, entry.kind, entry.notify);
      for (const entry of connections ?? []) {
        const connection = getConnectionRow(db, entry.id);
        if (!connection || connection.removed_at !== null) throw new ApiError('not_found', `no connection ${entry.id}`);
        setConnectionPref(db, person.id, entry.id, entry.notify);
      }
    });
    // Only the person's own clients, and their notifier, hear of it.
    services.events.emit({ type: 'changed', kind: 'attention', id: 0 }, { personId: person.id });
    return notificationPrefs(db, person.id);
  },
};
