// One line of text from a peer — a role's description, a label — as Parley shows and
// stores it. Below the store, since the store cleans descriptions as it reads them, and
// the engine and the agents' prompts clean with the same rule.

/** Longest role description a peer may give, in characters (code points). */
export const MAX_DESCRIPTION_CHARS = 200;

// Controls, format characters (bidi embeddings, overrides, isolates and marks; zero-width
// characters) and the line and paragraph separators: none of them belongs in one line of
// a name or a description, and each can make text read as something else.
const INVISIBLE_IN_LINE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
const LINE_BREAKS = /[\r\n\u2028\u2029\u0085\v\f]+/g;

/** One line, without control, format or bidi characters, at most `max` characters. */
export function oneLine(text: string, max: number): string {
  const line = text
    .normalize('NFC')
    .replace(LINE_BREAKS, ' ')
    .replace(/\t/g, ' ')
    .replace(INVISIBLE_IN_LINE, '')
    .replace(/\s{2,}/g, ' ')
    .trim();
  const chars = Array.from(line);
  return chars.length <= max
    ? line
    : chars
        .slice(0, max - 1)
        .join('')
        .trimEnd() + '…';
}

/** A peer role's description as it is stored and shown: one clean line of at most 200 characters. */
export const cleanDescription = (text: string): string => oneLine(text, MAX_DESCRIPTION_CHARS);
