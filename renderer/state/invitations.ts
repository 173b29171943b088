// Invitations made here that are still waiting to be used (Settings → Connections).
import { create } from 'zustand';
import type { PendingInvitation } from '../../shared/api-contract';
import { call, messageOf } from './client';

interface InvitationsState {
  list: PendingInvitation[] | null;
  error: string | null;
  load: () => Promise<void>;
  cancel: (id: number) => Promise<void>;
}

export const useInvitations = create<InvitationsState>()((set, get) => ({
  list: null,
  error: null,
  async load() {
    try {
      set({ list: await call('invitations.list', {}), error: null });
    } catch (error) {
      set({ error: messageOf(error) });
    }
  },
  async cancel(id) {
    await call('invitations.cancel', { id });
    set({ list: get().list?.filter((i) => i.id !== id) ?? null });
  },
}));

export const selectInvitations = (s: InvitationsState) => s.list;
export const selectInvitationsError = (s: InvitationsState) => s.error;
