// Snippets come from FTS5's snippet() with a marker around each match; here they
// become plain text and the ranges to highlight, so no client ever has to treat a
// snippet as markup. The markers are drawn at random for each search: a text (a
// peer's, say) may hold any character, so no fixed character could tell Parley's
// marks from the text's own.
import { randomBytes } from 'node:crypto';
import type { SnippetMarks } from '../store/queries/search';

export interface Snippet {
  text: string;
  /** [start, end) offsets into `text` (UTF-16 code units) of each match. */
  highlights: Array<[number, number]>;
}

/** Markers no text can hold but by guessing 128 random bits. */
export function newSnippetMarks(): SnippetMarks {
  const nonce = randomBytes(16).toString('hex');
  return { start: `\u0002${nonce}\u0002`, end: `\u0003${nonce}\u0003` };
}

// What a snippet shows of the text: controls and format characters (which the text
// may carry) mean nothing on screen and may not mark anything.
const HIDDEN = /[\p{Cc}\p{Cf}]/gu;

export function parseSnippet(marked: string, marks: SnippetMarks): Snippet {
  let text = '';
  const highlights: Array<[number, number]> = [];
  let openedAt: number | null = null;
  const pattern = new RegExp(`(${escape(marks.start)}|${escape(marks.end)})`);
  for (const piece of marked.split(pattern)) {
    if (piece === marks.start) {
      openedAt ??= text.length;
    } else if (piece === marks.end) {
      if (openedAt !== null && text.length > openedAt) highlights.push([openedAt, text.length]);
      openedAt = null;
    } else {
      text += piece.replace(HIDDEN, (char) => (char === '\n' || char === '\t' ? char : ''));
    }
  }
  if (openedAt !== null && text.length > openedAt) highlights.push([openedAt, text.length]);
  return { text, highlights };
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
