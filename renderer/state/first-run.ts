// The home page's first-run checklist: what main worked out (firstRun.get), read again
// whenever what it is made of may have changed (the checklist asks), and hiding it.
import { create } from 'zustand';
import type { FirstRunState } from '../../shared/api-contract';
import { call, messageOf } from './client';

interface FirstRunStore {
  state: FirstRunState | null;
  error: string | null;
  load: () => Promise<void>;
  dismiss: () => Promise<void>;
}

export const useFirstRun = create<FirstRunStore>()((set) => ({
  state: null,
  error: null,
  async load() {
    try {
      set({ state: await call('firstRun.get', {}), error: null });
    } catch (error) {
      set({ error: messageOf(error) });
    }
  },
  async dismiss() {
    set({ state: await call('firstRun.dismiss', {}) });
  },
}));

export const selectFirstRun = (s: FirstRunStore) => s.state;
export const selectFirstRunError = (s: FirstRunStore) => s.error;

/** Whether the home page shows the checklist: offered, not hidden, and something left to do. */
export function checklistWanted(state: FirstRunState | null): boolean {
  if (!state || !state.offered || state.dismissed) return false;
  return !(state.steps.agent && state.steps.connect && state.steps.ask);
}
