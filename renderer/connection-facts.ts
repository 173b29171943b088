// What the window says of the connection agent conversations travel on: paused, offline or
// revoked, in a word, a tone and a sentence. Pure functions, tested by tables.
import type { ConnectionSummary, ThreadSummary } from '../shared/domain';
import type { FactTone } from './thread-facts';

export type ConnectionState = 'paused' | 'offline' | 'revoked';

/** The connection's state where it matters to the agent conversations on it; null when all is well. */
export function connectionState(connection: ConnectionSummary | undefined): ConnectionState | null {
  if (!connection) return null;
  if (connection.status === 'revoked') return 'revoked';
  if (connection.status === 'paused') return 'paused';
  return connection.online ? null : 'offline';
}

export const connectionStateLabel: Record<ConnectionState, string> = {
  paused: 'Paused',
  offline: 'Offline',
  revoked: 'Revoked',
};

export const connectionStateTone: Record<ConnectionState, FactTone> = {
  paused: 'warn',
  offline: 'neutral',
  revoked: 'bad',
};

/** One sentence on what the connection's state means for an agent conversation on it. */
export function connectionStateNote(state: ConnectionState, peer: string): string {
  switch (state) {
    case 'paused':
      return `The connection to ${peer} is paused here: nothing goes to ${peer} or comes from it until an owner unpauses it.`;
    case 'offline':
      return `${peer} is offline: texts wait here and go out when it is back.`;
    case 'revoked':
      return `The connection to ${peer} was revoked: nothing more goes either way.`;
  }
}

/**
 * What a list of agent conversations shows on its tab: the states of the connections
 * its open ones travel on (paused before offline), and revoked ones.
 */
export function listConnectionStates(
  threads: Iterable<ThreadSummary>,
  connections: ReadonlyMap<number, ConnectionSummary>,
): Array<{ state: ConnectionState; peers: string[] }> {
  const found: Record<ConnectionState, Set<string>> = { paused: new Set(), offline: new Set(), revoked: new Set() };
  for (const thread of threads) {
    const state = connectionState(connections.get(thread.connection.id));
    if (!state) continue;
    if (state !== 'revoked' && thread.status !== 'open') continue;
    found[state].add(thread.connection.name);
  }
  return (['paused', 'offline', 'revoked'] as const)
    .filter((state) => found[state].size > 0)
    .map((state) => ({ state, peers: [...found[state]].sort() }));
}
