// Above an Agent conversations list: its filters (state, peer, waiting on you) and one
// banner per peer whose connection is offline, paused or revoked, so that the cards need
// not say it each.
import { createContext, useContext, useId, useMemo } from 'react';
import type { ConnectionSummary, ThreadSummary } from '../../shared/domain';
import { selectAttention, useAttention } from '../state/attention';
import { selectApprovals, useApprovals } from '../state/approvals';
import { selectConnections, useConnections } from '../state/connections';
import { selectFilter, useThreadFilters } from '../state/thread-filters';
import type { ThreadListKey } from '../state/threads';
import { connectionState, connectionStateNote, type ConnectionState } from '../connection-facts';
import { isFiltered, peersOf, stateFilterLabel, type StateFilter } from '../thread-filters';
import { AlertIcon } from './icons';
import './thread-panel-bar.css';

/** Connections a banner above the list speaks for: their cards leave the sentence out. */
export const BannerConnections = createContext<ReadonlySet<number>>(new Set());
export const useBannerConnections = () => useContext(BannerConnections);

/** Agent conversations with something that waits on the person: a decision, a text not delivered, a failure. */
export function useWaitingOnYou(): ReadonlySet<number> {
  const approvals = useApprovals(selectApprovals);
  const attention = useAttention(selectAttention);
  return useMemo(() => {
    const ids = new Set<number>();
    for (const approval of approvals ?? []) if (approval.thread) ids.add(approval.thread.id);
    for (const item of attention?.items ?? [])
      if (item.section === 'waiting' && item.object.kind === 'thread') ids.add(item.object.id);
    return ids;
  }, [approvals, attention]);
}

export interface PeerBanner {
  connectionId: number;
  peer: string;
  state: ConnectionState;
}

/** One banner per connection that is revoked, or paused or offline while one of its conversations is open. */
export function peerBanners(
  threads: Iterable<ThreadSummary>,
  connections: readonly ConnectionSummary[] | null,
): PeerBanner[] {
  const byId = new Map((connections ?? []).map((c) => [c.id, c]));
  const found = new Map<number, PeerBanner>();
  for (const thread of threads) {
    if (found.has(thread.connection.id)) continue;
    const state = connectionState(byId.get(thread.connection.id));
    if (!state || (state !== 'revoked' && thread.status !== 'open')) continue;
    found.set(thread.connection.id, { connectionId: thread.connection.id, peer: thread.connection.name, state });
  }
  return [...found.values()].sort((a, b) => a.peer.localeCompare(b.peer));
}

export function usePeerBanners(threads: readonly ThreadSummary[]): PeerBanner[] {
  const connections = useConnections(selectConnections);
  return useMemo(() => peerBanners(threads, connections), [threads, connections]);
}

export function PeerBanners({ banners }: { banners: readonly PeerBanner[] }) {
  if (banners.length === 0) return null;
  return (
    <ul className="peer-banners" aria-label="Connections">
      {banners.map((banner) => (
        <li key={banner.connectionId} className={`peer-banner banner-${banner.state}`}>
          <AlertIcon size={14} />
          <span>{connectionStateNote(banner.state, banner.peer)}</span>
        </li>
      ))}
    </ul>
  );
}

const states: StateFilter[] = ['all', 'working', 'open', 'closed'];

export function ThreadFilters({
  listKey,
  threads,
  shown,
}: {
  listKey: ThreadListKey;
  /** The list's conversations the page holds: their peers are the peer filter's choices. */
  threads: readonly ThreadSummary[];
  /** How many pass the filters (when any is on). */
  shown: number;
}) {
  const filter = useThreadFilters(selectFilter(listKey));
  const setFilter = useThreadFilters((s) => s.set);
  const clear = useThreadFilters((s) => s.clear);
  const peers = useMemo(() => peersOf(threads), [threads]);
  const id = useId();
  const on = isFiltered(filter);
  return (
    <div className="thread-filters" role="group" aria-label="Filter agent conversations">
      <label htmlFor={`${id}-state`} className="visually-hidden">
        State
      </label>
      <select
        id={`${id}-state`}
        value={filter.state}
        onChange={(event) => setFilter(listKey, { state: event.target.value as StateFilter })}
      >
        {states.map((state) => (
          <option key={state} value={state}>
            {stateFilterLabel[state]}
          </option>
        ))}
      </select>
      <label htmlFor={`${id}-peer`} className="visually-hidden">
        Peer
      </label>
      <select
        id={`${id}-peer`}
        value={filter.peer ?? ''}
        onChange={(event) => setFilter(listKey, { peer: event.target.value || null })}
      >
        <option value="">Every peer</option>
        {peers.map((peer) => (
          <option key={peer} value={peer}>
            {peer}
          </option>
        ))}
      </select>
      <button
        type="button"
        className={`chip${filter.waiting ? ' is-on' : ''}`}
        aria-pressed={filter.waiting}
        onClick={() => setFilter(listKey, { waiting: !filter.waiting })}
      >
        Waiting on you
      </button>
      {on && (
        <>
          <span className="thread-filters-count" role="status">
            {shown.toLocaleString()} shown
          </span>
          <button type="button" className="link-button" onClick={() => clear(listKey)}>
            Clear filters
          </button>
        </>
      )}
    </div>
  );
}
