// The command adapter: any program, run without a shell. It reads the turn on stdin
// (as text, or as JSON with `input: "json"`) and its stdout is the turn's output.
//
// - Arguments are an array handed to the program as they are: no shell ever sees
//   them, so `$HOME`, `;`, `*` and quotes mean nothing special (spawn without
//   `shell`, in the run manager's spawnInGroup).
// - It works in the role's `cwd`, or the installation's work folder; a folder that
//   does not exist fails the turn with a message saying so.
// - Its environment is the inherited minimum, the role's `env`, then Parley's
//   PARLEY_* and PATH (./environment.ts).
// - Its stdout is capped by the run manager; an output that was cut says so.
import { statSync } from 'node:fs';
import { agentEnv } from './environment';
import type { AgentAdapter, AgentContext, AgentInput, AgentLaunch, PeerDirectoryEntry } from './types';
import { hasPeerText, inputsAsText } from './types';
import { cleanDescription, fenceNotice, newFence } from './peer-words';
import { turnPeople } from './agent-prompt';

/** What a command reads on stdin with `input: "json"`. */
export interface CommandTurn {
  session: string | null;
  role: string;
  instructions: string | null;
  context: AgentContext;
  /** Whom the role can ask (what `parley peers` says). */
  peers: PeerDirectoryEntry[];
  inputs: AgentInput[];
}

/** Throws a message for people when the folder cannot be worked in. */
export function requireFolder(folder: string, what: string): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(folder).isDirectory();
  } catch {
    throw new Error(`${what} ${folder} does not exist: create it, or change the folder in the role's settings`);
  }
  if (!isDirectory) throw new Error(`${what} ${folder} is not a folder: change it in the role's settings`);
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}

export const commandAdapter: AgentAdapter = {
  prepare(request): AgentLaunch {
    const agent = request.role.agent;
    if (agent.adapter !== 'command') throw new Error('command adapter given another adapter’s settings');
    const [command, ...args] = agent.command as [string, ...string[]];
    const cwd = agent.cwd ?? request.defaultCwd;
    requireFolder(cwd, agent.cwd ? 'the role’s working folder' : 'the installation’s work folder');
    const turn: CommandTurn = {
      session: request.session,
      role: request.role.name,
      instructions: agent.instructions ?? null,
      context: request.context,
      peers: request.peers.map((entry) => ({
        ...entry,
        roles: entry.roles.map((role) => ({ ...role, description: cleanDescription(role.description) })),
      })),
      inputs: request.inputs,
    };
    // As text, a peer's words come fenced, and the first line says which fence this turn draws.
    const fence = newFence();
    const stdin =
      agent.input === 'json'
        ? JSON.stringify(turn)
        : (hasPeerText(request.inputs) ? fenceNotice(fence) + '\n\n' : '') +
          inputsAsText(request.inputs, fence, turnPeople(request)) +
          '\n';
    return {
      command,
      args,
      cwd,
      env: agentEnv(agent.env, request.env),
      stdin,
      onLine: (line) => ({ live: line }),
      finish(result) {
        if (result.code === 0) {
          const cut = result.truncated
            ? `\n\n[Parley cut this output: \`${command}\` printed more than ${formatBytes(Buffer.byteLength(result.stdout))}; only the beginning is kept]`
            : '';
          return { ok: true, output: result.stdout.trim() + cut };
        }
        const detail = result.stderr.trim().split('\n').slice(-5).join('\n');
        // The run manager puts why it could not start in stderr.
        if (result.code === null && result.signal === null) return { ok: false, error: detail };
        const how = result.signal ? `was ended by ${result.signal}` : `exited with code ${result.code}`;
        return { ok: false, error: `\`${command}\` ${how}${detail ? `: ${detail}` : ''}` };
      },
    };
  },
};
