// Starts the built desktop main process (dist/electron/main.js) under plain Node with
// the stand-in `electron` module, as its own process with its own data folder, and
// plays its page: app API calls go through the real IPC handler with the window's
// webContents and main frame as the sender, and what main sends the page is kept.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  ApiError,
  errorCodes,
  type AppEvent,
  type ErrorCode,
  type MethodName,
  type ParamsOf,
  type ResultOf,
} from '../shared/api-contract';
import { projectRoot } from '../main/paths';
import type {
  ControlCall,
  ControlMessage,
  ControlPush,
  ControlRequest,
  FetchResult,
  FrameChoice,
  StandInSnapshot,
} from './electron/control-protocol';
import { makeDataDir } from './serve-process';
import { EVENT_CHANNEL, INVOKE_CHANNEL, LISTENING_CHANNEL } from '../shared/ipc-channels';

export const desktopMain = path.join(projectRoot, 'dist', 'electron', 'main.js');
export const standInRegister = path.join(projectRoot, 'dist', 'testing', 'electron', 'register.js');

/** Keep in step with main/app/ipc.ts. */

type Envelope = { ok: true; result: unknown } | { ok: false; error: { code: ErrorCode; message: string } };

export interface DesktopProcess {
  name: string;
  dataDir: string;
  process: ChildProcess;
  /** The window the app opened first. */
  windowId: number;
  stderr(): string;
  /** One app API call as the window's page makes it; rejects with an ApiError. */
  invoke<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>;
  /** The raw reply envelope, for a call from another frame or with bad input. */
  invokeRaw(method: unknown, params: unknown, frame?: FrameChoice): Promise<Envelope>;
  /** The page subscribes to events, as the preload does on `onEvent`. */
  listen(): Promise<void>;
  /** Events main sent the page, in order. */
  readonly events: AppEvent[];
  /** Everything the stand-in reported (notifications, badge, titles), in order. */
  readonly pushes: ControlPush[];
  /** Resolves once `check` returns a value; re-checked on every report from the process. */
  waitFor<T>(
    check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
    what: string,
    timeoutMs?: number,
  ): Promise<T>;
  control(request: ControlRequest): Promise<unknown>;
  /** Calls `listener` with every report from now on; returns a function that stops it. */
  onPush(listener: (push: ControlPush) => void): () => void;
  inspect(): Promise<StandInSnapshot>;
  /** A URL as the window would load it, through the app's protocol handler. */
  fetch(url: string): Promise<PageResponse>;
  /** Asks the person to quit (app.quit()); resolves with the exit code. */
  quit(): Promise<number | null>;
  /** kill -9, without any cleanup. */
  crash(): Promise<void>;
  /** Resolves when the process has ended (by itself or otherwise). */
  exited(): Promise<number | null>;
}

export interface PageResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  bytes: Buffer;
}

export function assertDesktopBuilt(): void {
  for (const file of [desktopMain, standInRegister])
    if (!existsSync(file))
      throw new Error(
        `${path.relative(projectRoot, file)} is missing: run \`npm run build\` first (\`npm test\` does).`,
      );
}

/** Spawns the desktop main process; resolves once its window has loaded the page. */
export async function startDesktop(options: {
  name: string;
  dataDir?: string;
  extraArgs?: string[];
  env?: NodeJS.ProcessEnv;
}): Promise<DesktopProcess> {
  assertDesktopBuilt();
  const dataDir = options.dataDir ?? makeDataDir(`parley-desktop-${options.name}-`);
  const child = spawn(
    process.execPath,
    [
      '--import',
      standInRegister,
      desktopMain,
      `--data=${dataDir}`,
      `--name=${options.name}`,
      ...(options.extraArgs ?? []),
    ],
    {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
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
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout!.resume();
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const events: AppEvent[] = [];
  const pushes: ControlPush[] = [];
  const wakers = new Set<() => void>();
  const pushListeners = new Set<(push: ControlPush) => void>();
  let nextId = 1;
  let windowId: number | null = null;
  const loaded = new Promise<number>((resolve, reject) => {
    child.on('message', (message: ControlMessage) => {
      if ('push' in message) {
        pushes.push(message);
        if (message.push === 'window-loaded' && windowId === null) {
          windowId = message.windowId;
          resolve(message.windowId);
        }
        if (message.push === 'renderer' && message.channel === EVENT_CHANNEL) events.push(message.args[0] as AppEvent);
        for (const listener of pushListeners) listener(message);
        for (const wake of [...wakers]) wake();
        return;
      }
      const waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      if (message.ok) waiting.resolve(message.result);
      else waiting.reject(new Error(message.error));
    });
    void exit.then((code) => {
      for (const waiting of pending.values()) waiting.reject(new Error(`the desktop process exited (${code})`));
      pending.clear();
      reject(new Error(`the desktop process exited with ${code} before its window loaded:\n${stderr}`));
      for (const wake of [...wakers]) wake();
    });
  });
  const timeout = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const firstWindow = await loaded.finally(() => clearTimeout(timeout));

  const control = (request: ControlRequest): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (!child.connected) return reject(new Error('the desktop process is gone'));
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ id, request } satisfies ControlCall);
    });

  const invokeRaw = (method: unknown, params: unknown, frame: FrameChoice = 'main') =>
    control({
      op: 'invoke',
      windowId: firstWindow,
      frame,
      channel: INVOKE_CHANNEL,
      args: [method, params],
    }) as Promise<Envelope>;

  return {
    name: options.name,
    dataDir,
    process: child,
    windowId: firstWindow,
    stderr: () => stderr,
    events,
    pushes,
    async invoke(method, params) {
      const envelope = await invokeRaw(method, params);
      if (envelope.ok) return envelope.result as never;
      const code = (errorCodes as readonly string[]).includes(envelope.error.code) ? envelope.error.code : 'internal';
      throw new ApiError(code, envelope.error.message);
    },
    invokeRaw,
    async listen() {
      await control({ op: 'send', windowId: firstWindow, frame: 'main', channel: LISTENING_CHANNEL, args: [] });
    },
    async waitFor(check, what, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await check();
        if (value) return value;
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw new Error(`timed out waiting for ${what}\n${stderr}`);
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`the desktop process ended while waiting for ${what}\n${stderr}`);
        await new Promise<void>((resolve) => {
          // Woken by the next report; the timer bounds the wait and re-checks what reports cannot show.
          const timer = setTimeout(done, Math.min(remaining, 250));
          wakers.add(done);
          function done() {
            clearTimeout(timer);
            wakers.delete(done);
            resolve();
          }
        });
      }
    },
    control,
    onPush(listener) {
      pushListeners.add(listener);
      return () => pushListeners.delete(listener);
    },
    inspect: () => control({ op: 'inspect' }) as Promise<StandInSnapshot>,
    async fetch(url) {
      const { status, headers, base64 } = (await control({ op: 'fetch', url })) as FetchResult;
      const bytes = Buffer.from(base64, 'base64');
      return { status, headers, bytes, body: bytes.toString('utf8') };
    },
    async quit() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      await control({ op: 'quit' });
      return exit;
    },
    async crash() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exit;
    },
    exited: () => exit,
  };
}

/** A second start of the app on the same data folder, as the system starts it for a parley:// link. */
export async function launchAgain(dataDir: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', standInRegister, desktopMain, `--data=${dataDir}`, ...args], {
    cwd: projectRoot,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, PARLEY_LOG: 'silent', PARLEY_DEFAULT_ROLE: 'off', PARLEY_DHT_BOOTSTRAP: 'off' },
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  return { code, stderr };
}
