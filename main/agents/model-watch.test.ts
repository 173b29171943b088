// When an agent that cannot reach its model has waited too long, and what the run shows
// meanwhile: decided by pure functions, tested by tables.
import { describe, expect, it } from 'vitest';
import { withoutCliNotices } from './cli-notices';
import { deadline, observe, ordinal, retryingLine, retryReason, startWatch, type ModelSignal } from './model-watch';

describe('the model watch', () => {
  const limit = 60_000;
  it.each<[string, [ModelSignal, number][], number | null]>([
    ['nothing waits at the start', [], null],
    ['a retry counts from the turn’s start', [['retrying', 20_000]], 60_000],
    [
      'more retries keep the first start',
      [
        ['retrying', 20_000],
        ['retrying', 40_000],
      ],
      60_000,
    ],
    [
      'an answer ends the wait',
      [
        ['retrying', 20_000],
        ['answered', 30_000],
      ],
      null,
    ],
    [
      'a retry after an answer counts from the answer',
      [
        ['answered', 30_000],
        ['retrying', 45_000],
      ],
      90_000,
    ],
    [
      'a wait counts from when it began',
      [
        ['answered', 10_000],
        ['waiting', 25_000],
      ],
      85_000,
    ],
    [
      'a retry during a wait keeps the wait’s start',
      [
        ['waiting', 5_000],
        ['retrying', 30_000],
      ],
      65_000,
    ],
  ])('%s', (_what, signals, expected) => {
    let watch = startWatch(0);
    for (const [signal, at] of signals) watch = observe(watch, signal, at);
    expect(deadline(watch, limit)).toBe(expected);
  });

  it.each([
    [1, '1st'],
    [2, '2nd'],
    [3, '3rd'],
    [4, '4th'],
    [11, '11th'],
    [12, '12th'],
    [13, '13th'],
    [21, '21st'],
    [22, '22nd'],
    [111, '111th'],
  ])('counts try %i as the %s', (n, word) => expect(ordinal(n)).toBe(word));

  it.each([
    [null, 'the model server does not answer'],
    [529, 'the model server is overloaded (529)'],
    [503, 'the model server is overloaded (503)'],
    [500, 'the model server fails (500)'],
    [429, 'the model server limits how often it may be asked (429)'],
    [401, 'the model server refuses the request (401)'],
  ])('says why a try failed (status %s)', (status, reason) => expect(retryReason(status)).toBe(reason));

  it('shows the try to come on the run', () => {
    expect(retryingLine(retryReason(null), 3)).toBe('retrying: the model server does not answer (3rd try)');
  });
});

describe('what an agent CLI adds of its own', () => {
  const notice =
    'Warning: auto mode is not checked for this session because your requests go through 127.0.0.1:41234, which does not pass the check through.';
  it.each([
    ['a notice after the answer', `The budget is 40k.\n\n${notice}`, 'The budget is 40k.'],
    [
      'a notice of two lines',
      `The budget is 40k.\n\n${notice}\nAsk whoever runs it to pass it through.`,
      'The budget is 40k.',
    ],
    ['a notice before the answer', `${notice}\n\nThe budget is 40k.`, 'The budget is 40k.'],
    [
      'claude-agent-acp’s bold notice, glued to the answer',
      "The budget is 40k.**Warning:** We're changing auto mode to no longer charge for classifier requests in Claude Code. However, this session isn't eligible because your requests go through 127.0.0.1:37591, which isn't compatible with this update.",
      'The budget is 40k.',
    ],
    [
      'the inference gateway notice',
      'Done.\n\nWarning: if it persists, check your inference gateway (127.0.0.1:9).',
      'Done.',
    ],
  ])('is taken out: %s', (_what, text, expected) => expect(withoutCliNotices(text)).toBe(expected));

  it.each([
    ['the model’s own warning', 'Warning: the figures for March are estimates.'],
    ['a text about gateways', 'Your requests go through the company proxy, as agreed.'],
    ['an answer without notices', 'The budget is 40k.'],
  ])('is left alone: %s', (_what, text) => expect(withoutCliNotices(text)).toBe(text));
});
