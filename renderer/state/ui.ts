// What the window shows (kept in the address fragment, so a reload stays put) and
// short-lived notes for the person ("Copied", a failed action).
import { create } from 'zustand';

export type SettingsTab = 'connections' | 'people' | 'roles';

export type View =
  | { kind: 'home' }
  | { kind: 'conversation'; id: number }
  | { kind: 'tasks'; id: number | null }
  | { kind: 'peer' }
  | { kind: 'orphaned' }
  | { kind: 'attention' }
  | { kind: 'settings'; tab: SettingsTab };

export interface Toast {
  id: number;
  text: string;
  tone: 'info' | 'error';
}

interface UiState {
  view: View;
  toasts: Toast[];
  /** A parley:// invitation link to offer in the accept dialog (Electron opens these). */
  pendingInvitation: string | null;
  /** Agent conversations opened (expanded) by the person; they stay open across views. */
  expandedThreads: ReadonlySet<number>;
  toggleThread: (id: number) => void;
  /** Opens these agent conversations (to show what an item of "Waiting on you" is about). */
  openThreads: (ids: number[]) => void;
  navigate: (view: View) => void;
  toast: (text: string, tone?: Toast['tone']) => void;
  dismiss: (id: number) => void;
  offerInvitation: (link: string | null) => void;
}

export function viewToFragment(view: View): string {
  switch (view.kind) {
    case 'conversation':
      return `conversation-${view.id}`;
    case 'tasks':
      return view.id === null ? 'tasks' : `task-${view.id}`;
    case 'settings':
      return `settings-${view.tab}`;
    default:
      return view.kind;
  }
}

export function viewFromFragment(fragment: string | null): View {
  const value = fragment ?? '';
  let match = /^conversation-(\d+)$/.exec(value);
  if (match) return { kind: 'conversation', id: Number(match[1]) };
  match = /^task-(\d+)$/.exec(value);
  if (match) return { kind: 'tasks', id: Number(match[1]) };
  match = /^settings-(connections|people|roles)$/.exec(value);
  if (match) return { kind: 'settings', tab: match[1] as SettingsTab };
  if (value === 'tasks') return { kind: 'tasks', id: null };
  if (value === 'peer' || value === 'orphaned' || value === 'attention') return { kind: value };
  return { kind: 'home' };
}

function initialView(): View {
  if (typeof window === 'undefined') return { kind: 'home' };
  return viewFromFragment(new URLSearchParams(window.location.hash.replace(/^#/, '')).get('view'));
}

function remember(view: View): void {
  if (typeof window === 'undefined') return;
  const fragment = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  if (view.kind === 'home') fragment.delete('view');
  else fragment.set('view', viewToFragment(view));
  const rest = fragment.toString();
  const { pathname, search } = window.location;
  window.history.replaceState(window.history.state, '', `${pathname}${search}${rest ? `#${rest}` : ''}`);
}

let nextToast = 1;

export const useUi = create<UiState>()((set, get) => ({
  view: initialView(),
  toasts: [],
  pendingInvitation: null,
  expandedThreads: new Set(),
  toggleThread(id) {
    const next = new Set(get().expandedThreads);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    set({ expandedThreads: next });
  },
  openThreads(ids) {
    const next = new Set(get().expandedThreads);
    for (const id of ids) next.add(id);
    set({ expandedThreads: next });
  },
  navigate(view) {
    remember(view);
    set({ view });
  },
  toast(text, tone = 'info') {
    const id = nextToast++;
    set({ toasts: [...get().toasts.slice(-3), { id, text, tone }] });
    setTimeout(() => get().dismiss(id), tone === 'error' ? 8000 : 3000);
  },
  dismiss(id) {
    set({ toasts: get().toasts.filter((t) => t.id !== id) });
  },
  offerInvitation(link) {
    set({ pendingInvitation: link });
  },
}));

export const selectView = (s: UiState) => s.view;
export const selectToasts = (s: UiState) => s.toasts;
export const selectPendingInvitation = (s: UiState) => s.pendingInvitation;
export const selectExpandedThreads = (s: UiState) => s.expandedThreads;
