// Whether the page can reach Parley (the browser's WebSocket to `parley serve`; the
// Electron bridge always can), for the banner that says so and offers to reconnect.
import { create } from 'zustand';
import type { LinkState } from '../api/client';
import { apiClient } from './client';

interface LinkStoreState extends LinkState {
  /** Tries again now instead of when the backoff says. */
  reconnect: () => void;
}

export const useLink = create<LinkStoreState>()(() => ({
  status: 'connected',
  retryAt: null,
  reconnect: () => apiClient().reconnect(),
}));

/**
 * Follows the client's link state. `onResumed` runs when a lost link is back (events
 * sent meanwhile were missed); `onSignedOut` when the token stopped working.
 */
export function watchLink(handlers: { onResumed: () => void; onSignedOut: () => void }): () => void {
  const client = apiClient();
  useLink.setState({ ...client.linkState() });
  return client.onLinkState((state) => {
    const before = useLink.getState().status;
    useLink.setState({ ...state });
    if (state.status === 'connected' && before === 'lost') handlers.onResumed();
    if (state.status === 'signed-out') handlers.onSignedOut();
  });
}

export const selectLink = (s: LinkStoreState) => s;
