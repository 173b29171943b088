// Whether the Ctrl/Cmd+K switcher is open: the keyboard and the sidebar's Search button open it.
import { create } from 'zustand';

interface SwitcherState {
  open: boolean;
  setOpen: (open: boolean) => void;
}

export const useSwitcher = create<SwitcherState>()((set) => ({
  open: false,
  setOpen: (open) => set({ open }),
}));

/** Ctrl+K, or Cmd+K on a Mac, without other modifiers. */
export function isSwitcherShortcut(event: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'metaKey' | 'altKey' | 'shiftKey'>) {
  return (event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.key.toLowerCase() === 'k';
}
