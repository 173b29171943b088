// Help and error texts write commands between backticks (`parley send`); people read
// them as code, not as punctuation.
import { Fragment } from 'react';

const CODE = /`([^`\n]+)`/g;

export function TextWithCode({ text }: { text: string }) {
  const parts: Array<string | { code: string }> = [];
  let last = 0;
  for (const match of text.matchAll(CODE)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push({ code: match[1]! });
    last = match.index + match[0].length;
  }
  if (parts.length === 0) return <>{text}</>;
  if (last < text.length) parts.push(text.slice(last));
  return (
    <>
      {parts.map((part, i) =>
        typeof part === 'string' ? <Fragment key={i}>{part}</Fragment> : <code key={i}>{part.code}</code>,
      )}
    </>
  );
}
