import { describe, expect, it } from 'vitest';
import { MATCH_END as E, MATCH_START as S, parseSnippet } from './snippet';

describe('parseSnippet', () => {
  it.each([
    [
      `…the ${S}quick${E} brown ${S}fox${E}`,
      '…the quick brown fox',
      [
        [5, 10],
        [17, 20],
      ],
    ],
    ['no match at all', 'no match at all', []],
    [`${S}café${E}`, 'café', [[0, 4]]],
    // A marker without its pair (the text itself held one): still plain text, nothing lost.
    [`open ${S}end`, 'open end', [[5, 8]]],
    [`stray ${E}close`, 'stray close', []],
    [`${S}${E}empty`, 'empty', []],
  ])('%j', (marked, text, highlights) => {
    expect(parseSnippet(marked)).toEqual({ text, highlights });
  });
});
