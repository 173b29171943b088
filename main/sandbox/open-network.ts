// A second sandbox runtime, for turns whose network reaches beyond their model endpoints.
// @anthropic-ai/sandbox-runtime is one per module instance with one network filter: a
// connection no per-turn entry allows goes to one callback that is not told which turn
// asks. So turns at `answer` (refused unless listed) and turns that reach further
// (allowed unless refused) cannot share a runtime. This one is a fresh copy of the module
// in a worker thread, with proxies of its own whose callback asks the main thread, where
// policy.ts decides.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SandboxRuntimeConfig } from '@anthropic-ai/sandbox-runtime';
import { OPEN_NETWORK_PREFIX } from './stale-files';

/** The worker: CommonJS evaluated as is, importing the runtime from the path it is given. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let manager = null;
const asks = new Map();
let asked = 0;
const ask = ({ host, port }) =>
  new Promise((resolve) => {
    const id = ++asked;
    asks.set(id, resolve);
    parentPort.postMessage({ kind: 'ask', id, host, port });
  });
const reply = (id, body) => parentPort.postMessage({ kind: 'reply', id, ...body });
parentPort.on('message', async (message) => {
  try {
    switch (message.kind) {
      case 'init': {
        manager = (await import(workerData.url)).SandboxManager;
        await manager.initialize(message.config, ask);
        reply(message.id, { errors: manager.checkDependencies().errors });
        break;
      }
      case 'answer':
        asks.get(message.id)?.(message.allow === true);
        asks.delete(message.id);
        break;
      case 'wrap': {
        manager.registerCommandNetworkLists(message.commandId, { allowedDomains: message.allowedDomains });
        try {
          const wrapped = await manager.wrapWithSandboxArgv(message.command, message.wrapperShell, message.config, undefined, message.cwd, {
            commandId: message.commandId,
          });
          reply(message.id, { argv: wrapped.argv });
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
      case 'close':
        if (manager) await manager.reset();
        reply(message.id, {});
        parentPort.close();
        break;
    }
  } catch (error) {
    if (message.id !== undefined) reply(message.id, { error: String(error && error.message ? error.message : error) });
  }
});
`;

interface Reply {
  kind: 'reply';
  id: number;
  error?: string;
  errors?: string[];
  argv?: string[];
}
interface Ask {
  kind: 'ask';
  id: number;
  host: string;
  port: number;
}

export class OpenNetworkRuntime {
  private readonly worker: Worker;
  private readonly pending = new Map<number, (reply: Reply) => void>();
  private sent = 0;
  private ended = false;
  /** The worker's TMPDIR: the runtime names its proxies' sockets by pid and a counter, which both copies share. */
  private readonly tmp = mkdtempSync(path.join(os.tmpdir(), `${OPEN_NETWORK_PREFIX}${process.pid}-`));

  /**
   * `moduleUrl`: the runtime's entry (a file: URL, outside any archive).
   * `allows`: the decision for a connection no per-turn entry allowed.
   */
  constructor(
    moduleUrl: string,
    private readonly allows: (host: string, port: number) => boolean,
  ) {
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { url: moduleUrl },
      env: { ...process.env, TMPDIR: this.tmp },
    });
    // Turns keep the process alive, not this.
    this.worker.unref();
    this.worker.on('message', (message: Reply | Ask) => {
      if (message.kind === 'ask') {
        let allow = false;
        try {
          allow = this.allows(message.host, message.port);
        } catch {
          // Refused: a decision that failed is no allowance.
        }
        this.worker.postMessage({ kind: 'answer', id: message.id, allow });
        return;
      }
      const settle = this.pending.get(message.id);
      this.pending.delete(message.id);
      settle?.(message);
    });
    const fail = (why: string) => {
      this.ended = true;
      for (const settle of this.pending.values()) settle({ kind: 'reply', id: -1, error: why });
      this.pending.clear();
    };
    this.worker.on('error', (error) => fail(`the open-network sandbox failed: ${error.message}`));
    this.worker.on('exit', () => {
      fail('the open-network sandbox ended');
      rmSync(this.tmp, { recursive: true, force: true });
    });
  }

  private request(body: Record<string, unknown>): Promise<Reply> {
    if (this.ended) return Promise.resolve({ kind: 'reply', id: -1, error: 'the open-network sandbox ended' });
    const id = ++this.sent;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.worker.postMessage({ ...body, id });
    });
  }

  /** Starts its proxies; the errors say why it cannot run (none: it runs). */
  async initialize(config: SandboxRuntimeConfig): Promise<string[]> {
    const reply = await this.request({ kind: 'init', config });
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
    const reply = await this.request({ kind: 'wrap', command, cwd, config, commandId, allowedDomains, wrapperShell });
    if (reply.error || !reply.argv) throw new Error(reply.error ?? 'the open-network sandbox gave no command');
    return reply.argv;
  }

  /** The command has exited (or never started): its allowance ends, its mount points go. */
  release(commandId: string): void {
    if (!this.ended) this.worker.postMessage({ kind: 'release', commandId });
  }

  async close(): Promise<void> {
    if (this.ended) return;
    await this.request({ kind: 'close' });
    await this.worker.terminate();
  }
}
