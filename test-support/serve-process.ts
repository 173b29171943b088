// Starts `parley serve` as a real child process with its own data folder, the way a
// person would, and waits for it to print its address.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../main/paths';
import type { ServeInfo } from '../main/serve';
import { ApiClient } from './api-client';
import { makeDataDir } from './data-folder';

export interface ServeProcess {
  dataDir: string;
  info: ServeInfo;
  process: ChildProcess;
  /** Resolves when the process has exited, with how. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Whether the process is still running. */
  alive(): boolean;
  /** Everything the server wrote on stderr, for failure messages. */
  stderr(): string;
  connect(token?: string): Promise<ApiClient>;
  /** Kills the server the hard way (a crash), without cleanup. */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

export { makeDataDir, removeDataDir } from './data-folder';

export async function startServe(options: {
  name: string;
  dataDir?: string;
  extraArgs?: string[];
  env?: NodeJS.ProcessEnv;
  /** A lower limit on open files for the server (run under `prlimit`). */
  nofile?: number;
  /** A command the server runs under, such as `ip netns exec NS`. */
  wrap?: string[];
}): Promise<ServeProcess> {
  const dataDir = options.dataDir ?? makeDataDir(`parley-${options.name}-`);
  const limit = options.nofile === undefined ? [] : ['prlimit', `--nofile=${options.nofile}:${options.nofile}`, '--'];
  const [command = process.execPath, ...prefix] = [...(options.wrap ?? []), ...limit, process.execPath];
  const child = spawn(
    command,
    [
      ...prefix,
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
      env: {
        ...process.env,
        PARLEY_LOG: 'silent',
        PARLEY_DEFAULT_ROLE: 'off',
        PARLEY_DHT_BOOTSTRAP: 'off',
        ...options.env,
      },
    },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const alive = () => child.exitCode === null && child.signalCode === null;
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
    exited,
    alive,
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
      if (alive()) {
        child.kill('SIGTERM');
        // A server that does not end by itself must not hang the test run.
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

/** Runs `parley serve ARGS` to its end (for starts that must fail): its exit code and output. */
export function runServeToExit(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 20_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(projectRoot, 'bin', 'parley.js'), 'serve', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PARLEY_LOG: 'silent', PARLEY_DEFAULT_ROLE: 'off', PARLEY_DHT_BOOTSTRAP: 'off', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      // It started after all: stop it, and let the caller see that it did.
      if (stdout.includes('#token=')) child.kill('SIGTERM');
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`parley serve did not end in time:\n${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
