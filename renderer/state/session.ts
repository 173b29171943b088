// Who is signed in, to which installation. Everything else waits for `ready`.
import { create } from 'zustand';
import type { Person } from '../../shared/domain';
import { toApiError } from '../api/errors';
import { apiClient, call, sentence } from './client';

export type SessionStatus = 'loading' | 'signed-out' | 'failed' | 'ready';

interface SessionState {
  status: SessionStatus;
  person: Person | null;
  installation: { id: string; name: string } | null;
  /** Why sign-in failed or the installation does not answer. */
  error: string | null;
  /** A sign-in with a typed token is in flight. */
  signingIn: boolean;
  /** Reads who is signed in; moves to `signed-out` when there are no (valid) credentials. */
  load: () => Promise<void>;
  signIn: (token: string) => Promise<void>;
  /** The server ended this session (removed, or a new token issued): back to signing in, saying why. */
  ended: (reason: string) => void;
}

export const useSession = create<SessionState>()((set, get) => ({
  status: 'loading',
  person: null,
  installation: null,
  error: null,
  signingIn: false,

  async load() {
    if (!apiClient().hasCredentials()) {
      if (get().status !== 'signed-out') set({ status: 'signed-out', person: null, installation: null, error: null });
      return;
    }
    const first = get().status === 'loading';
    try {
      const whoami = await call('session.whoami', {});
      set({ status: 'ready', person: whoami.person, installation: whoami.installation, error: null });
    } catch (caught) {
      const error = toApiError(caught);
      if (error.code === 'unauthenticated' || !apiClient().hasCredentials()) {
        const wasReady = get().status === 'ready';
        set({
          status: 'signed-out',
          person: null,
          installation: null,
          error: wasReady
            ? `You were signed out: ${error.message}.`
            : first
              ? apiClient().tokenFromLink
                ? `This sign-in link did not work: ${sentence(error.message)} Ask an owner for a new link, or paste a token below.`
                : `The sign-in this tab kept is no longer valid: ${sentence(error.message)} Paste a token, or open a new sign-in link.`
              : sentence(error.message),
        });
      } else if (get().status !== 'ready') {
        set({ status: 'failed', error: sentence(error.message) });
      }
    }
  },

  async signIn(token: string) {
    set({ signingIn: true, error: null });
    try {
      await call('session.signIn', { token });
    } catch (caught) {
      set({ status: 'signed-out', signingIn: false, error: sentence(toApiError(caught).message) });
      return;
    }
    await get().load();
    set({ signingIn: false });
  },

  ended(reason: string) {
    set({ status: 'signed-out', person: null, installation: null, error: sentence(`You were signed out: ${reason}`) });
  },
}));

export const selectPerson = (s: SessionState) => s.person;
export const selectIsOwner = (s: SessionState) => s.person?.kind === 'owner';
export const selectInstallation = (s: SessionState) => s.installation;
export const selectStatus = (s: SessionState) => s.status;
export const selectSessionError = (s: SessionState) => s.error;
