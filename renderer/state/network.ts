// Where peers reach this installation (network.*): shown in Settings → Connections and
// in the invite dialog; owners of the desktop app change it there.
import { create } from 'zustand';
import type { ParamsOf, PeerNetworkStatus } from '../../shared/api-contract';
import { call, messageOf } from './client';

interface NetworkState {
  status: PeerNetworkStatus | null;
  error: string | null;
  checking: boolean;
  load: () => Promise<void>;
  update: (changes: ParamsOf<'network.update'>) => Promise<PeerNetworkStatus>;
  check: () => Promise<void>;
}

export const useNetwork = create<NetworkState>()((set) => ({
  status: null,
  error: null,
  checking: false,
  async load() {
    try {
      set({ status: await call('network.get', {}), error: null });
    } catch (error) {
      set({ error: messageOf(error) });
    }
  },
  async update(changes) {
    const status = await call('network.update', changes);
    set({ status, error: null });
    return status;
  },
  async check() {
    set({ checking: true });
    try {
      set({ status: await call('network.check', {}), error: null });
    } finally {
      set({ checking: false });
    }
  },
}));

export const selectNetwork = (s: NetworkState) => s.status;
export const selectNetworkError = (s: NetworkState) => s.error;
export const selectChecking = (s: NetworkState) => s.checking;
