// The relays people here chose (relays.*): shown in Settings → Connections, each with
// whether it answered when the list was read.
import { create } from 'zustand';
import type { RelaySummary } from '../../shared/domain';
import { call, messageOf } from './client';

interface RelaysState {
  list: RelaySummary[] | null;
  error: string | null;
  load: () => Promise<void>;
  add: (key: string, address: string | null) => Promise<RelaySummary>;
  remove: (id: number) => Promise<void>;
}

export const useRelays = create<RelaysState>()((set, get) => ({
  list: null,
  error: null,
  async load() {
    try {
      set({ list: await call('relays.list', {}), error: null });
    } catch (error) {
      set({ error: messageOf(error) });
    }
  },
  async add(key, address) {
    const added = await call('relays.add', { key, address });
    set({ list: [...(get().list ?? []).filter((r) => r.id !== added.id), added] });
    return added;
  },
  async remove(id) {
    await call('relays.remove', { id });
    set({ list: (get().list ?? []).filter((r) => r.id !== id) });
  },
}));

export const selectRelays = (s: RelaysState) => s.list;
export const selectRelaysError = (s: RelaysState) => s.error;
