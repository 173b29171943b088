// The OS sandbox around agents' process trees, made by @anthropic-ai/sandbox-runtime
// (bubblewrap on Linux, Seatbelt on macOS). Whether it can start is found out once, when
// the installation opens; each turn's command is then wrapped with the policy of
// policy.ts. The runtime is one per process (its proxies live here), so installations
// opened in one process share it.
import { randomBytes } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { SandboxManager, type SandboxRuntimeConfig } from '@anthropic-ai/sandbox-runtime';
import type { SandboxPolicy } from './policy';

/**
 * `turnedOff`: whoever runs Parley chose no sandbox (PARLEY_SANDBOX=off): every run starts
 * without it, as they said. Otherwise an unavailable sandbox is the machine's lack.
 */
export type SandboxStatus = { available: true } | { available: false; reason: string; turnedOff?: true };

export interface SandboxOptions {
  /** bubblewrap's path; PARLEY_SANDBOX_BWRAP overrides it (a missing one tests the unavailable case). */
  bwrapPath?: string;
  /** 'off': no sandbox for any run, by choice; 'on' starts it whatever PARLEY_SANDBOX says. Unset: PARLEY_SANDBOX decides. */
  mode?: 'on' | 'off';
}

export interface WrappedCommand {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Call when the process has exited (or never started): its network allowance ends. */
  release(): void;
}

const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

function findOnPath(program: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return null;
}

let shared: { users: number; ready: Promise<SandboxStatus>; bwrap: string | undefined } | null = null;

function baseConfig(bwrapPath: string | undefined): SandboxRuntimeConfig {
  // Every turn brings its own read and write lists and its own network allowance.
  return {
    network: { allowedDomains: [], deniedDomains: [], allowAllUnixSockets: true, allowLocalBinding: true },
    filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
    ...(bwrapPath ? { bwrapPath } : {}),
  };
}

/** What can be told without starting anything: the platform, and the programs the sandbox needs. */
function precheck(bwrapPath: string | undefined): SandboxStatus {
  if (!SandboxManager.isSupportedPlatform())
    return { available: false, reason: `this platform (${process.platform}) has no sandbox Parley can use` };
  if (process.platform === 'win32')
    return { available: false, reason: 'Windows needs the sandbox’s one-time set-up, which Parley does not do yet' };
  if (process.platform === 'linux') {
    const bwrap = bwrapPath ?? findOnPath('bwrap');
    if (!bwrap) return { available: false, reason: 'bubblewrap (bwrap) is not installed' };
    try {
      accessSync(bwrap, constants.X_OK);
    } catch {
      return { available: false, reason: `bubblewrap is not at ${bwrap}` };
    }
    if (!findOnPath('socat')) return { available: false, reason: 'socat is not installed' };
  }
  return { available: true };
}

async function startRuntime(bwrapPath: string | undefined): Promise<SandboxStatus> {
  const found = precheck(bwrapPath);
  if (!found.available) return found;
  try {
    await SandboxManager.initialize(baseConfig(bwrapPath));
  } catch (error) {
    return { available: false, reason: `the sandbox did not start: ${(error as Error).message}` };
  }
  const check = SandboxManager.checkDependencies();
  if (check.errors.length > 0) {
    await SandboxManager.reset();
    return { available: false, reason: check.errors.join('; ') };
  }
  return { available: true };
}

export class AgentSandbox {
  private closed = false;

  private constructor(
    readonly status: SandboxStatus,
    private readonly holdsRuntime: boolean,
  ) {}

  /** Finds out whether the sandbox can start here, and starts it. */
  static async open(options: SandboxOptions = {}): Promise<AgentSandbox> {
    if ((options.mode ?? (process.env.PARLEY_SANDBOX === 'off' ? 'off' : 'on')) === 'off')
      return new AgentSandbox({ available: false, reason: 'the sandbox is turned off', turnedOff: true }, false);
    const bwrap = process.env.PARLEY_SANDBOX_BWRAP || options.bwrapPath;
    if (shared && shared.bwrap !== bwrap) {
      // The runtime is already started (by another installation in this process) with its bubblewrap.
      const found = precheck(bwrap);
      return new AgentSandbox(found.available ? await shared.ready : found, false);
    }
    shared ??= { users: 0, ready: startRuntime(bwrap), bwrap };
    shared.users += 1;
    const status = await shared.ready;
    return new AgentSandbox(status, true);
  }

  get available(): boolean {
    return this.status.available;
  }

  /**
   * The command as the sandbox starts it: a shell that starts bubblewrap that starts the
   * agent, with TMPDIR the run's folder and the proxy for every host (a loopback model
   * server included) so the allowance decides.
   */
  async wrap(
    command: string,
    args: readonly string[],
    cwd: string,
    env: NodeJS.ProcessEnv,
    tmpDir: string,
    policy: SandboxPolicy,
  ): Promise<WrappedCommand> {
    if (!this.status.available) throw new Error('the sandbox is not available');
    const commandId = randomBytes(16).toString('base64url');
    // The wrapper (bash, bubblewrap, socat) runs with Parley's PATH; the agent gets its own back inside.
    const envProgram = findOnPath('env') ?? '/usr/bin/env';
    const own = [`TMPDIR=${tmpDir}`, ...(env.PATH !== undefined ? [`PATH=${env.PATH}`] : [])];
    const inner = [envProgram, '-u', 'NO_PROXY', '-u', 'no_proxy', ...own, command, ...args].map(quote).join(' ');
    SandboxManager.registerCommandNetworkLists(commandId, { allowedDomains: policy.allowedDomains });
    try {
      const wrapped = await SandboxManager.wrapWithSandboxArgv(
        `exec ${inner}`,
        undefined,
        {
          filesystem: policy.filesystem,
          network: { allowedDomains: [], deniedDomains: [], allowAllUnixSockets: true, allowLocalBinding: true },
        },
        undefined,
        cwd,
        { commandId },
      );
      const [program, ...rest] = wrapped.argv;
      // The sandbox adds its own variables (the proxy's) inside bubblewrap; ours stay ours.
      return {
        command: program!,
        args: rest,
        // SHLVL: bash reads ~/.bashrc when its stdin is a socket (Node's pipes are) and it thinks it is the first shell.
        env: { ...env, PATH: process.env.PATH, SHLVL: '1' },
        release: () => SandboxManager.unregisterCommandNetworkLists(commandId),
      };
    } catch (error) {
      SandboxManager.unregisterCommandNetworkLists(commandId);
      throw error;
    }
  }

  async close(): Promise<void> {
    if (this.closed || !this.holdsRuntime || !shared) return;
    this.closed = true;
    shared.users -= 1;
    if (shared.users > 0) return;
    const status = await shared.ready;
    shared = null;
    if (status.available) await SandboxManager.reset();
  }
}
