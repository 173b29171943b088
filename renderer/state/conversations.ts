// The signed-in person's conversations, one per role, and the open ones' messages.
import { create } from 'zustand';
import type { ConversationDetail } from '../../shared/api-contract';
import type { Conversation, Message } from '../../shared/domain';
import { call, isNotFound, messageOf } from './client';

/** How many messages a conversation view loads (the API's maximum is 1000). */
export const MESSAGE_LIMIT = 500;

interface ConversationsState {
  list: Conversation[] | null;
  error: string | null;
  details: Record<number, ConversationDetail | undefined>;
  detailErrors: Record<number, string | undefined>;
  /** Conversations that were deleted (here or in another window) while shown. */
  gone: Record<number, true | undefined>;
  load: () => Promise<void>;
  loadDetail: (id: number) => Promise<void>;
  /** Opens (or finds) the conversation with a role. */
  open: (roleId: number) => Promise<Conversation>;
  send: (id: number, text: string) => Promise<Message>;
  stop: (id: number) => Promise<boolean>;
  remove: (id: number) => Promise<void>;
  /** A `changed conversation` event. */
  changed: (id: number) => Promise<void>;
}

/** Most recent activity first. */
const activity = (c: Conversation) => c.lastMessage?.createdAt ?? c.createdAt;
const sorted = (list: Conversation[]) => [...list].sort((a, b) => activity(b).localeCompare(activity(a)));

export const useConversations = create<ConversationsState>()((set, get) => ({
  list: null,
  error: null,
  details: {},
  detailErrors: {},
  gone: {},

  async load() {
    try {
      set({ list: sorted(await call('conversations.list', {})), error: null });
    } catch (error) {
      set({ error: messageOf(error) });
    }
  },

  async loadDetail(id) {
    try {
      const detail = await call('conversations.get', { id, limit: MESSAGE_LIMIT });
      set((s) => ({
        details: { ...s.details, [id]: detail },
        detailErrors: { ...s.detailErrors, [id]: undefined },
        list: s.list && sorted(s.list.map((c) => (c.id === id ? detail.conversation : c))),
      }));
    } catch (error) {
      if (isNotFound(error))
        set((s) => ({ gone: { ...s.gone, [id]: true }, details: { ...s.details, [id]: undefined } }));
      else set((s) => ({ detailErrors: { ...s.detailErrors, [id]: messageOf(error) } }));
    }
  },

  async open(roleId) {
    const conversation = await call('conversations.open', { roleId });
    set((s) => ({
      list: sorted([...(s.list ?? []).filter((c) => c.id !== conversation.id), conversation]),
      gone: { ...s.gone, [conversation.id]: undefined },
    }));
    return conversation;
  },

  async send(id, text) {
    const message = await call('conversations.send', { id, text });
    // Shown at once; the change event brings the run's new state.
    set((s) => {
      const detail = s.details[id];
      if (!detail || detail.messages.some((m) => m.id === message.id)) return s;
      return { details: { ...s.details, [id]: { ...detail, messages: [...detail.messages, message] } } };
    });
    return message;
  },

  async stop(id) {
    const { stopped } = await call('conversations.stop', { id });
    await get().loadDetail(id);
    return stopped;
  },

  async remove(id) {
    await call('conversations.delete', { id });
    set((s) => ({
      list: s.list?.filter((c) => c.id !== id) ?? null,
      details: { ...s.details, [id]: undefined },
      gone: { ...s.gone, [id]: true },
    }));
  },

  async changed(id) {
    const tasks: Promise<void>[] = [get().load()];
    if (get().details[id]) tasks.push(get().loadDetail(id));
    await Promise.all(tasks);
  },
}));

export const selectConversations = (s: ConversationsState) => s.list;
export const selectConversationsError = (s: ConversationsState) => s.error;
export const selectConversation = (id: number) => (s: ConversationsState) =>
  s.details[id]?.conversation ?? s.list?.find((c) => c.id === id);
export const selectMessages = (id: number) => (s: ConversationsState) => s.details[id]?.messages;
export const selectConversationDetail = (id: number) => (s: ConversationsState) => s.details[id];
export const selectConversationError = (id: number) => (s: ConversationsState) => s.detailErrors[id];
export const selectConversationGone = (id: number) => (s: ConversationsState) => s.gone[id] === true;
