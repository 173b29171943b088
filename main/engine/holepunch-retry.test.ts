// When a dial by DHT key is tried again: once, after a holepunch that may succeed on a
// second go, while the dial has time left.
import { describe, expect, it } from 'vitest';
import { holepunchWorthRetrying } from './links';

const failure = (code: string) => Object.assign(new Error(code), { code });

describe('a holepunch tried again', () => {
  it.each([
    ['an aborted holepunch, first try, time left', failure('HOLEPUNCH_ABORTED'), 1, 6_000, true],
    ['a holepunch that timed out, first try', failure('HOLEPUNCH_PROBE_TIMEOUT'), 1, 6_000, true],
    ['the second failure', failure('HOLEPUNCH_ABORTED'), 2, 6_000, false],
    ['too little time left', failure('HOLEPUNCH_ABORTED'), 1, 1_500, false],
    ['both routers randomise ports', failure('HOLEPUNCH_DOUBLE_RANDOMIZED_NATS'), 1, 6_000, false],
    ['the peer is not on the DHT', failure('PEER_NOT_FOUND'), 1, 6_000, false],
    ['the pin failed', new Error('FingerprintMismatch'), 1, 6_000, false],
    ['not an error at all', null, 1, 6_000, false],
  ])('%s → %s', (_what, error, attempt, msLeft, expected) => {
    expect(holepunchWorthRetrying(error, attempt, msLeft)).toBe(expected);
  });
});
