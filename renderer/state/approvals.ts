// What waits for a person's approval (DESIGN §11.9): held texts either way and agents'
// requests to use a tool — every pending one the person may read, with whether it is
// theirs to decide. Read whole on every `changed approval` event: the list is small (what
// waits, not history).
import { create } from 'zustand';
import type { ApprovalView, ContextRef, RememberScope } from '../../shared/domain';
import { call, messageOf } from './client';

interface ApprovalsState {
  list: ApprovalView[] | null;
  error: string | null;
  load: () => Promise<void>;
  /** `remember`: approve, and always allow the same from this peer role (here, or everywhere). */
  decide: (id: number, approve: boolean, remember?: RememberScope) => Promise<void>;
}

export const useApprovals = create<ApprovalsState>()((set, get) => ({
  list: null,
  error: null,
  async load() {
    try {
      set({ list: await call('approvals.list', {}), error: null });
    } catch (error) {
      set({ error: messageOf(error) });
    }
  },
  async decide(id, approve, remember) {
    try {
      await call('approvals.decide', { id, approve, ...(remember ? { remember } : {}) });
    } finally {
      // Decided here or elsewhere meanwhile: either way what waits has changed.
      await get().load();
    }
  },
}));

export const selectApprovals = (s: ApprovalsState) => s.list;

const same = (a: ContextRef, b: ContextRef) => a.kind === b.kind && a.id === b.id;

/** The pending approval of a held text, if the person may read it. */
export const approvalOfText = (list: readonly ApprovalView[] | null, textId: number) =>
  list?.find((approval) => approval.text?.id === textId);

/** What waits in one agent conversation: its held texts, and tool requests of its agent. */
export const approvalsOfThread = (list: readonly ApprovalView[] | null, threadId: number) =>
  list?.filter((approval) => approval.thread?.id === threadId) ?? [];

/** What waits for a conversation or task: everything rooted there (its agent conversations' too). */
export const approvalsForRoot = (list: readonly ApprovalView[] | null, root: ContextRef) =>
  list?.filter((approval) => same(approval.root, root) || same(approval.context, root)) ?? [];
