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
import type { AgentSandbox, SandboxStatus } from './sandbox';

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
}

export type SandboxedStart =
  | { kind: 'start'; command: string; args: string[]; env: NodeJS.ProcessEnv; release: () => void; warning?: string }
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

export async function sandboxedLaunch(options: TurnSandboxOptions, turn: TurnToWrap): Promise<SandboxedStart> {
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
      warning: status.available ? undefined : status.reason,
    };
  }
  // Inside, a missing program is only an exit code of the wrapper: say it as a start that failed.
  if (!resolves(turn.command, turn.env, turn.cwd))
    throw Object.assign(new Error(`spawn ${turn.command} ENOENT`), { code: 'ENOENT' });
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
  const wrapped = await options.sandbox.wrap(turn.command, turn.args, cwd, turn.env, turn.runTmp, policy);
  return { kind: 'start', ...wrapped };
}
