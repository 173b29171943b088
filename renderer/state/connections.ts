// Connections to peer installations: their state, and the owner's controls.
import { create } from 'zustand';
import type { Invitation } from '../../shared/api-contract';
import type { ConnectionPolicy, ConnectionSummary, TrustLevel } from '../../shared/domain';
import { call, messageOf } from './client';

interface ConnectionsState {
  list: ConnectionSummary[] | null;
  error: string | null;
  load: () => Promise<void>;
  invite: (roles: string[], expiresInMinutes?: number) => Promise<Invitation>;
  accept: (code: string, roles: string[]) => Promise<ConnectionSummary>;
  pause: (id: number) => Promise<void>;
  unpause: (id: number) => Promise<void>;
  revoke: (id: number) => Promise<void>;
  /** Takes a revoked connection off the list. */
  remove: (id: number) => Promise<void>;
  expose: (id: number, roles: string[]) => Promise<void>;
  setQueueLimit: (id: number, limit: number) => Promise<void>;
  setPolicy: (id: number, policy: Partial<ConnectionPolicy>) => Promise<void>;
  setTrust: (id: number, level: TrustLevel) => Promise<void>;
  setSandboxRequired: (id: number, required: boolean) => Promise<void>;
}

/** Active connections first, then paused, revoked last; by name within each. */
const order = { active: 0, paused: 1, revoked: 2 } as const;
const sorted = (list: ConnectionSummary[]) =>
  [...list].sort((a, b) => order[a.status] - order[b.status] || a.name.localeCompare(b.name));

export const useConnections = create<ConnectionsState>()((set, get) => {
  /** Puts one connection as an action returned it, before the refetch the event brings. */
  const put = (connection: ConnectionSummary) =>
    set({
      list: sorted([...(get().list ?? []).filter((c) => c.id !== connection.id), connection]),
    });
  return {
    list: null,
    error: null,
    async load() {
      try {
        set({ list: sorted(await call('connections.list', {})), error: null });
      } catch (error) {
        set({ error: messageOf(error) });
      }
    },
    invite: (roles, expiresInMinutes) =>
      call('connections.invite', expiresInMinutes ? { roles, expiresInMinutes } : { roles }),
    async accept(code, roles) {
      const connection = await call('connections.accept', { code, roles });
      put(connection);
      return connection;
    },
    async pause(id) {
      put(await call('connections.pause', { id }));
    },
    async unpause(id) {
      put(await call('connections.unpause', { id }));
    },
    async revoke(id) {
      put(await call('connections.revoke', { id }));
    },
    async remove(id) {
      await call('connections.remove', { id });
      set({ list: get().list?.filter((c) => c.id !== id) ?? null });
    },
    async expose(id, roles) {
      put(await call('connections.expose', { id, roles }));
    },
    async setQueueLimit(id, limit) {
      put(await call('connections.setQueueLimit', { id, limit }));
    },
    async setPolicy(id, policy) {
      put(await call('connections.setPolicy', { id, ...policy }));
    },
    async setTrust(id, level) {
      put(await call('connections.setTrust', { id, level }));
    },
    async setSandboxRequired(id, required) {
      const done = await call('connections.setSandbox', { id, required });
      set({ list: get().list?.map((c) => (c.id === done.id ? { ...c, sandboxRequired: done.required } : c)) ?? null });
    },
  };
});

export const selectConnections = (s: ConnectionsState) => s.list;
export const selectConnectionsError = (s: ConnectionsState) => s.error;
export const selectConnection = (id: number) => (s: ConnectionsState) => s.list?.find((c) => c.id === id);
