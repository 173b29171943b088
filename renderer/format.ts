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

/** "14:03" today, "Tue 14:03" this week, "3 Mar 2025" before. */
export function shortTime(iso: string, now = Date.now()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const age = now - date.getTime();
  if (new Date(now).toDateString() === date.toDateString()) return timeFormat.format(date);
  if (age < 6 * 24 * 3600_000) return dayFormat.format(date);
  return dateFormat.format(date);
}

export function fullTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : fullFormat.format(date);
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
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
