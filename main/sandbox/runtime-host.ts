// The sandbox runtime in a small process of its own, which also starts the processes the
// sandbox runs. Two reasons. @anthropic-ai/sandbox-runtime is one per module instance with
// one network filter: a connection no per-turn entry allows goes to one callback that is
// not told which turn asks, so turns at `answer` (refused unless listed) and turns that
// reach further (allowed unless refused) need a runtime each; this host's callback asks
// Parley, where policy.ts decides. And starting a process from Node forks the process that
// starts it: Parley's, with its heap, its database's cache and its connections, is large.
// Each fork blocks its event loop while the page tables are copied (5–9 ms here) and leaves
// every page of it copy-on-write, so Parley's next work after it faults on each page it
// writes (docs/security.md, "Where the sandbox runs"). A wrap starts several processes
// (the runtime's own look-ups, its relays, the turn's shell): here they fork a process of
// a few megabytes, and Parley gets the started process's pipes over the IPC channel.
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { SandboxRuntimeConfig } from '@anthropic-ai/sandbox-runtime';
import { log } from '../log';
import { OPEN_NETWORK_PREFIX } from './stale-files';

/** Its first argument, which names it in a process list. */
export const SANDBOX_HOST_NAME = 'parley-sandbox-host';

/** The host: CommonJS evaluated as is (`node -e`), importing the runtime from the URL it is given. */
const HOST_SOURCE = `
const { spawn } = require('node:child_process');
const [, url, asks, electron] = process.argv.slice(1);
// Set only so that Electron's binary runs as Node; what this host starts must not inherit it.
if (electron === 'unset') delete process.env.ELECTRON_RUN_AS_NODE;
let manager = null;
const waiting = new Map();
let asked = 0;
const send = (message, handle) =>
  new Promise((resolve) => {
    if (!process.connected) return resolve(false);
    process.send(message, handle, {}, (error) => resolve(!error));
  });
const ask = ({ host, port }) =>
  new Promise((resolve) => {
    const id = ++asked;
    waiting.set(id, resolve);
    void send({ kind: 'ask', id, host, port });
  });
const reply = (id, body) => send({ kind: 'reply', id, ...body });
async function start(message) {
  let child;
  try {
    child = spawn(message.command, message.args, {
      cwd: message.cwd,
      env: message.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  } catch (error) {
    return reply(message.id, { error: String(error && error.message), code: error && error.code });
  }
  if (child.pid === undefined) {
    child.once('error', (error) => reply(message.id, { error: error.message, code: error.code }));
    return;
  }
  // Its output is all Parley's: none of it may be read here before the pipes go.
  child.stdout._handle.readStop();
  child.stderr._handle.readStop();
  const pid = child.pid;
  let told = false;
  let exited = null;
  child.on('error', () => {});
  child.on('exit', (code, signal) => {
    exited = { kind: 'exit', pid, code, signal };
    if (told) void send(exited);
  });
  // Its streams go once the channel has taken the ones before (Node sends one handle at a
  // time): until then its input must outlive the child, which Node would end at its exit.
  const streams = [child.stdin, child.stdout, child.stderr];
  child.stdin = null;
  await Promise.all(streams.map((stream, fd) => send({ kind: 'stdio', id: message.id, fd }, stream)));
  // Parley has them: the host's copies are closed, and the agent sees its input end when Parley ends it.
  for (const stream of streams) stream.destroy();
  await reply(message.id, { pid });
  told = true;
  if (exited) void send(exited);
}
process.on('message', async (message) => {
  try {
    switch (message.kind) {
      case 'init': {
        manager = (await import(url)).SandboxManager;
        await manager.initialize(message.config, asks === 'asks' ? ask : undefined);
        await reply(message.id, { errors: manager.checkDependencies().errors });
        break;
      }
      case 'answer':
        waiting.get(message.id)?.(message.allow === true);
        waiting.delete(message.id);
        break;
      case 'wrap': {
        // The runtime keeps what it finds in its working folder unwritable: Parley's, which may have moved.
        if (process.cwd() !== message.workingDir) process.chdir(message.workingDir);
        manager.registerCommandNetworkLists(message.commandId, { allowedDomains: message.allowedDomains });
        try {
          const wrapped = await manager.wrapWithSandboxArgv(message.command, message.wrapperShell, message.config, undefined, message.cwd, {
            commandId: message.commandId,
          });
          await reply(message.id, { argv: wrapped.argv });
        } catch (error) {
          manager.unregisterCommandNetworkLists(message.commandId);
          throw error;
        }
        break;
      }
      case 'release':
        manager.unregisterCommandNetworkLists(message.commandId);
        manager.cleanupAfterCommand();
        break;
      case 'start':
        await start(message);
        break;
      case 'close':
        if (manager) await manager.reset();
        await reply(message.id, {});
        process.disconnect();
        break;
    }
  } catch (error) {
    if (message.id !== undefined) void reply(message.id, { error: String(error && error.message ? error.message : error) });
  }
});
// Parley is gone (ended, or killed): so is this, and the relays it started with it.
process.on('disconnect', () => process.exit(0));
`;

interface Reply {
  kind: 'reply';
  id: number;
  error?: string;
  code?: string;
  errors?: string[];
  argv?: string[];
  pid?: number;
}
type HostMessage =
  | Reply
  | { kind: 'ask'; id: number; host: string; port: number }
  | { kind: 'stdio'; id: number; fd: 0 | 1 | 2 }
  | { kind: 'exit'; pid: number; code: number | null; signal: NodeJS.Signals | null };

/** What Parley uses of a process it started: a ChildProcess, or one the host started. */
export interface AgentChild {
  readonly pid?: number | undefined;
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  /** Set when Parley lost the process before its exit was told (its host ended): why. */
  readonly lost?: string | null;
  once(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
  once(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** Starts a program, without a shell, as the leader of a new process group. */
export interface ProcessStarter {
  start(
    command: string,
    args: readonly string[],
    options: { cwd: string; env: NodeJS.ProcessEnv },
  ): Promise<AgentChild>;
}

/** A process the host started: its pipes are Parley's, its exit is told by the host. */
class HostedChild extends EventEmitter implements AgentChild {
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;

  constructor(
    readonly pid: number,
    readonly stdin: Writable,
    readonly stdout: Readable,
    readonly stderr: Readable,
  ) {
    super();
  }

  lost: string | null = null;

  exited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exitCode !== null || this.signalCode !== null) return;
    this.exitCode = code;
    this.signalCode = signal;
    this.emit('exit', code, signal);
  }

  /** Its host ended, so its exit will never be told: taken as killed, and why is kept. */
  lose(why: string): void {
    if (this.exitCode !== null || this.signalCode !== null) return;
    this.lost = why;
    this.exited(null, 'SIGKILL');
  }
}

/** A host that ends without being closed is started again, at most this many times a minute. */
const RESTARTS_PER_MINUTE = 3;

export class RuntimeHost implements ProcessStarter {
  private host!: ChildProcess;
  private readonly pending = new Map<number, (reply: Reply) => void>();
  private readonly pipes = new Map<number, Array<net.Socket | undefined>>();
  /** Started and not exited yet, by pid. */
  private readonly children = new Map<number, HostedChild>();
  /** Started, by request, until `start` takes them. */
  private readonly adopted = new Map<number, HostedChild>();
  private sent = 0;
  /** Closed, or ended too often to start again: it starts nothing more. */
  private ended = false;
  private closing = false;
  /** The runtime's configuration, once initialized: a host started again gets it too. */
  private config: SandboxRuntimeConfig | null = null;
  /** Settles once the current host's runtime is initialized again after a restart. */
  private ready: Promise<unknown> = Promise.resolve();
  private readonly restarts: number[] = [];
  /** Hosts whose end was handled ('error' and 'exit' may both come). */
  private readonly gone = new WeakSet<ChildProcess>();
  /** Its TMPDIR, for a runtime that must not share the default one's socket names. */
  private readonly tmp: string | null;

  /**
   * `moduleUrl`: the runtime's entry (a file: URL, outside any archive).
   * `allows`: the decision for a connection no per-turn entry allowed; null: refused.
   */
  constructor(
    private readonly moduleUrl: string,
    private readonly allows: ((host: string, port: number) => boolean) | null,
  ) {
    this.tmp = allows ? mkdtempSync(path.join(os.tmpdir(), `${OPEN_NETWORK_PREFIX}${process.pid}-`)) : null;
    this.launch();
  }

  private launch(): void {
    // Electron's own binary runs the host as Node only when told to.
    const electron = process.versions.electron !== undefined && process.env.ELECTRON_RUN_AS_NODE === undefined;
    const allows = this.allows ? 'asks' : 'refuses';
    const host = spawn(
      process.execPath,
      ['-e', HOST_SOURCE, SANDBOX_HOST_NAME, this.moduleUrl, allows, electron ? 'unset' : 'keep'],
      {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        env: {
          ...process.env,
          ...(this.tmp ? { TMPDIR: this.tmp } : {}),
          ...(electron ? { ELECTRON_RUN_AS_NODE: '1' } : {}),
        },
        // Not a turn's: Stop and the process tree never reach it.
        detached: false,
      },
    );
    this.host = host;
    // Turns keep Parley alive, not this.
    host.unref();
    host.channel?.unref();
    host.on('message', (message: HostMessage, handle?: unknown) => {
      if (this.host === host) this.received(message, handle);
    });
    host.on('error', (error) => this.lost(host, `the sandbox’s host failed: ${error.message}`));
    host.on('exit', (code, signal) => this.lost(host, `the sandbox’s host ended (${signal ?? `exit ${code}`})`));
  }

  /** The host is gone: what waited on it fails, and, unless Parley closed it, a new one starts. */
  private lost(host: ChildProcess, why: string): void {
    if (this.host !== host || this.gone.has(host)) return;
    this.gone.add(host);
    for (const settle of this.pending.values()) settle({ kind: 'reply', id: -1, error: why });
    this.pending.clear();
    for (const sockets of this.pipes.values()) for (const socket of sockets) socket?.destroy();
    this.pipes.clear();
    // Their exits will not be told: what they started is ended by the process tree.
    for (const child of this.children.values()) child.lose(why);
    this.children.clear();
    this.adopted.clear();
    const now = Date.now();
    while (this.restarts.length > 0 && now - this.restarts[0]! > 60_000) this.restarts.shift();
    if (this.closing || this.restarts.length >= RESTARTS_PER_MINUTE) {
      if (!this.closing) log.error(`${why}; it ended too often to start again: sandboxed turns cannot start`);
      this.ended = true;
      if (this.tmp) rmSync(this.tmp, { recursive: true, force: true });
      return;
    }
    this.restarts.push(now);
    log.warn(`${why}; starting it again`);
    this.launch();
    const config = this.config;
    if (config)
      this.ready = this.call({ kind: 'init', config }).then(({ reply }) => {
        const errors = reply.error ? [reply.error] : (reply.errors ?? []);
        if (errors.length > 0) log.error('the sandbox’s host did not start again', { errors });
      });
  }

  private received(message: HostMessage, handle: unknown): void {
    switch (message.kind) {
      case 'ask': {
        let allow = false;
        try {
          allow = this.allows?.(message.host, message.port) ?? false;
        } catch {
          // Refused: a decision that failed is no allowance.
        }
        this.post({ kind: 'answer', id: message.id, allow });
        return;
      }
      case 'stdio': {
        if (!(handle instanceof net.Socket)) return;
        const socket = handle;
        const sockets = this.pipes.get(message.id) ?? [];
        sockets[message.fd] = socket;
        this.pipes.set(message.id, sockets);
        return;
      }
      case 'exit':
        this.children.get(message.pid)?.exited(message.code, message.signal);
        this.children.delete(message.pid);
        return;
      case 'reply': {
        // A start's child is made here, before any later message (its exit) is read.
        if (message.pid !== undefined) this.adopt(message.id, message.pid);
        const settle = this.pending.get(message.id);
        this.pending.delete(message.id);
        settle?.(message);
      }
    }
  }

  private post(body: Record<string, unknown>): void {
    if (!this.ended && this.host.connected) this.host.send(body, (error) => error && undefined);
  }

  /** Sends at once (the runtime's initialization, which what follows waits for). */
  private call(body: Record<string, unknown>): Promise<{ id: number; reply: Reply }> {
    const id = ++this.sent;
    if (this.ended) return Promise.resolve({ id, reply: { kind: 'reply', id, error: 'the sandbox’s host ended' } });
    return new Promise((resolve) => {
      this.pending.set(id, (reply) => resolve({ id, reply }));
      this.post({ ...body, id });
    });
  }

  /** Sends once the host's runtime is ready (after a restart, once initialized again). */
  private async request(body: Record<string, unknown>): Promise<{ id: number; reply: Reply }> {
    await this.ready;
    return this.call(body);
  }

  /** Starts its proxies; the errors say why it cannot run (none: it runs). */
  async initialize(config: SandboxRuntimeConfig): Promise<string[]> {
    this.config = config;
    const { reply } = await this.call({ kind: 'init', config });
    return reply.error ? [reply.error] : (reply.errors ?? []);
  }

  async wrap(
    command: string,
    cwd: string,
    config: Partial<SandboxRuntimeConfig>,
    commandId: string,
    allowedDomains: string[],
    wrapperShell: string | undefined,
  ): Promise<string[]> {
    const workingDir = process.cwd();
    const { reply } = await this.request({
      kind: 'wrap',
      command,
      cwd,
      config,
      commandId,
      allowedDomains,
      wrapperShell,
      workingDir,
    });
    if (reply.error || !reply.argv) throw new Error(reply.error ?? 'the sandbox gave no command');
    return reply.argv;
  }

  /** The command has exited (or never started): its allowance ends, its mount points go. */
  release(commandId: string): void {
    this.post({ kind: 'release', commandId });
  }

  private adopt(id: number, pid: number): void {
    const [stdin, stdout, stderr] = this.pipes.get(id) ?? [];
    this.pipes.delete(id);
    if (!stdin || !stdout || !stderr) {
      for (const socket of [stdin, stdout, stderr]) socket?.destroy();
      // Started, but Parley cannot reach it: it goes rather than run unseen.
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
      return;
    }
    const child = new HostedChild(pid, stdin, stdout, stderr);
    this.children.set(pid, child);
    this.adopted.set(id, child);
  }

  async start(
    command: string,
    args: readonly string[],
    { cwd, env }: { cwd: string; env: NodeJS.ProcessEnv },
  ): Promise<AgentChild> {
    const { id, reply } = await this.request({ kind: 'start', command, args, cwd, env });
    const child = this.adopted.get(id);
    this.adopted.delete(id);
    if (!child)
      throw Object.assign(new Error(reply.error ?? `spawn ${command}: the sandbox’s host did not start it`), {
        code: reply.code,
      });
    return child;
  }

  async close(): Promise<void> {
    if (this.ended || this.closing) return;
    this.closing = true;
    const host = this.host;
    const exited = new Promise((resolve) => host.once('exit', resolve));
    // Parley waits for it now: its folder goes when it has exited.
    host.ref();
    host.channel?.ref();
    await this.call({ kind: 'close' });
    await exited;
  }
}
