// Notices: what a person would want to hear about while looking elsewhere — today, a
// role answering in their conversation. Each goes to that person alone as a `notice`
// event; the desktop app turns the owner's into system notifications and counts them
// on its badge, and any other client may show them its own way.
import type { Notice } from '../shared/api-contract';
import { eventAudience } from './access/rules';
import type { EventHub } from './events';
import type { Db } from './store/database';
import { getConversationRow, maxMessageId, roleMessagesAfter } from './store/queries/conversations';

const preview = (text: string) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 180 ? `${line.slice(0, 179)}…` : line;
};

export class AnswerNotices {
  /** Messages up to here were there before this start: they are not news. */
  private readonly floor: number;
  /** The last message noticed per conversation. */
  private readonly seen = new Map<number, number>();
  private readonly stop: () => void;

  constructor(
    private readonly db: Db,
    private readonly events: EventHub,
  ) {
    this.floor = maxMessageId(db);
    this.stop = events.observe((event) => {
      if (event.type === 'changed' && event.kind === 'conversation') this.changed(event.id);
    });
  }

  private changed(conversationId: number): void {
    const conversation = getConversationRow(this.db, conversationId);
    if (!conversation) {
      this.seen.delete(conversationId);
      return;
    }
    const after = Math.max(this.floor, this.seen.get(conversationId) ?? 0);
    const fresh = roleMessagesAfter(this.db, conversationId, after);
    const answer = fresh.at(-1);
    if (!answer) return;
    this.seen.set(conversationId, answer.id);
    const notice: Notice = {
      kind: 'answer',
      conversationId,
      title: `${answer.author.name} answered`,
      body: preview(answer.body),
    };
    this.events.emit({ type: 'notice', notice }, eventAudience.conversation(conversation));
  }

  close(): void {
    this.stop();
  }
}
