// Snippets come from FTS5's snippet() with two control characters around each match;
// here they become plain text and the ranges to highlight, so no client ever has to
// treat a snippet as markup.

export const MATCH_START = '\u0002';
export const MATCH_END = '\u0003';

export interface Snippet {
  text: string;
  /** [start, end) offsets into `text` (UTF-16 code units) of each match. */
  highlights: Array<[number, number]>;
}

export function parseSnippet(marked: string): Snippet {
  let text = '';
  const highlights: Array<[number, number]> = [];
  let openedAt: number | null = null;
  for (const char of marked) {
    if (char === MATCH_START) {
      openedAt ??= text.length;
    } else if (char === MATCH_END) {
      if (openedAt !== null && text.length > openedAt) highlights.push([openedAt, text.length]);
      openedAt = null;
    } else {
      text += char;
    }
  }
  if (openedAt !== null && text.length > openedAt) highlights.push([openedAt, text.length]);
  return { text, highlights };
}
