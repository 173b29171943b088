// What a person has typed into a conversation's composer and not sent: kept while they
// switch conversations, and set from elsewhere (the switcher's "Ask PEER/ROLE…" starts one).
import { create } from 'zustand';

interface DraftsState {
  drafts: Record<number, string>;
  setDraft(conversationId: number, text: string): void;
}

export const useDrafts = create<DraftsState>((set) => ({
  drafts: {},
  setDraft: (conversationId, text) => set((s) => ({ drafts: { ...s.drafts, [conversationId]: text } })),
}));
