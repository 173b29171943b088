// A desktop notification when a role answers in one of the owner's conversations and
// the window is not in front. Reads through the app API as the owner, like the window.
import { Notification, type BrowserWindow } from 'electron';
import type { AppEvent } from '../../shared/api-contract';
import type { Installation } from '../installation';
import { log } from '../log';

const preview = (text: string) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 180 ? `${line.slice(0, 179)}…` : line;
};

/** Starts watching; returns a function that stops it. */
export function notifyAnswers(installation: Installation, window: () => BrowserWindow | null): () => void {
  if (!Notification.isSupported()) return () => undefined;
  const session = { person: installation.owner() };
  /** The last message id seen per conversation; older ones never notify. */
  const seen = new Map<number, number>();
  let ready = false;

  void (
    installation.call(session, 'conversations.list', {}) as Promise<
      Array<{ id: number; lastMessage: { id: number } | null }>
    >
  )
    .then((list) => {
      for (const conversation of list) seen.set(conversation.id, conversation.lastMessage?.id ?? 0);
    })
    .catch((error: unknown) => log.warn('notifications: could not read conversations', { error: String(error) }))
    .finally(() => {
      ready = true;
    });

  const check = async (id: number) => {
    const detail = (await installation.call(session, 'conversations.get', { id, limit: 5 })) as {
      conversation: { roleName: string };
      messages: Array<{ id: number; author: { kind: string; name: string }; body: string }>;
    };
    const before = seen.get(id) ?? 0;
    const fresh = detail.messages.filter((m) => m.id > before);
    if (fresh.length === 0) return;
    seen.set(id, Math.max(...fresh.map((m) => m.id)));
    const answer = fresh.filter((m) => m.author.kind === 'role').at(-1);
    const win = window();
    if (!answer || (win && !win.isDestroyed() && win.isFocused())) return;
    const notification = new Notification({ title: `${answer.author.name} answered`, body: preview(answer.body) });
    notification.on('click', () => {
      const current = window();
      if (current && !current.isDestroyed()) {
        if (current.isMinimized()) current.restore();
        current.focus();
      }
    });
    notification.show();
  };

  return installation.events.observe((event: AppEvent) => {
    if (!ready || event.type !== 'changed' || event.kind !== 'conversation') return;
    // Not the owner's conversation, or deleted: nothing to say.
    check(event.id).catch(() => undefined);
  });
}
