// A card's height is learned once per shape: which cards share one, and when the learned
// heights are forgotten.
import { describe, expect, it } from 'vitest';
import type { ThreadSummary } from '../../shared/domain';
import { idleRun as idle, threadSummary } from '../../test-support/renderer/test-summaries';
import { CardHeights, cardShape } from './card-heights';

const counts = { held: 0, queued: 0, sent: 0, acked: 0, failed: 0, received: 0, handled: 0 };
const last = {
  id: 9,
  direction: 'in' as const,
  seq: 1,
  body: 'The numbers are up.',
  state: 'handled' as const,
  reason: null,
  failedBy: null,
  sentByTurnId: null,
  takenByTurnId: null,
  createdAt: '2026-12-01T10:00:00.000Z',
};

const thread = (patch: Partial<ThreadSummary> = {}) => threadSummary({ lastText: last, ...patch });

describe("a card's shape", () => {
  const base = cardShape(thread(), null);
  it.each([
    ['another thread with the same lines and names', thread({ id: 2, threadId: 'wire-2' }), null, true],
    ['a different last text, cut to one line', thread({ lastText: { ...last, body: 'x'.repeat(500) } }), null, true],
    ['a different close reason, cut to one line', thread({ status: 'closed', closeReason: 'a' }), null, false],
    ['no last text', thread({ lastText: null }), null, false],
    ['a failed text (a line of counts)', thread({ counts: { ...counts, failed: 1 } }), null, false],
    ['a text waiting for the agent', thread({ counts: { ...counts, received: 1 } }), null, false],
    ['working (Stop in its head)', thread({ run: { ...idle, state: 'running' } }), null, false],
    [
      'another peer (a longer name may wrap)',
      thread({ connection: { id: 8, name: 'carol', fingerprint: 'e'.repeat(64) } }),
      null,
      false,
    ],
    ['another peer role', thread({ peerRole: 'analyst' }), null, false],
    ['its connection offline (a note)', thread(), 'offline' as const, false],
    ['its connection paused (another note)', thread(), 'paused' as const, false],
  ])('%s: the same shape? %s', (_what, other, linkState, same) => {
    expect(cardShape(other, linkState) === base).toBe(same);
  });

  it('tells close reasons apart only by whether there is one: the line is one line', () => {
    const closed = (closeReason: string) => cardShape(thread({ status: 'closed', closeReason }), null);
    expect(closed('done')).toBe(closed('the peer closed it after a long talk about numbers'));
  });

  it('ignores the connection state of a closed card unless it was revoked', () => {
    const closed = thread({ status: 'closed' });
    expect(cardShape(closed, 'offline')).toBe(cardShape(closed, null));
    expect(cardShape(closed, 'revoked')).not.toBe(cardShape(closed, null));
  });
});

describe('learned heights', () => {
  it('learns a shape once: the first card measured of it', () => {
    const heights = new CardHeights();
    expect(heights.height('a')).toBeUndefined();
    heights.learn('a', 400, 108);
    expect(heights.height('a')).toBe(108);
    heights.learn('a', 400, 109);
    expect(heights.height('a')).toBe(108);
  });

  it('forgets every shape when the width changes: lines wrap differently', () => {
    const heights = new CardHeights();
    heights.learn('a', 400, 108);
    heights.learn('b', 400, 125);
    heights.learn('a', 320.4, 130);
    expect(heights.height('a')).toBe(130);
    expect(heights.height('b')).toBeUndefined();
    // Sub-pixel differences are the same width.
    heights.learn('b', 320, 150);
    heights.learn('a', 319.6, 1);
    expect(heights.height('b')).toBe(150);
    expect(heights.height('a')).toBe(130);
  });
});
