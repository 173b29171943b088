// People-facing times and counts: the same words however often a list asks for them.
import { describe, expect, it } from 'vitest';
import { formatCount, plural, shortTime } from './format';

const hourMinute = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const weekday = new Intl.DateTimeFormat(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit' });
const date = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric' });

describe('shortTime', () => {
  it('says the time today, the weekday this week, the date before, and moves on as days pass', () => {
    const noon = new Date(2026, 2, 10, 12, 0, 0).getTime();
    const morning = new Date(2026, 2, 10, 8, 30).toISOString();
    const lastWeek = new Date(2026, 2, 1, 9, 15).toISOString();
    expect(shortTime(morning, noon)).toBe(hourMinute.format(new Date(morning)));
    expect(shortTime(morning, noon)).toBe(hourMinute.format(new Date(morning)));
    expect(shortTime(lastWeek, noon)).toBe(date.format(new Date(lastWeek)));
    // The next day, the same time is yesterday's: its weekday, not its hour alone.
    const tomorrow = noon + 24 * 3600_000;
    expect(shortTime(morning, tomorrow)).toBe(weekday.format(new Date(morning)));
    // A minute before midnight it is still today's.
    expect(shortTime(morning, new Date(2026, 2, 10, 23, 59).getTime())).toBe(hourMinute.format(new Date(morning)));
    expect(shortTime('not a time', noon)).toBe('');
  });
});

describe('counts', () => {
  it('reads as toLocaleString does', () => {
    expect(formatCount(12345)).toBe((12345).toLocaleString());
    expect(plural(1, 'row')).toBe('1 row');
    expect(plural(100000, 'row')).toBe(`${(100000).toLocaleString()} rows`);
  });
});
