// The app API's methods for the relays people here chose (relays.*). Everyone reads the
// list, as they read where peers reach this installation; only owners change it.
import { ApiError } from '../../shared/api-contract';
import type { RelaySummary } from '../../shared/domain';
import { eventAudience } from '../access/rules';
import { transaction } from '../store/database';
import { deleteRelay, insertRelay, listRelays, MAX_RELAYS, relayByKey, type RelayRow } from '../store/queries/relays';
import { requireOwner, requireReader } from './authorize';
import type { HandlerTable, ApiServices } from './handlers';

async function summaryOf(services: ApiServices, row: RelayRow): Promise<RelaySummary> {
  return {
    id: row.id,
    key: row.key,
    address: row.address,
    addedAt: row.added_at,
    answers: await services.engine.probeRelay(row.key),
  };
}

function changed(services: ApiServices, id: number): void {
  services.engine.relaysChanged();
  services.events.emit({ type: 'changed', kind: 'relays', id }, eventAudience.installation());
}

export const relayHandlers: Pick<HandlerTable, 'relays.list' | 'relays.add' | 'relays.remove'> = {
  'relays.list': ({ services, person }) => {
    requireReader(person);
    // Asked all at once: a list of relays that do not answer costs one probe's wait, not one each.
    return Promise.all(listRelays(services.db).map((row) => summaryOf(services, row)));
  },
  'relays.add': ({ services, person }, { key, address }) => {
    requireOwner(person, 'choose the relays this installation uses');
    if (relayByKey(services.db, key)) throw new ApiError('conflict', 'this relay is in the list already');
    if (key === services.engine.dhtKey)
      throw new ApiError('invalid', 'this is this installation’s own DHT key, not a relay’s');
    if (listRelays(services.db).length >= MAX_RELAYS)
      throw new ApiError('invalid', `at most ${MAX_RELAYS} relays: remove one first`);
    const row = transaction(services.db, () => insertRelay(services.db, key, address ?? null, person.id));
    changed(services, row.id);
    return summaryOf(services, row);
  },
  'relays.remove': ({ services, person }, { id }) => {
    requireOwner(person, 'choose the relays this installation uses');
    if (!transaction(services.db, () => deleteRelay(services.db, id)))
      throw new ApiError('not_found', `no relay ${id}`);
    changed(services, id);
    return { removed: true as const };
  },
};
