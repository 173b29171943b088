// Live updates: the API pushes `changed {kind, id}`; the stores refetch what they show.
// Events are debounced per kind and id, so a burst (a busy agent conversation) costs one
// refetch per object, not one per event.
import type { AppEvent, ChangedKind } from '../../shared/api-contract';
import { useApprovals } from './approvals';
import { openObject, useAttention } from './attention';
import { apiClient } from './client';
import { useConnections } from './connections';
import { useConversations } from './conversations';
import { useInvitations } from './invitations';
import { watchLink } from './link';
import { useNetwork } from './network';
import { useRelays } from './relays';
import { usePeople } from './people';
import { useRoles } from './roles';
import { useSession } from './session';
import { useTasks } from './tasks';
import { useThreads, type ThreadListKey } from './threads';
import { useUi } from './ui';

const DEBOUNCE_MS = 60;

function refresh(kind: ChangedKind, id: number): Promise<unknown> | void {
  switch (kind) {
    case 'conversation':
      return useConversations.getState().changed(id);
    case 'thread':
      return useThreads.getState().changed(id);
    case 'task':
      return useTasks.getState().changed(id);
    case 'connection':
      // A used invitation leaves the pending list as its connection appears.
      return Promise.all([useConnections.getState().load(), reloadInvitations()]);
    case 'invitation':
      return reloadInvitations();
    case 'network':
      return useNetwork.getState().load();
    case 'relays':
      // Only once Settings has shown them: listing asks each relay whether it answers.
      if (useRelays.getState().list) return useRelays.getState().load();
      return;
    case 'attention':
      return useAttention.getState().load();
    case 'role':
      return Promise.all([useRoles.getState().load(), useConversations.getState().load()]);
    case 'person':
      return Promise.all([usePeople.getState().load(), useSession.getState().load()]);
    case 'approval':
      return useApprovals.getState().load();
    case 'run':
      return;
  }
}

/** The pending invitations, when Settings has shown them. */
function reloadInvitations(): Promise<void> | void {
  if (useInvitations.getState().list) return useInvitations.getState().load();
}

/** Lists that hold one entry per kind: one refetch covers every id. */
const wholeKinds = new Set<ChangedKind>([
  'connection',
  'invitation',
  'network',
  'relays',
  'role',
  'person',
  'approval',
  'attention',
]);

/** Subscribes to the API's events; returns the unsubscribe function. */
export function startLiveUpdates(): () => void {
  const timers = new Map<string, ReturnType<typeof setTimeout>>();
  const schedule = (kind: ChangedKind, id: number) => {
    const key = wholeKinds.has(kind) ? kind : `${kind}:${id}`;
    if (timers.has(key)) return;
    timers.set(
      key,
      setTimeout(() => {
        timers.delete(key);
        void Promise.resolve(refresh(kind, id)).catch((error: unknown) => console.warn('refresh failed', error));
      }, DEBOUNCE_MS),
    );
  };
  const off = apiClient().onEvent((event: AppEvent) => {
    if (event.type === 'invitation') {
      if (typeof event.link === 'string') useUi.getState().offerInvitation(event.link);
      return;
    }
    if (event.type === 'show') {
      useUi.getState().navigate({ kind: 'settings', tab: 'connections' });
      return;
    }
    if (event.type === 'open') {
      // A desktop notification was clicked.
      void openObject(event.object);
      return;
    }
    if (event.type === 'sessionEnded') {
      useSession.getState().ended(event.reason);
      return;
    }
    if (event.type === 'changed') schedule(event.kind, event.id);
  });
  // Back from the background (or a dropped socket that reconnected meanwhile): read again.
  const onVisible = () => {
    if (document.visibilityState === 'visible') refreshAll();
  };
  document.addEventListener('visibilitychange', onVisible);
  // A lost link that is back missed the events sent meanwhile: read everything shown again.
  const offLink = watchLink({
    onResumed: refreshAll,
    // A session the server ended has said why already (a `sessionEnded` event).
    onSignedOut: () => {
      if (useSession.getState().status === 'ready')
        useSession.getState().ended('this sign-in token is no longer accepted (replaced, or its person removed)');
    },
  });
  return () => {
    off();
    offLink();
    document.removeEventListener('visibilitychange', onVisible);
    for (const timer of timers.values()) clearTimeout(timer);
  };
}

/** The ids a store holds a detail for, or tried to (a load that failed is read again too). */
function shownIds(details: Record<number, unknown>, errors: Record<number, string | undefined>): number[] {
  const ids = new Set<number>();
  for (const [id, detail] of Object.entries(details)) if (detail) ids.add(Number(id));
  for (const [id, error] of Object.entries(errors)) if (error) ids.add(Number(id));
  return [...ids];
}

/** Refetches everything loaded, and what failed to load. */
export function refreshAll(): void {
  void useSession.getState().load();
  void useConversations.getState().load();
  void useTasks.getState().load();
  void useConnections.getState().load();
  if (useNetwork.getState().status) void useNetwork.getState().load();
  void useRoles.getState().load();
  void usePeople.getState().load();
  void useApprovals.getState().load();
  void useAttention.getState().load();
  const conversations = useConversations.getState();
  for (const id of shownIds(conversations.details, conversations.detailErrors)) void conversations.loadDetail(id);
  const tasks = useTasks.getState();
  for (const id of shownIds(tasks.details, tasks.detailErrors)) void tasks.loadDetail(id);
  const threads = useThreads.getState();
  for (const [key, list] of Object.entries(threads.lists)) if (list) void threads.loadList(key as ThreadListKey);
  // Details are kept only for the agent conversations on screen.
  for (const id of shownIds(threads.details, threads.detailErrors)) void threads.loadDetail(id);
}
