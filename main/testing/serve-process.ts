// Starts `parley serve` as a real child process with its own data folder, the way a
// person would, and waits for it to print its address.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../paths';
import type { ServeInfo } from '../serve';
import { ApiClient } from './api-client';

export interface ServeProcess {
  dataDir: string;
  info: ServeInfo;
  process: ChildProcess;
  /** Everything the server wrote on stderr, for failure messages. */
  stderr(): string;
  connect(token?: string): Promise<ApiClient>;
  /** Kills the server the hard way (a crash), without cleanup. */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

export function makeDataDir(prefix = 'parley-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function startServe(options: {
  name: string;
  dataDir?: string;
  extraArgs?: string[];
  env?: NodeJS.ProcessEnv;
}): Promise<ServeProcess> {
  const dataDir = options.dataDir ?? makeDataDir(`parley-${options.name}-`);
  const child = spawn(
    process.execPath,
    [
      path.join(projectRoot, 'bin', 'parley.js'),
      'serve',
      '--data',
      dataDir,
      '--name',
      options.name,
      '--ui-port',
      '0',
      '--peer-port',
      '0',
      ...(options.extraArgs ?? []),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      // No first-run `assistant`: the callers make their own roles (pass PARLEY_DEFAULT_ROLE in env to get it).
      env: { ...process.env, PARLEY_LOG: 'silent', PARLEY_DEFAULT_ROLE: 'off', ...options.env },
    },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let stdout = '';
    // A bound, not a wait: three of these and Chromium starting at once on a loaded machine take tens of seconds.
    const timer = setTimeout(() => reject(new Error(`parley serve did not start within 60 s:\n${stderr}`)), 60_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('#token=')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`parley serve exited with ${code}:\n${stderr}`));
    });
  });
  const info = JSON.parse(readFileSync(path.join(dataDir, 'serve.json'), 'utf8')) as ServeInfo;
  const clients: ApiClient[] = [];
  return {
    dataDir,
    info,
    process: child,
    stderr: () => stderr,
    async connect(token = info.token) {
      const client = await ApiClient.connect(info.api, token);
      clients.push(client);
      return client;
    },
    async crash() {
      for (const client of clients) client.close();
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      for (const client of clients) client.close();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
