// Small formatting helpers for people-facing text.
import type { RunState } from '../shared/domain';

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dayFormat = new Intl.DateTimeFormat(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit' });
const dateFormat = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric' });
const fullFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'medium' });
const dayDateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

/** The day, in the page's own language: "3 Dec 2026", "Dec 3, 2026", "3. Dez. 2026". */
export function dayDate(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : dayDateFormat.format(date);
}

/** The local day that holds `now`, as [midnight, next midnight): kept, since a list asks once per row. */
let today = { from: 0, to: 0 };
function dayOf(now: number): { from: number; to: number } {
  if (now >= today.from && now < today.to) return today;
  const start = new Date(now);
  start.setHours(0, 0, 0, 0);
  const end = new Date(start);
  end.setDate(end.getDate() + 1);
  today = { from: start.getTime(), to: end.getTime() };
  return today;
}

/** Times already put in words, by format and time: a scrolled list formats the same few again and again. */
const formatted = new Map<string, string>();
function formatOnce(format: Intl.DateTimeFormat, which: string, iso: string, date: Date): string {
  const key = which + iso;
  let text = formatted.get(key);
  if (text === undefined) {
    if (formatted.size >= 5000) formatted.clear();
    text = format.format(date);
    formatted.set(key, text);
  }
  return text;
}

/** "14:03" today, "Tue 14:03" this week, "3 Mar 2025" before. */
export function shortTime(iso: string, now = Date.now()): string {
  const date = new Date(iso);
  const at = date.getTime();
  if (Number.isNaN(at)) return '';
  const day = dayOf(now);
  if (at >= day.from && at < day.to) return formatOnce(timeFormat, 't', iso, date);
  if (now - at < 6 * 24 * 3600_000) return formatOnce(dayFormat, 'w', iso, date);
  return formatOnce(dateFormat, 'd', iso, date);
}

export function fullTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : fullFormat.format(date);
}

const numberFormat = new Intl.NumberFormat();

/** A count in the page's own language ("12,345"): as `toLocaleString`, without a new formatter each time. */
export function formatCount(n: number): string {
  return numberFormat.format(n);
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** First line of a text, for previews. */
export function oneLine(text: string, max = 140): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export const runStateLabel: Record<RunState, string> = {
  idle: 'Idle',
  queued: 'Queued',
  running: 'Working',
  stopping: 'Stopping',
};

/** Why a text failed (the wire's rejection reasons), for people. */
export function failureReason(reason: string | null, failedBy: 'us' | 'peer' | null = null, peer = 'The peer'): string {
  switch (reason) {
    case 'paused':
      if (failedBy === 'peer') return `${peer} paused the connection.`;
      if (failedBy === 'us') return 'The connection was paused here.';
      return 'The connection is paused, on one side or the other.';
    case 'thread':
      return 'This agent conversation was closed on the other side (its topic was deleted there).';
    case 'roles':
      return 'The roles did not match this agent conversation.';
    case 'role':
      return 'The peer does not let this role be addressed.';
    case 'queue':
      return 'Too much text is waiting at the peer.';
    case 'revoke':
    case 'revoked':
      if (failedBy === 'peer') return `${peer} revoked the connection.`;
      if (failedBy === 'us') return 'The connection was revoked here.';
      return 'The connection was revoked.';
    case 'closed':
      return 'The agent conversation was closed before it could be sent.';
    case 'denied':
      return 'A person denied it, so it was never sent.';
    case null:
      return 'No reason was given.';
    default:
      return reason;
  }
}

/** Initials for an avatar. */
export function initials(name: string): string {
  const parts = name.split(/[\s_\-./]+/).filter(Boolean);
  const letters = parts.length >= 2 ? `${parts[0]![0]}${parts[1]![0]}` : name.slice(0, 2);
  return letters.toUpperCase();
}

/** A stable hue per name, for avatars. */
export function hueOf(name: string): number {
  let hash = 0;
  for (const char of name) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return hash % 360;
}
