// The OS sandbox around agents' process trees, made by @anthropic-ai/sandbox-runtime
// (bubblewrap on Linux, Seatbelt on macOS). Whether it can start is found out once, when
// the installation opens; each turn's command is then wrapped with the policy of
// policy.ts. The runtimes are one pair per process (their proxies start once and serve
// every turn), so installations opened in one process share them: one for turns that
// reach only their model endpoints, one for turns that reach further, each in a small
// process of its own that also starts the sandboxed processes (runtime-host.ts).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, type Dirent, existsSync, lstatSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SandboxManager, type SandboxRuntimeConfig } from '@anthropic-ai/sandbox-runtime';
import { log } from '../log';
import { socatWithParent } from '../paths';
import { mountPointsNeeded } from './disk-facts';
import { removeStaleSandboxFiles } from './stale-files';
import { RuntimeHost, type ProcessStarter } from './runtime-host';
import { beyondMachineAllows, type SandboxPolicy } from './policy';

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

export interface WrappedCommand extends WrappedArgv {
  env: NodeJS.ProcessEnv;
}

/** What `wrapArgv` reads: the wrapped command, where and how it runs, and its policy. */
export interface WrapRequest {
  command: string;
  args: readonly string[];
  cwd: string;
  /** The agent's PATH, set inside the sandbox. */
  path: string | undefined;
  tmpDir: string;
  policy: SandboxPolicy;
  /** `unreadableOwnFolders()` when the wrap is made. */
  ownUnwritable: readonly string[];
  /**
   * The program takes the turn's token from stdin itself (a worker of Parley's): started
   * ahead, it starts at once and waits for its turn, rather than a shell waiting to start it.
   */
  readsTokenFirst?: boolean;
}

export interface WrappedArgv {
  command: string;
  args: string[];
  /** Call when the process has exited (or never started): its network allowance ends. */
  release(): void;
  /** Where the wrapped command is started: the runtime's host, not Parley's own large process. */
  starter: ProcessStarter;
}

/**
 * The wrapper's environment: the agent's, with Parley's PATH for the wrapper's own
 * programs. The sandbox adds its own variables (the proxy's) inside bubblewrap.
 */
export function wrapperEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  // SHLVL: bash reads ~/.bashrc when its stdin is a socket (Node's pipes are) and it thinks it is the first shell.
  return { ...env, PATH: process.env.PATH, SHLVL: '1' };
}

const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/**
 * What a wrap started ahead of its turn prints on stdout when it waits for the turn: its
 * relays listen and only the turn's token is missing.
 */
export const SANDBOX_READY_LINE = 'parley-sandbox-ready';

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

interface Shared {
  users: number;
  ready: Promise<SandboxStatus>;
  bwrap: string | undefined;
  /** The runtime for turns that reach only their model endpoints (and what starts every sandboxed process). */
  own: RuntimeHost | null;
  open: RuntimeHost | null;
}
let shared: Shared | null = null;

/** Wraps handed out and not released yet, in this process: the runtimes keep their mount points while any is held. */
let unreleased = 0;
let mountPointsMade = false;

/**
 * Whether a wrap made mount points (files the runtime creates to mount over missing
 * names it keeps unwritable) that may still be there: the runtime removes them only
 * once no wrap of its is held, so until then none is held longer than its turn.
 */
export const mountPointsLeft = () => mountPointsMade;

/** Counts the wrap until its release; `release` runs once. */
function held(release: () => void, makesMountPoints: boolean): () => void {
  unreleased += 1;
  if (makesMountPoints) mountPointsMade = true;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    release();
    unreleased -= 1;
    if (unreleased === 0) mountPointsMade = false;
  };
}

/**
 * The runtime's package, where its files are on disk. Packaged, it lies outside the app
 * archive (electron-builder.yml): bubblewrap runs its seccomp helper by path, Java agents
 * load its jar, and the worker imports it from there.
 */
function runtimeFiles(): { moduleUrl: string; applySeccomp?: string; javaAgentJar?: string } {
  const entry = createRequire(import.meta.url)
    .resolve('@anthropic-ai/sandbox-runtime')
    .replace(/app\.asar(?=$|[\\/])/, 'app.asar.unpacked');
  const root = path.dirname(path.dirname(entry));
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const applySeccomp = path.join(root, 'vendor', 'seccomp', arch, 'apply-seccomp');
  const javaAgentJar = path.join(root, 'vendor', 'java-proxy-agent', 'srt-proxy-agent.jar');
  return {
    moduleUrl: pathToFileURL(entry).href,
    ...(existsSync(applySeccomp) ? { applySeccomp } : {}),
    ...(existsSync(javaAgentJar) ? { javaAgentJar } : {}),
  };
}

/** Turn-independent: every turn brings its own read and write lists and its own network allowance. */
const turnNetwork = () => ({
  allowedDomains: [],
  deniedDomains: [],
  allowAllUnixSockets: true,
  allowLocalBinding: true,
});

function baseConfig(bwrapPath: string | undefined): SandboxRuntimeConfig {
  const files = runtimeFiles();
  return {
    network: turnNetwork(),
    filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
    // Before every command the runtime lists Parley's own working folder (a desktop app's is
    // often / or the home) for files to keep unwritable, down to this depth: four levels of
    // / take seconds. Agents write only in their role's folder, the turn's temporary folder
    // and their program's state, never there, so one level (its own default finds) is enough.
    mandatoryDenySearchDepth: 1,
    ...linuxStartCuts(),
    ...relaysEndWithParley(),
    ...(bwrapPath ? { bwrapPath } : {}),
    ...(files.applySeccomp ? { seccomp: { applyPath: files.applySeccomp } } : {}),
    ...(files.javaAgentJar ? { javaAgentJarPath: files.javaAgentJar } : {}),
  };
}

/**
 * What each wrap would otherwise start or look up again (docs/security.md, "What a turn's
 * start costs"). The scan: at depth 1 the runtime keeps none of what ripgrep lists — a
 * dangerous name directly in the working folder it names without listing, anything deeper
 * it drops — so `true` stands in for ripgrep and the one thing the listing still gave,
 * this user's unreadable folders there, comes from `unreadableOwnFolders`. And for the wrapper's shell,
 * dash, which the runtime supports, starts several times faster than bash and runs the
 * wrapper, bubblewrap's shell and the relays' subshells.
 */
function linuxStartCuts(): Partial<SandboxRuntimeConfig> {
  if (process.platform !== 'linux') return {};
  const noop = findOnPath('true');
  return noop ? { ripgrep: { command: noop } } : {};
}

/**
 * The runtime's relays (socat, listening on a socket in the temporary folder) outlive a
 * Parley that was killed: started through util-linux's setpriv, each gets SIGTERM when
 * the thread that started it ends, whatever ended it. Inside a turn's sandbox the same
 * path starts its two relays, which end with the sandbox in any case.
 */
function relaysEndWithParley(): Partial<SandboxRuntimeConfig> {
  if (process.platform !== 'linux' || !findOnPath('setpriv') || !existsSync(socatWithParent)) return {};
  return { socatPath: socatWithParent };
}

/** The shell the runtime starts its wrapper in (Linux: dash when there is one). */
export const wrapperShell: string | undefined =
  process.platform === 'linux' ? (findOnPath('dash') ?? undefined) : undefined;

/**
 * Parley's working folder's own folders that this user owns and cannot list, which the
 * runtime keeps unwritable (when a turn could write there) so that a command cannot give
 * back their mode and fill them: what its ripgrep scan found from ripgrep's complaints.
 */
export function unreadableOwnFolders(dir: string = process.cwd()): string[] {
  if (process.platform !== 'linux') return [];
  const found: string[] = [];
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const uid = process.getuid?.();
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const folder = path.join(dir, entry.name);
    try {
      if (lstatSync(folder).uid !== uid) continue;
    } catch {
      continue; // Gone since the read.
    }
    try {
      accessSync(folder, constants.R_OK | constants.X_OK);
    } catch {
      found.push(folder);
    }
  }
  return found;
}

/** This machine's addresses now (interfaces come and go). */
const localAddresses = () =>
  Object.values(os.networkInterfaces())
    .flat()
    .flatMap((entry) => (entry ? [entry.address] : []));

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
    const refused = namespacesRefused(bwrap);
    if (refused !== null)
      return { available: false, reason: `bubblewrap cannot make the sandbox’s namespaces here (${refused})` };
  }
  return { available: true };
}

/**
 * Whether bubblewrap may make the namespaces every wrap asks for (null: it may), else
 * its own words. A kernel or container that refuses new user namespaces — a chroot, some
 * containers, Ubuntu's AppArmor restriction — leaves bubblewrap installed but every turn
 * failing at its start; found once, at open, it is said where the sandbox's state is.
 */
function namespacesRefused(bwrap: string): string | null {
  const probe = spawnSync(bwrap, ['--unshare-user', '--unshare-net', '--unshare-pid', '--dev-bind', '/', '/', 'true'], {
    encoding: 'utf8',
    timeout: 10_000,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (probe.status === 0) return null;
  const said = (probe.stderr ?? '').split('\n').find((line) => line.trim().length > 0);
  return (said ?? probe.error?.message ?? `it exited with ${probe.status}`).trim().slice(0, 200);
}

async function startRuntimes(state: Shared, bwrapPath: string | undefined): Promise<SandboxStatus> {
  const found = precheck(bwrapPath);
  if (!found.available) return found;
  const stale = removeStaleSandboxFiles();
  if (stale.length > 0) log.info('removed what sandboxes of ended processes left in the temporary folder', { stale });
  const config = baseConfig(process.platform === 'linux' ? (bwrapPath ?? findOnPath('bwrap') ?? undefined) : bwrapPath);
  const { moduleUrl } = runtimeFiles();
  const own = new RuntimeHost(moduleUrl, null);
  const open = new RuntimeHost(moduleUrl, (host) => beyondMachineAllows(host, localAddresses()));
  state.own = own;
  state.open = open;
  // Both sets of proxies start at once, once: no turn waits for them.
  const errors = (await Promise.all([own.initialize(config), open.initialize(config)])).flat();
  if (errors.length > 0) {
    await Promise.all([own.close(), open.close()]);
    state.own = null;
    state.open = null;
    return { available: false, reason: [...new Set(errors)].join('; ') };
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
    if (!shared) {
      const state: Shared = { users: 0, ready: Promise.resolve({ available: true }), bwrap, own: null, open: null };
      state.ready = startRuntimes(state, bwrap);
      shared = state;
    }
    shared.users += 1;
    const status = await shared.ready;
    return new AgentSandbox(status, true);
  }

  get available(): boolean {
    return this.status.available;
  }

  /** Where Parley starts its agents while the sandbox runs, those it runs unsandboxed included. */
  get starter(): ProcessStarter | undefined {
    return (this.status.available && shared?.own) || undefined;
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
    const wrapped = await this.wrapArgv({
      command,
      args,
      cwd,
      path: env.PATH,
      tmpDir,
      policy,
      ownUnwritable: unreadableOwnFolders(),
    });
    return { ...wrapped, env: wrapperEnv(env) };
  }

  /**
   * The wrapped program and its arguments, which depend on nothing in the agent's
   * environment but its PATH: the rest (its token among it) is the spawn's own, so a wrap
   * made ahead of its turn serves it (wrap-ahead.ts).
   */
  async wrapArgv(request: WrapRequest, how: { startedAhead?: boolean } = {}): Promise<WrappedArgv> {
    if (!this.status.available) throw new Error('the sandbox is not available');
    const { command, args, cwd, tmpDir, policy } = request;
    const commandId = randomBytes(16).toString('base64url');
    // The wrapper (its shell, bubblewrap, socat) runs with Parley's PATH; the agent gets its
    // own back inside, set by the shell that then becomes the agent (no `env` to start).
    const own = [`TMPDIR=${quote(tmpDir)}`, ...(request.path !== undefined ? [`PATH=${quote(request.path)}`] : [])];
    // Started ahead of its turn, the shell says it is ready once the relays listen, then
    // waits for the turn's token on stdin (builtins only: nothing starts before the agent),
    // or starts a program that reads the token itself, which then waits for it.
    const awaitTurn = !how.startedAhead
      ? ''
      : request.readsTokenFirst
        ? `echo ${SANDBOX_READY_LINE}; `
        : `echo ${SANDBOX_READY_LINE}; IFS= read -r PARLEY_TOKEN || exit 70; export PARLEY_TOKEN; `;
    const inner = `${awaitTurn}unset NO_PROXY no_proxy; export ${own.join(' ')}; exec ${[command, ...args].map(quote).join(' ')}`;
    const filesystem = { ...policy.filesystem, denyWrite: [...policy.filesystem.denyWrite, ...request.ownUnwritable] };
    const config = { filesystem, network: turnNetwork() };
    const makesMountPoints = mountPointsNeeded(policy, request.ownUnwritable).length > 0;
    const starter = shared?.own;
    const runtime = policy.reach === 'endpoints' ? starter : shared?.open;
    if (!runtime || !starter) throw new Error('the sandbox is not available');
    const [program, ...rest] = await runtime.wrap(inner, cwd, config, commandId, policy.allowedDomains, wrapperShell);
    // Its release also takes its mount points (the files bubblewrap bound over denied ones) once no command uses them.
    return {
      command: program!,
      args: rest,
      starter,
      release: held(() => runtime.release(commandId), makesMountPoints),
    };
  }

  async close(): Promise<void> {
    if (this.closed || !this.holdsRuntime || !shared) return;
    this.closed = true;
    shared.users -= 1;
    if (shared.users > 0) return;
    const state = shared;
    const status = await state.ready;
    shared = null;
    if (status.available) await Promise.all([state.own?.close(), state.open?.close()]);
  }
}
