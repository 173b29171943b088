// A baseline as two processes: a server that prints its port on its first line, then a
// client that measures against it and prints its figures as JSON. Both are the bench
// script itself (dist/bench/run.js) in another mode; each gets a scratch folder.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

/** Runs `script server(scratch)…`, then `script client(scratch, port)…`; resolves with the client's JSON. */
export async function runProcessPair<T>(
  label: string,
  server: (scratch: string) => string[],
  client: (scratch: string, port: number) => string[],
): Promise<T> {
  const script = process.argv[1]!;
  const scratch = mkdtempSync(path.join(os.tmpdir(), `parley-bench-${label.replace(/\W+/g, '-')}-`));
  const serving = spawn(process.execPath, [script, ...server(scratch)], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      readline.createInterface({ input: serving.stdout }).once('line', (line) => resolve(Number(line)));
      serving.once('exit', (code) => reject(new Error(`the ${label} server exited (${code})`)));
    });
    const measuring = spawn(process.execPath, [script, ...client(scratch, port)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    measuring.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    // 'close', not 'exit': the process may end before its last output is read.
    const code = await new Promise<number | null>((resolve) => measuring.once('close', resolve));
    if (code !== 0) throw new Error(`the ${label} client failed (${code})`);
    try {
      return JSON.parse(out) as T;
    } catch {
      throw new Error(`the ${label} client printed no figures: ${JSON.stringify(out.slice(0, 200))}`);
    }
  } finally {
    serving.kill('SIGKILL');
    rmSync(scratch, { recursive: true, force: true });
  }
}
