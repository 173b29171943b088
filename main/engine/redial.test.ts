import { describe, expect, it } from 'vitest';
import { attemptsAfterOpen, keepNewLink, redialDelay } from './redial';

const backoff = { minMs: 250, maxMs: 30_000 };

describe('redialling a peer', () => {
  it.each([
    [0, 1, 250],
    [1, 1, 500],
    [3, 1, 2_000],
    [7, 1, 30_000],
    [60, 1, 30_000],
    [3, 0.5, 1_000],
    [3, 0, 0],
  ])('after %i tries, with jitter %d, waits %d ms at most', (attempt, random, ms) => {
    expect(redialDelay(attempt, backoff, random)).toBe(ms);
  });

  it.each([
    [5, true, 0],
    [5, false, 5],
    [0, false, 0],
  ])('after %i tries a link opens (dialled by us: %s): %i tries count on', (attempt, ours, after) => {
    expect(attemptsAfterOpen(attempt, ours)).toBe(after);
  });
});

describe('two links to one peer', () => {
  // aa is the smaller installation ID.
  it.each([
    ['aa', 'bb', false],
    ['bb', 'aa', true],
    ['aa', 'aa', true],
    ['bb', 'bb', true],
  ])('existing dialled by %s, new by %s: keep the new one = %s, on both sides alike', (existing, fresh, keep) => {
    expect(keepNewLink(existing, fresh, 'aa', 'bb')).toBe(keep);
    expect(keepNewLink(existing, fresh, 'bb', 'aa')).toBe(keep);
  });
});
