// The demo's transcript: one line per event, timed from the start, and what it prints when
// an installation is not in the state the story expected.
import type { ConnectionSummary, TextView, ThreadSummary } from '../../shared/domain';

const startedAt = Date.now();
export function line(text: string): void {
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1).padStart(5);
  process.stdout.write(`${seconds}s  ${text}\n`);
}
export const heading = (text: string) => process.stdout.write(`\n== ${text}\n`);
export const quote = (text: string) => JSON.stringify(text.length > 160 ? `${text.slice(0, 157)}...` : text);
/** Thread IDs are 22 random characters; the first 6 tell them apart in a transcript. */
export const short = (threadId: string) => threadId.slice(0, 6);

/** An installation in the state the demo did not expect. */
export class Unexpected extends Error {
  constructor(
    readonly expected: string,
    readonly seen: string,
  ) {
    super(`expected ${expected}; saw ${seen}`);
  }
}

/** Who did something, padded so the columns line up. */
export const who = (name: string) => name.padEnd(5);

export function expectNow(condition: boolean, expected: string, seen: string): asserts condition {
  if (!condition) throw new Unexpected(expected, seen);
}

export const describeTexts = (texts: TextView[]) =>
  texts.map((t) => `${t.direction} #${t.seq} ${quote(t.body)} ${stateOf(t)}`).join(', ') || 'no texts';
export const stateOf = (t: TextView) => (t.reason ? `${t.state} (${t.reason})` : t.state);
export const describeThread = (t: ThreadSummary | undefined) =>
  t
    ? `thread ${short(t.threadId)} ${t.localRole} <-> ${t.connection.name}/${t.peerRole}, ${t.status}${t.closeReason ? ` (${t.closeReason})` : ''}, started by ${t.startedBy}, run ${t.run.state}, texts ${JSON.stringify(t.counts)}`
    : 'no such thread';
export const describeConnection = (c: ConnectionSummary | undefined) =>
  c
    ? `${c.name}: ${c.status}, ${c.online ? 'online' : 'offline'}, path ${c.path ?? 'none'}, peer roles [${c.peerRoles.map((r) => r.name).join(', ')}]${c.lastError ? `, last error: ${c.lastError}` : ''}`
    : 'no such connection';
