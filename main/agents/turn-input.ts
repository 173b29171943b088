// A worker process's turn: one JSON document on stdin, written by the adapter that
// started the process (so parsed as that adapter's type, not checked again here).
export function readTurn<T>(): Promise<T> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
    process.stdin.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as T);
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
    process.stdin.on('error', reject);
  });
}
