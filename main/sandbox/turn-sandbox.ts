// How a turn's agent is started with respect to the sandbox: inside it, without it (the
// person's own runs where it cannot start, with a warning), or not at all (a run working
// for a peer where it cannot start and no owner allowed that). The choice is a pure
// function; `sandboxedLaunch` applies it.
import { accessSync, constants, readFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AdapterName, TurnTrust } from '../../shared/domain';
import type { AgentContext } from '../agents/types';
import { agentConfigDirs, codexConfigEndpoints, defaultModelHosts, modelEndpoints, sandboxPolicy } from './policy';
import { diskFacts, mountPointsNeeded, pathsTheWrapReads } from './disk-facts';
import {
  unreadableOwnFolders,
  wrapperEnv,
  type AgentSandbox,
  type SandboxStatus,
  type WrappedArgv,
  type WrapRequest,
} from './sandbox';
import type { ProcessStarter } from './runtime-host';
import { mayServe, mayWrapAhead, type WrapInputs } from './wrap-ahead';

export type SandboxChoice = 'sandbox' | 'unsandboxed' | 'refuse';

/** Inside the sandbox whenever it runs; otherwise only the person's own runs, or a peer's an owner allowed. */
export function sandboxChoice(status: SandboxStatus, trust: TurnTrust, unsandboxedAllowed: boolean): SandboxChoice {
  if (status.available) return 'sandbox';
  if (status.turnedOff || trust === 'own' || unsandboxedAllowed) return 'unsandboxed';
  return 'refuse';
}

/** The sentence a refused run ends with. */
export function refusal(status: SandboxStatus, peer: string | undefined): string {
  const why = status.available ? '' : ` (${status.reason})`;
  return (
    `Parley cannot start the agents’ sandbox on this computer${why}, and a run working for ` +
    `${peer ?? 'another installation'} starts only inside it. An owner can allow this connection to run ` +
    'without a sandbox in Settings.'
  );
}

export interface TurnSandboxOptions {
  sandbox: AgentSandbox;
  dataDir: string;
  roleApiSocket: string;
  /** What the `parley` launcher needs to read: its folder, Node, Parley's code. */
  launcher: string[];
  /** Every role's working folder. */
  roleFolders(): string[];
  /** Whether an owner allowed the connection this run works for to run without a sandbox. */
  unsandboxedAllowed(context: AgentContext | null): boolean;
}

export interface TurnToWrap {
  adapter: AdapterName;
  baseUrl: string | undefined;
  trust: TurnTrust;
  context: AgentContext | null;
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  runTmp: string;
  /** `AgentLaunch.readsTokenFirst`. */
  readsTokenFirst: boolean;
}

export type SandboxedStart =
  | {
      kind: 'start';
      command: string;
      args: string[];
      env: NodeJS.ProcessEnv;
      release: () => void;
      /** Where it starts when not in Parley's own process (the sandbox's host). */
      starter?: ProcessStarter;
      warning?: string;
      /** Inside the sandbox: its next turn may be wrapped ahead. */
      sandboxed?: true;
      /** The wrap made ahead serves, in the process started with it (its stdin waits for the token). */
      startedAhead?: true;
    }
  | { kind: 'refused'; reason: string };

/** The program's install folder, found through PATH and symlinks (`.bin/claude` → its package). */
function programDirs(command: string, env: NodeJS.ProcessEnv): string[] {
  const dirs = [path.dirname(path.dirname(process.execPath))];
  const candidates = path.isAbsolute(command)
    ? [command]
    : (env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, command));
  for (const candidate of candidates) {
    try {
      const real = realpathSync(candidate);
      const modules = real.lastIndexOf(`${path.sep}node_modules${path.sep}`);
      dirs.push(modules >= 0 ? real.slice(0, modules + '/node_modules'.length) : path.dirname(real));
      break;
    } catch {
      // Not there.
    }
  }
  return dirs;
}

function resolves(command: string, env: NodeJS.ProcessEnv, cwd: string): boolean {
  const candidates = command.includes(path.sep)
    ? [path.resolve(cwd, command)]
    : (env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, command));
  return candidates.some((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Where the agent's own configuration says its model is: Codex's providers in its config.toml. */
function configuredEndpoints(adapter: string, env: NodeJS.ProcessEnv, home: string): string[] {
  if (adapter !== 'codex' && adapter !== 'acp') return [];
  try {
    return codexConfigEndpoints(
      readFileSync(path.join(env.CODEX_HOME || path.join(home, '.codex'), 'config.toml'), 'utf8'),
    );
  } catch {
    return [];
  }
}

/** The wrap a turn needs: its command and where it runs, and its policy, computed now. */
function wrapRequest(options: TurnSandboxOptions, turn: TurnToWrap): WrapRequest {
  const home = turn.env.HOME || os.homedir();
  const cwd = path.resolve(turn.cwd);
  const policy = sandboxPolicy({
    trust: turn.trust,
    dataDir: options.dataDir,
    roleFolder: cwd,
    otherRoleFolders: options.roleFolders().filter((folder) => path.resolve(folder) !== cwd),
    runTmp: turn.runTmp,
    roleApiSocket: options.roleApiSocket,
    launcher: options.launcher,
    modelEndpoints: modelEndpoints(
      turn.adapter,
      turn.baseUrl,
      turn.env,
      configuredEndpoints(turn.adapter, turn.env, home),
    ),
    programHosts: defaultModelHosts[turn.adapter] ?? [],
    // Parley's own worker keeps the histories of openai-compatible sessions in the data folder.
    agentConfig: [
      ...agentConfigDirs(turn.adapter, turn.env, home),
      ...(turn.adapter === 'openai-compatible' ? [path.join(options.dataDir, 'sessions')] : []),
    ],
    programDirs: programDirs(turn.command, turn.env),
    home,
  });
  return {
    command: turn.command,
    args: turn.args,
    cwd,
    path: turn.env.PATH,
    tmpDir: turn.runTmp,
    policy,
    ownUnwritable: unreadableOwnFolders(),
    readsTokenFirst: turn.readsTokenFirst,
  };
}

/** The request with what the disk says about it now. */
function inputsOf(request: WrapRequest): WrapInputs {
  return {
    ...request,
    workingDir: process.cwd(),
    disk: diskFacts(pathsTheWrapReads(request.policy, request.ownUnwritable)),
    mountPoints: mountPointsNeeded(request.policy, request.ownUnwritable),
  };
}

/** A wrap made for a turn that has not started yet (wrap-ahead.ts). */
export interface AheadWrap {
  /** The turn's temporary folder, the one the wrap names. */
  tmpDir: string;
  inputs: WrapInputs;
  /** Null when it could not be made, or the disk changed while it was. */
  wrapped: Promise<WrappedArgv | null>;
  /** Ends its network allowance, once it is made. */
  release(): Promise<void>;
}

/**
 * Wraps the turn ahead of its start, or says why not (null): the sandbox does not run,
 * the program is gone, or the wrap would leave files behind (`mayWrapAhead`). The wrap is
 * one to start ahead too: its shell waits on stdin for the turn's token.
 */
export function wrapAhead(options: TurnSandboxOptions, turn: TurnToWrap): AheadWrap | null {
  if (!options.sandbox.available || !resolves(turn.command, turn.env, turn.cwd)) return null;
  const request = wrapRequest(options, turn);
  const inputs = inputsOf(request);
  if (!mayWrapAhead(inputs)) return null;
  const wrapped = options.sandbox.wrapArgv(request, { startedAhead: true }).then(
    (made) => {
      // The disk moved under the wrap: what it found may be of either moment.
      if (diskFacts(pathsTheWrapReads(request.policy, request.ownUnwritable)) === inputs.disk) return made;
      made.release();
      return null;
    },
    () => null,
  );
  return { tmpDir: turn.runTmp, inputs, wrapped, release: () => wrapped.then((made) => made?.release()) };
}

/**
 * How the turn starts. `ahead`, the run's wrap made when its previous turn ended, serves
 * when it is the one this turn's inputs would make now and the process started with it
 * waits for a turn with this environment (`startedFits`); otherwise it is released and
 * the turn wrapped here. Its folder is the turn's `runTmp` either way.
 */
export async function sandboxedLaunch(
  options: TurnSandboxOptions,
  turn: TurnToWrap,
  ahead?: AheadWrap,
  startedFits: (env: NodeJS.ProcessEnv) => Promise<boolean> = () => Promise.resolve(false),
): Promise<SandboxedStart> {
  let aheadUsed = false;
  try {
    const status = options.sandbox.status;
    const choice = sandboxChoice(status, turn.trust, options.unsandboxedAllowed(turn.context));
    if (choice === 'refuse') return { kind: 'refused', reason: refusal(status, turn.context?.peer) };
    if (choice === 'unsandboxed') {
      return {
        kind: 'start',
        command: turn.command,
        args: turn.args,
        env: { ...turn.env, TMPDIR: turn.runTmp },
        release: () => {},
        starter: options.sandbox.starter,
        warning: status.available ? undefined : status.reason,
      };
    }
    // Inside, a missing program is only an exit code of the wrapper: say it as a start that failed.
    if (!resolves(turn.command, turn.env, turn.cwd))
      throw Object.assign(new Error(`spawn ${turn.command} ENOENT`), { code: 'ENOENT' });
    const request = wrapRequest(options, turn);
    if (ahead && mayServe(ahead.inputs, inputsOf(request))) {
      const made = await ahead.wrapped;
      if (made && (await startedFits(turn.env))) {
        aheadUsed = true;
        return { kind: 'start', ...made, sandboxed: true, startedAhead: true, env: wrapperEnv(turn.env) };
      }
    }
    const wrapped = await options.sandbox.wrapArgv(request);
    return { kind: 'start', ...wrapped, sandboxed: true, env: wrapperEnv(turn.env) };
  } finally {
    if (ahead && !aheadUsed) void ahead.release();
  }
}
