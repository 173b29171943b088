// The filters of each Agent conversations panel, by list; kept while the page lives.
import { create } from 'zustand';
import { noFilter, type ThreadFilter } from '../thread-filters';
import type { ThreadListKey } from './threads';

interface FiltersState {
  filters: Partial<Record<ThreadListKey, ThreadFilter>>;
  set: (key: ThreadListKey, patch: Partial<ThreadFilter>) => void;
  clear: (key: ThreadListKey) => void;
}

export const useThreadFilters = create<FiltersState>()((set) => ({
  filters: {},
  set: (key, patch) =>
    set((s) => ({ filters: { ...s.filters, [key]: { ...(s.filters[key] ?? noFilter), ...patch } } })),
  clear: (key) => set((s) => ({ filters: { ...s.filters, [key]: noFilter } })),
}));

export const selectFilter = (key: ThreadListKey) => (s: FiltersState) => s.filters[key] ?? noFilter;
