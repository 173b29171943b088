// Starting an agent: the environment every agent gets, the start in its sandbox or,
// without one, as it is, and why a start failed, in words for people.
import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import type { Role, TurnTrust } from '../../shared/domain';
import type { AgentContext, AgentLaunch, ProcessResult } from '../agents/types';
import {
  sandboxedLaunch,
  type AheadWrap,
  type SandboxedStart,
  type TurnSandboxOptions,
  type TurnToWrap,
} from '../sandbox/turn-sandbox';

/** The turn as the sandbox wraps it: its program, folder and level, and its temporary folder. */
export function turnToWrap(
  role: Role,
  trust: TurnTrust,
  context: AgentContext | null,
  launch: AgentLaunch,
  runTmp: string,
): TurnToWrap {
  return {
    adapter: role.agent.adapter,
    baseUrl: 'baseUrl' in role.agent ? role.agent.baseUrl : undefined,
    trust,
    context,
    command: launch.command,
    args: launch.args,
    cwd: launch.cwd,
    env: launch.env,
    runTmp,
    readsTokenFirst: launch.readsTokenFirst === true,
  };
}

/**
 * How the turn's agent starts: in the sandbox when there is one (with `ahead`, the wrap
 * made when the run's last turn ended, if it serves in the process started with it:
 * `startedFits`), or as it is; never rejects.
 */
export function startOf(
  sandbox: TurnSandboxOptions | undefined,
  turn: TurnToWrap,
  ahead: AheadWrap | undefined,
  startedFits?: (env: NodeJS.ProcessEnv) => Promise<boolean>,
): Promise<SandboxedStart> {
  if (!sandbox)
    return Promise.resolve({
      kind: 'start',
      command: turn.command,
      args: turn.args,
      env: { ...turn.env, TMPDIR: turn.runTmp },
      release: () => {},
    });
  return sandboxedLaunch(sandbox, turn, ahead, startedFits).catch((error: unknown) => ({
    kind: 'refused' as const,
    // Out of descriptors or processes: the same words as a start without the sandbox.
    reason: (error as NodeJS.ErrnoException).code
      ? startFailure(turn.command, error)
      : (descriptorsExhausted(turn.command) ??
        `Parley could not start the agent in its sandbox: ${(error as Error).message}`),
  }));
}

/** The sandbox's own start-up says little when no descriptor is left ("bash not found"): this says why. */
export function descriptorsExhausted(command: string): string | null {
  try {
    closeSync(openSync('/dev/null', 'r'));
    return null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EMFILE' || (error as NodeJS.ErrnoException).code === 'ENFILE'
      ? startFailure(command, error)
      : null;
  }
}

export function notStartedResult(reason: string): ProcessResult {
  return { code: null, signal: null, stdout: '', stderr: reason, truncated: false, notStarted: reason };
}

/** Why an agent could not be started, in words for people. */
export function startFailure(command: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const message = (error as Error).message ?? String(error);
  switch (code) {
    case 'ENOENT':
      return `could not start \`${command}\`: no such program (is it installed and on PATH?)`;
    case 'EACCES':
      return `could not start \`${command}\`: permission denied (is it executable?)`;
    case 'EMFILE':
    case 'ENFILE':
      return `could not start \`${command}\`: too many open files (${code}); Parley has run out of file descriptors — fewer agents at once (maxConcurrentTurns) or a higher open-files limit (ulimit -n) helps`;
    case 'EAGAIN':
      return `could not start \`${command}\`: the system refused to start another process (EAGAIN); try again when fewer processes run`;
    case 'ERR_INVALID_ARG_VALUE':
    case 'ERR_INVALID_ARG_TYPE':
      return `could not start \`${command}\`: ${message.replace(/^The argument '([^']+)'/, 'its $1')} (check the command and environment in the role’s settings)`;
    default:
      return `could not start \`${command}\`: ${message}`;
  }
}

export function agentEnvironment(binDir: string, socketPath: string): Record<string, string> {
  return {
    PARLEY_API: socketPath,
    PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}`,
  };
}
