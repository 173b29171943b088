// The people of the installation (everyone reads them; owners add and remove).
import { create } from 'zustand';
import type { Person, PersonKind } from '../../shared/domain';
import { apiClient, call, messageOf } from './client';
import { useSession } from './session';

interface PeopleState {
  list: Person[] | null;
  error: string | null;
  load: () => Promise<void>;
  /** Owner: adds a person; their sign-in token is returned once and never again. */
  add(name: string, kind: PersonKind): Promise<{ person: Person; token: string }>;
  remove: (id: number) => Promise<void>;
  /**
   * Owner: a new sign-in token for a person, shown once; their old one stops working and
   * their sessions end. Reissuing one's own keeps this tab signed in with the new one.
   */
  reissue(id: number): Promise<string>;
}

export const usePeople = create<PeopleState>()((set, get) => ({
  list: null,
  error: null,
  async load() {
    try {
      set({ list: await call('people.list', {}), error: null });
    } catch (error) {
      set({ error: messageOf(error) });
    }
  },
  async add(name, kind) {
    const added = await call('people.add', { name, kind });
    await get().load();
    return added;
  },
  async reissue(id) {
    const { token } = await call('people.reissueToken', { id });
    if (id === useSession.getState().person?.id && apiClient().transport === 'browser')
      await useSession.getState().signIn(token);
    return token;
  },
  async remove(id) {
    await call('people.remove', { id });
    set({ list: get().list?.filter((p) => p.id !== id) ?? null });
    await get().load();
  },
}));

export const selectPeople = (s: PeopleState) => s.list;
export const selectPeopleError = (s: PeopleState) => s.error;
export const selectPersonName = (id: number | null | undefined) => (s: PeopleState) =>
  id == null ? undefined : s.list?.find((p) => p.id === id)?.name;
