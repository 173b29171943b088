// The installation's roles (everyone reads them; owners manage them).
import { create } from 'zustand';
import type { ParamsOf } from '../../shared/api-contract';
import type { RoleView } from '../../shared/domain';
import { call, messageOf } from './client';

interface RolesState {
  list: RoleView[] | null;
  error: string | null;
  load: () => Promise<void>;
  create: (params: ParamsOf<'roles.create'>) => Promise<RoleView>;
  update: (params: ParamsOf<'roles.update'>) => Promise<RoleView>;
  remove: (id: number) => Promise<void>;
  /** Owner: a role token for scripts, shown once. */
  token: (id: number) => Promise<string>;
}

const byName = (a: RoleView, b: RoleView) => a.name.localeCompare(b.name);

export const useRoles = create<RolesState>()((set, get) => ({
  list: null,
  error: null,
  async load() {
    try {
      set({ list: (await call('roles.list', {})).sort(byName), error: null });
    } catch (error) {
      set({ error: messageOf(error) });
    }
  },
  async create(params) {
    const role = await call('roles.create', params);
    await get().load();
    return role;
  },
  async update(params) {
    const role = await call('roles.update', params);
    await get().load();
    return role;
  },
  async remove(id) {
    await call('roles.remove', { id });
    set({ list: get().list?.filter((r) => r.id !== id) ?? null });
    await get().load();
  },
  async token(id) {
    return (await call('roles.token', { id })).token;
  },
}));

export const selectRoles = (s: RolesState) => s.list;
export const selectRolesError = (s: RolesState) => s.error;
export const selectRole = (id: number | null | undefined) => (s: RolesState) =>
  id == null ? undefined : s.list?.find((r) => r.id === id);
