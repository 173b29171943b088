// Work that waits for a quiet moment: a run's next sandbox is started once the
// installation's turns have settled, so it does not compete with a turn starting.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WhenSettled } from './when-settled';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A queue settling after 150 ms, at most 1000 ms, and the times (ms since the start) its work ran at. */
function queue() {
  const start = Date.now();
  const q = new WhenSettled<string>(150, 1000);
  const ran: Array<[string, number]> = [];
  const work = (key: string) => () => ran.push([key, Date.now() - start]);
  return { q, ran, work };
}

describe('WhenSettled', () => {
  const cases: Array<[string, (s: ReturnType<typeof queue>) => void, Array<[string, number]>]> = [
    ['runs work once nothing has happened for the settle time', ({ q, work }) => q.later('a', work('a')), [['a', 150]]],
    [
      'waits longer when a turn starts meanwhile',
      ({ q, work }) => {
        q.later('a', work('a'));
        vi.advanceTimersByTime(100);
        q.moment();
      },
      [['a', 250]],
    ],
    [
      'runs everything waiting together, once',
      ({ q, work }) => {
        q.later('a', work('a'));
        vi.advanceTimersByTime(100);
        q.later('b', work('b'));
      },
      [
        ['a', 250],
        ['b', 250],
      ],
    ],
    [
      'runs it at the latest a second after it was asked for, however busy things stay',
      ({ q, work }) => {
        q.later('a', work('a'));
        for (let at = 100; at < 1500; at += 100) {
          vi.advanceTimersByTime(100);
          q.moment();
        }
      },
      [['a', 1000]],
    ],
    [
      'asked again for the same key, runs the last work only',
      ({ q, work }) => {
        q.later('a', work('first'));
        q.later('a', work('second'));
      },
      [['second', 150]],
    ],
    [
      'never runs cancelled work',
      ({ q, work }) => {
        q.later('a', work('a'));
        q.later('b', work('b'));
        expect(q.cancel('a')).toBe(true);
        expect(q.cancel('a')).toBe(false);
      },
      [['b', 150]],
    ],
    [
      'never runs work whose reason went',
      ({ q, work }) => {
        q.later('a', work('a'));
        q.later('b', work('b'));
        q.cancelWhere((key) => key === 'b');
      },
      [['a', 150]],
    ],
    [
      'runs the rest when one piece of work throws',
      ({ q, work }) => {
        q.later('a', () => {
          throw new Error('the database is closed');
        });
        q.later('b', work('b'));
      },
      [['b', 150]],
    ],
    [
      'runs nothing once closed, and takes nothing after',
      ({ q, work }) => {
        q.later('a', work('a'));
        q.close();
        q.later('b', work('b'));
      },
      [],
    ],
  ];
  for (const [what, steps, expected] of cases)
    it(what, () => {
      const s = queue();
      steps(s);
      vi.advanceTimersByTime(5000);
      expect(s.ran).toEqual(expected);
    });

  it('says when nothing waits any more: at once when nothing did, once the work ran, or once it was cancelled', async () => {
    const { q, ran, work } = queue();
    let settled = false;
    await q.settled();
    q.later('a', work('a'));
    const first = q.settled().then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(149);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await first;
    expect(ran).toEqual([['a', 150]]);
    q.later('b', work('b'));
    const second = q.settled();
    q.cancel('b');
    await second;
    expect(ran).toHaveLength(1);
  });
});
