// What a person types into the search box, as an FTS5 query. People type words, not
// FTS5 syntax, so nothing typed is read as an operator and nothing can be a syntax
// error: each word becomes a quoted prefix term ("deplo" finds "deployed"; a single
// letter stays a word, as its prefix would find nearly everything), text in
// double quotes a phrase, and every term must match. Pieces without a letter or digit
// match nothing in the index and are dropped, and control characters count as spaces
// (a NUL would end the query string inside SQLite).

/** At most this many terms are used; the rest of a long paste is ignored. */
export const MAX_TERMS = 16;

const hasWordCharacter = /[\p{L}\p{N}]/u;

const quoted = (text: string) => `"${text.replace(/"/g, '""')}"`;

/** The typed pieces: words, and phrases that were in double quotes (an unclosed one runs to the end). */
export function queryPieces(input: string): Array<{ text: string; phrase: boolean }> {
  // eslint-disable-next-line no-control-regex
  const typed = input.replace(/[\u0000-\u001f\u007f]/g, ' ');
  const pieces: Array<{ text: string; phrase: boolean }> = [];
  let i = 0;
  while (i < typed.length) {
    const char = typed[i]!;
    if (/\s/.test(char)) {
      i++;
    } else if (char === '"') {
      const close = typed.indexOf('"', i + 1);
      const end = close === -1 ? typed.length : close;
      pieces.push({
        text: typed
          .slice(i + 1, end)
          .trim()
          .replace(/\s+/g, ' '),
        phrase: true,
      });
      i = end + 1;
    } else {
      let end = i;
      while (end < typed.length && !/\s/.test(typed[end]!) && typed[end] !== '"') end++;
      pieces.push({ text: typed.slice(i, end), phrase: false });
      i = end;
    }
  }
  return pieces.filter((piece) => hasWordCharacter.test(piece.text)).slice(0, MAX_TERMS);
}

/** The FTS5 MATCH expression for what was typed, or null when it holds nothing to look for. */
export function matchExpression(typed: string): string | null {
  const pieces = queryPieces(typed);
  if (pieces.length === 0) return null;
  return pieces
    .map((piece) => (piece.phrase || [...piece.text].length < 2 ? quoted(piece.text) : `${quoted(piece.text)}*`))
    .join(' ');
}
