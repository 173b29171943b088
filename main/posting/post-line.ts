// Posting a line where people read it: a message in a conversation or an entry in a
// task's log, and the change event its readers get. Every writer of such a line comes
// here: people (the app API), agents (`parley report`, a turn's final output), and
// Parley itself (notices).
import type { Author, ContextKind, Message, TaskLogEntry, TaskLogKind } from '../../shared/domain';
import { eventAudience } from '../access/rules';
import type { EventHub } from '../events';
import type { ReportResult } from '../role-api/protocol';
import { transaction, type Db } from '../store/database';
import { getConversationRow, insertMessage, type ConversationRow } from '../store/queries/conversations';
import { getTaskRow, insertTaskLog, type TaskRow } from '../store/queries/tasks';

/** Where a line can go: a conversation or a task (an agent conversation has texts, not lines). */
export interface LinePlace {
  kind: 'conversation' | 'task';
  id: number;
}

export interface Line {
  author: Author;
  text: string;
  /** What the line is: a task's log keeps it with the entry (a conversation's messages are all alike). */
  entry: TaskLogKind;
  /** The turn whose agent posted it. */
  turnId?: number | null;
}

/** A line written, with the row of its place (for its readers). */
export type Posted =
  | { kind: 'conversation'; place: ConversationRow; message: Message }
  | { kind: 'task'; place: TaskRow; entry: TaskLogEntry };

export interface Posting {
  db: Db;
  events: EventHub;
}

/** Who Parley's own lines are from. */
export const PARLEY_AUTHOR: Author = { kind: 'system', id: null, name: 'Parley' };
export const personAuthor = (person: { id: number; name: string }): Author => ({ kind: 'person', ...pick(person) });
export const roleAuthor = (role: { id: number; name: string }): Author => ({ kind: 'role', ...pick(role) });
const pick = ({ id, name }: { id: number; name: string }) => ({ id, name });

/** The place of a run's context, or null for an agent conversation. */
export function linePlace(context: { kind: ContextKind; id: number }): LinePlace | null {
  return context.kind === 'thread' ? null : { kind: context.kind, id: context.id };
}

/** Inside the caller's transaction: writes the line; null (writing nothing) when its place is gone. */
export function writeLine(db: Db, place: LinePlace, line: Line): Posted | null {
  const found = findPlace(db, place);
  return found && write(db, found, line);
}

/** After the commit: the place's readers hear that it changed. */
export function announceLine(events: EventHub, posted: Posted): void {
  if (posted.kind === 'conversation')
    events.emit(
      { type: 'changed', kind: 'conversation', id: posted.place.id },
      eventAudience.conversation(posted.place),
    );
  else events.emit({ type: 'changed', kind: 'task', id: posted.place.id }, eventAudience.task(posted.place));
}

/**
 * Writes the line in a transaction of its own, after `alongside` (what else the same
 * step commits), then tells its readers. Null when its place is gone: nothing is written,
 * `alongside` included.
 */
export function postLine<K extends LinePlace['kind']>(
  { db, events }: Posting,
  place: { kind: K; id: number },
  line: Line,
  alongside?: () => void,
): Extract<Posted, { kind: K }> | null {
  const posted = transaction(db, () => {
    const found = findPlace(db, place);
    if (!found) return null;
    alongside?.();
    return write(db, found, line);
  });
  if (posted) announceLine(events, posted);
  // A line is written where its place is: a conversation's is a message, a task's an entry.
  return posted as Extract<Posted, { kind: K }> | null;
}

/** `parley report` to a conversation or a task: a line from the role, kept with its turn. Null when the place is gone. */
export function postReport(
  posting: Posting,
  place: LinePlace,
  role: { id: number; name: string },
  text: string,
  turnId: number,
): ReportResult | null {
  const posted = postLine(posting, place, { author: roleAuthor(role), text, entry: 'report', turnId });
  if (!posted) return null;
  return posted.kind === 'conversation'
    ? { reported: 'conversation', id: posted.place.id, messageId: posted.message.id }
    : { reported: 'task', id: posted.place.id, logId: posted.entry.id };
}

type Found = { kind: 'conversation'; place: ConversationRow } | { kind: 'task'; place: TaskRow };

function findPlace(db: Db, { kind, id }: LinePlace): Found | null {
  if (kind === 'conversation') {
    const place = getConversationRow(db, id);
    return place ? { kind, place } : null;
  }
  const place = getTaskRow(db, id);
  return place ? { kind, place } : null;
}

function write(db: Db, found: Found, { author, text, entry, turnId = null }: Line): Posted {
  if (found.kind === 'conversation')
    return { ...found, message: insertMessage(db, found.place.id, author, text, turnId) };
  return { ...found, entry: insertTaskLog(db, found.place.id, entry, author, text, turnId) };
}
