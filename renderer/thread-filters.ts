// What the Agent conversations panel narrows its list to (state, peer, waiting on you),
// and the one status a card shows. Pure functions over the summaries the store holds.
import type { ThreadSummary } from '../shared/domain';
import type { ConnectionState } from './connection-facts';

export type StateFilter = 'all' | 'working' | 'open' | 'closed';

export interface ThreadFilter {
  state: StateFilter;
  /** A connection's name (PEER), or null for every peer. */
  peer: string | null;
  /** Only those with something that waits on the person: a decision, a text not delivered. */
  waiting: boolean;
}

export const noFilter: ThreadFilter = { state: 'all', peer: null, waiting: false };

export const isFiltered = (filter: ThreadFilter): boolean =>
  filter.state !== 'all' || filter.peer !== null || filter.waiting;

export const stateFilterLabel: Record<StateFilter, string> = {
  all: 'Any state',
  working: 'Working',
  open: 'Open',
  closed: 'Closed',
};

const working = (thread: ThreadSummary) => thread.run.state !== 'idle';

export function matchesFilter(thread: ThreadSummary, filter: ThreadFilter, waitingOnYou: ReadonlySet<number>): boolean {
  if (filter.peer !== null && thread.connection.name !== filter.peer) return false;
  if (filter.waiting && !waitingOnYou.has(thread.id)) return false;
  switch (filter.state) {
    case 'all':
      return true;
    case 'working':
      return working(thread);
    case 'open':
      return thread.status === 'open';
    case 'closed':
      return thread.status === 'closed';
  }
}

/** The peers of a list, by name, for the peer filter. */
export function peersOf(threads: Iterable<ThreadSummary>): string[] {
  const names = new Set<string>();
  for (const thread of threads) names.add(thread.connection.name);
  return [...names].sort((a, b) => a.localeCompare(b));
}

export type CardStatus =
  /** The agent's run says it (Working, Queued, Stopping), with Stop beside it. */
  { kind: 'run' } | { kind: 'connection'; state: ConnectionState } | { kind: 'closed' } | { kind: 'open' };

/**
 * The one status a card shows. A revoked connection ends everything; a working agent is
 * what matters next (it can be stopped); then a paused or offline connection of an open
 * conversation; else open or closed.
 */
export function cardStatus(thread: ThreadSummary, linkState: ConnectionState | null): CardStatus {
  if (linkState === 'revoked') return { kind: 'connection', state: 'revoked' };
  if (working(thread)) return { kind: 'run' };
  if (thread.status === 'closed') return { kind: 'closed' };
  if (linkState) return { kind: 'connection', state: linkState };
  return { kind: 'open' };
}
