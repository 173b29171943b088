import { describe, expect, it } from 'vitest';
import { newSnippetMarks, parseSnippet } from './snippet';

const marks = newSnippetMarks();
const S = marks.start;
const E = marks.end;

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
    // A marker without its pair: still plain text, nothing lost.
    [`open ${S}end`, 'open end', [[5, 8]]],
    [`stray ${E}close`, 'stray close', []],
    [`${S}${E}empty`, 'empty', []],
    // The text's own control characters mark nothing, and are not shown.
    [`a \u0002fake\u0003 mark and ${S}real${E}`, 'a fake mark and real', [[16, 20]]],
    [`\u0002\u0002${S}x${E}\u0003`, 'x', [[0, 1]]],
    // Nor does a guess at the markers' shape.
    ['\u0002ab\u0002guess\u0003ab\u0003', 'abguessab', []],
  ])('%j', (marked, text, highlights) => {
    expect(parseSnippet(marked, marks)).toEqual({ text, highlights });
  });

  it('draws new marks for each search', () => {
    expect(newSnippetMarks()).not.toEqual(newSnippetMarks());
  });
});
