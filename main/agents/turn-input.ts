// A worker process's turn: one JSON document on stdin, written by the adapter that
// started the process (so parsed as that adapter's type, not checked again here). Parley
// writes the turn's token on a line ahead of it: a worker started before its turn (in a
// sandbox started ahead, main/runs/started-ahead.ts) has no token in its environment
// until its turn comes.
export function readTurn<T>(): Promise<T> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
    process.stdin.on('end', () => {
      try {
        resolve(JSON.parse(takeToken(Buffer.concat(chunks).toString('utf8'))) as T);
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
    process.stdin.on('error', reject);
  });
}

/** A turn token as `newToken('prt')` makes it. */
const TURN_TOKEN = /^prt_[A-Za-z0-9_-]{43}$/;

/**
 * The turn's JSON from what stdin held. A token line ahead of it (a JSON document starts
 * with `{`, a token never does) becomes `PARLEY_TOKEN`, which what the worker starts inherits.
 */
export function takeToken(text: string, env: NodeJS.ProcessEnv = process.env): string {
  if (text.startsWith('{')) return text;
  const newline = text.indexOf('\n');
  const token = newline < 0 ? text : text.slice(0, newline);
  if (!TURN_TOKEN.test(token)) throw new Error('stdin holds neither a turn token nor a turn: run me from Parley');
  env.PARLEY_TOKEN = token;
  return text.slice(newline + 1);
}
