// Placeholder UI: who is signed in and which roles the installation has. The real
// person's view (conversations, tasks, agent conversations, settings) replaces it.
import { useCallback, useEffect, useState, type FormEvent } from 'react';
import type { ResultOf } from '../shared/api-contract';
import type { Role } from '../shared/domain';
import type { ApiClient } from './api/client';
import { toApiError } from './api/errors';

type Whoami = ResultOf<'session.whoami'>;

type State =
  | { status: 'loading' }
  | { status: 'signed-out'; error: string | null }
  | { status: 'failed'; error: string }
  | { status: 'ready'; whoami: Whoami; roles: Role[] };

export function App({ client }: { client: ApiClient }) {
  const [state, setState] = useState<State>(() =>
    client.hasCredentials() ? { status: 'loading' } : { status: 'signed-out', error: null },
  );

  const load = useCallback(async () => {
    try {
      const [whoami, roles] = await Promise.all([client.invoke('session.whoami', {}), client.invoke('roles.list', {})]);
      setState({ status: 'ready', whoami, roles });
    } catch (caught) {
      const error = toApiError(caught);
      if (error.code === 'unauthenticated' || !client.hasCredentials()) {
        setState({ status: 'signed-out', error: client.hasCredentials() ? error.message : null });
      } else {
        setState({ status: 'failed', error: error.message });
      }
    }
  }, [client]);

  useEffect(() => {
    if (client.hasCredentials()) void load();
  }, [client, load]);

  const signedIn = state.status === 'ready';
  useEffect(() => {
    if (!signedIn) return;
    return client.onEvent((event) => {
      if (event.kind === 'role' || event.kind === 'person') void load();
    });
  }, [client, load, signedIn]);

  const signIn = useCallback(
    async (token: string) => {
      setState({ status: 'loading' });
      try {
        await client.invoke('session.signIn', { token });
      } catch (caught) {
        setState({ status: 'signed-out', error: toApiError(caught).message });
        return;
      }
      await load();
    },
    [client, load],
  );

  return (
    <div className="app">
      <header className="topbar">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true">
            P
          </span>
          <h1>Parley</h1>
          {state.status === 'ready' && <span className="installation">{state.whoami.installation.name}</span>}
        </div>
        {state.status === 'ready' && (
          <p className="whoami">
            Signed in as <strong>{state.whoami.person.name}</strong>
            <span className="badge">{state.whoami.person.kind}</span>
          </p>
        )}
      </header>
      <main className="content">
        {state.status === 'loading' && (
          <p className="muted" role="status">
            Connecting…
          </p>
        )}
        {state.status === 'failed' && (
          <section className="card" role="alert">
            <h2>Parley is not answering</h2>
            <p className="muted">{state.error}</p>
            <button type="button" onClick={() => void load()}>
              Try again
            </button>
          </section>
        )}
        {state.status === 'signed-out' && <SignIn error={state.error} onSignIn={signIn} />}
        {state.status === 'ready' && <Roles roles={state.roles} />}
      </main>
    </div>
  );
}

function SignIn({ error, onSignIn }: { error: string | null; onSignIn: (token: string) => Promise<void> }) {
  const [token, setToken] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const trimmed = token.trim();
    if (trimmed) void onSignIn(trimmed);
  };
  return (
    <section className="card narrow" aria-labelledby="sign-in-title">
      <h2 id="sign-in-title">Sign in</h2>
      <p className="muted">
        Open the address that <code>parley serve</code> printed, or paste the sign-in token you were given.
      </p>
      <form onSubmit={submit} className="sign-in">
        <label htmlFor="token">Sign-in token</label>
        <input
          id="token"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={token}
          onChange={(event) => setToken(event.target.value)}
        />
        <button type="submit" disabled={token.trim() === ''}>
          Sign in
        </button>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

function Roles({ roles }: { roles: Role[] }) {
  return (
    <section className="card" aria-labelledby="roles-title">
      <div className="card-title">
        <h2 id="roles-title">Roles</h2>
        <span className="count">{roles.length}</span>
      </div>
      {roles.length === 0 ? (
        <p className="muted">No roles yet.</p>
      ) : (
        <ul className="roles" aria-labelledby="roles-title">
          {roles.map((role) => (
            <li key={role.id}>
              <div className="role-name">{role.name}</div>
              {role.description && <div className="muted">{role.description}</div>}
              <span className="badge">{role.agent.adapter}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
