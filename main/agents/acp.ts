// The acp adapter: any agent that speaks the Agent Client Protocol (Claude through
// claude-agent-acp, Codex through codex-acp, Gemini CLI, Goose, …). Parley runs one
// process per turn, so the ACP client runs in a worker (acp-worker.ts) that is the turn's
// process: it starts the agent, opens or continues the session, sends the prompt, turns
// the agent's `session/update`s into live lines and its message into the turn's output,
// and answers permission requests. Stop (SIGTERM to the worker) is `session/cancel`,
// then the agent ends and the session is kept for the next turn.
//
// The worker reads an AcpTurn as JSON on stdin and writes AcpEvent JSON lines on stdout.
import path from 'node:path';
import type { McpServerStdio } from '@agentclientprotocol/sdk';
import type { PermissionPolicy } from './acp-permissions';
import { parleyLauncher, standingInstructions, turnPrompt } from './agent-prompt';
import { newFence } from './peer-words';
import { preview } from './cli-agent';
import { requireFolder } from './command';
import { agentEnv } from './environment';
import { instructionsForContinued, instructionsRecord } from './instructions-record';
import { claudeRetryEnv } from './claude-code';
import { withoutCliNotices } from './cli-notices';
import { codexRetryOptions } from './codex';
import { DEFAULT_MODEL_TIMEOUT_SEC } from './model-watch';
import { acpPermissionPolicy, acpSandboxArgs } from './trust-modes';
import type { AgentAdapter, AgentLaunch, TurnRequest } from './types';
import type { TurnTrust } from '../../shared/domain';

/** How long a stopped agent has to answer `session/cancel` before it is ended anyway. */
export const CANCEL_WAIT_MS = 1_000;

export const FRESH_SESSION_NOTICE =
  'Parley could not continue your previous session, so this is a fresh one: you do not remember earlier turns. The parley context and history tools tell you where you are and what was said with peers.';

export interface AcpTurn {
  /** The agent's program and arguments. */
  command: string;
  args: string[];
  /** The agent's command line as the role sets it (without Parley's own arguments), for messages. */
  label: string;
  cwd: string;
  /** Variables the agent must not inherit from the worker. */
  unset: string[];
  /** The session to continue, if any. */
  session: string | null;
  prompts: {
    /** For a continued session. */
    continued: string;
    /** For a new session: Parley's standing text, then the turn. */
    fresh: string;
    /** For a new session after the previous one could not be continued: the same, told so. */
    lost: string;
  };
  /** Parley's MCP server, as `session/new` takes it. */
  mcpServer: McpServerStdio;
  model: string | null;
  permissions: PermissionPolicy;
  /** The trust this turn runs under: the worker sets the agent's session mode from it. */
  trust: TurnTrust;
  /** The role's own mode, for `own` and `full`. */
  mode: string | null;
  cancelWaitMs: number;
}

export type AcpEvent =
  | { type: 'session'; session: string }
  /** The prompt went to the agent: the session has heard this turn's instructions. */
  | { type: 'prompted' }
  | { type: 'fallback'; reason: string }
  | { type: 'live'; text: string }
  /** What the agent's updates say about its model (ModelSignal). */
  | { type: 'model'; signal: 'answered' | 'waiting' }
  | { type: 'result'; output: string }
  | { type: 'error'; message: string };

/** codex-acp takes codex's `-c` overrides; other agents would refuse them. */
export const isCodexAcp = (command: readonly string[]) => path.basename(command[0] ?? '').startsWith('codex-acp');

/** The command line as people read it, for messages. */
export const commandLine = (command: readonly string[]) => command.join(' ');

export const acpAdapter: AgentAdapter = {
  prepare(request: TurnRequest): AgentLaunch {
    const agent = request.role.agent;
    if (agent.adapter !== 'acp') throw new Error('acp adapter given another adapter’s settings');
    const cwd = agent.cwd ?? request.defaultCwd;
    requireFolder(cwd, agent.cwd ? 'the role’s working folder' : 'the installation’s work folder');
    // The inherited minimum, the role's env, then the turn's PARLEY_* and PATH (docs/agents.md).
    const env = agentEnv(agent.env, request.env);
    const modelTimeoutSec = agent.modelTimeoutSec ?? DEFAULT_MODEL_TIMEOUT_SEC;
    // claude-agent-acp runs Claude Code, which reads these; other agents pass them over.
    Object.assign(env, claudeRetryEnv(env, modelTimeoutSec));
    const mcpEnv = (['PARLEY_TOKEN', 'PARLEY_API', 'PATH'] as const).flatMap((name) => {
      const value = request.env[name];
      return value !== undefined ? [{ name, value }] : [];
    });
    // ACP has no system prompt: a new session hears Parley's standing text first. The owner's
    // instructions come with the turn: in a session's first turn, and again when they change.
    const fence = newFence();
    const standing = standingInstructions(request, { cliOnPath: false, withoutOwnerInstructions: true, fence });
    const instructions = agent.instructions?.trim() ?? '';
    const record = instructionsRecord(request.defaultCwd, 'acp');
    const before = request.session === null ? null : record.read(request.session);
    const turn: AcpTurn = {
      command: agent.command[0]!,
      label: commandLine(agent.command),
      args: [
        ...agent.command.slice(1),
        // codex-acp runs Codex: its own retry settings for the provider its config.toml selects.
        ...(isCodexAcp(agent.command)
          ? [...acpSandboxArgs(request.trust, agent.sandbox), ...codexRetryOptions(env, modelTimeoutSec)]
          : []),
      ],
      cwd,
      // Parley may be Electron: it runs as Node for the worker only, not for the agent.
      unset: env.ELECTRON_RUN_AS_NODE === undefined ? ['ELECTRON_RUN_AS_NODE'] : [],
      session: request.session,
      prompts: {
        continued: turnPrompt(request, fence, { instructions: instructionsForContinued(before, instructions) }),
        fresh: `${standing}\n\n${turnPrompt(request, fence, { instructions })}`,
        lost: `${standing}\n\n${turnPrompt(request, fence, { notice: FRESH_SESSION_NOTICE, instructions })}`,
      },
      mcpServer: { name: 'parley', command: parleyLauncher(request), args: ['mcp'], env: mcpEnv },
      model: agent.model ?? null,
      permissions: acpPermissionPolicy(request.trust, agent.permissions),
      trust: request.trust,
      mode: agent.mode ?? null,
      cancelWaitMs: CANCEL_WAIT_MS,
    };
    let output: string | null = null;
    let failure: string | null = null;
    let fellBack: string | null = null;
    let session: string | null = null;
    let prompted = false;
    return {
      command: request.paths.node,
      args: [path.join(path.dirname(request.paths.scriptedAgent), 'acp-worker.js')],
      cwd,
      env: { ...env, ELECTRON_RUN_AS_NODE: '1' },
      stdin: JSON.stringify(turn),
      readsTokenFirst: true,
      // Stop reaches the worker first: it cancels the agent's session, then ends the agent.
      stopsItsChildren: true,
      // ACP agents stream their answer: a silence after the prompt, or after a tool's result, is a wait on the model.
      modelTimeout: {
        limitSec: modelTimeoutSec,
        fail: () =>
          `the agent (\`${commandLine(agent.command)}\`) could not reach its model: it did not answer for ${modelTimeoutSec} s, so Parley ended the turn. Check that the model server is running and reachable from this computer and that the agent’s key is right, then send the message again (the role’s model timeout says how long to wait).`,
      },
      onLine(line) {
        let event: AcpEvent;
        try {
          event = JSON.parse(line) as AcpEvent;
        } catch {
          return line.trim() ? { live: preview(line) } : undefined;
        }
        switch (event.type) {
          case 'session':
            session = event.session;
            return { session: event.session };
          case 'prompted':
            prompted = true;
            return { model: 'waiting' };
          case 'model':
            return { model: event.signal };
          case 'fallback':
            fellBack = event.reason;
            return { live: `Parley: could not continue the session (${event.reason}); starting a fresh one` };
          case 'live':
            return { live: event.text };
          case 'result':
            output = withoutCliNotices(event.output);
            return undefined;
          case 'error':
            failure = event.message;
            return undefined;
          default:
            return undefined;
        }
      },
      finish(result) {
        // Once the prompt was sent the session has these instructions, however the turn ended.
        if (session !== null && prompted) record.write(session, instructions);
        if (result.code === 0 && output !== null) {
          const note = fellBack
            ? `(Parley could not continue the earlier session — ${fellBack} — so this answer comes from a fresh session that does not remember earlier turns.)\n\n`
            : '';
          return { ok: true, output: note + output };
        }
        if (failure !== null) return { ok: false, error: failure };
        const detail = result.stderr.trim().split('\n').slice(-5).join('\n');
        if (result.code === null && result.signal === null) return { ok: false, error: detail };
        return {
          ok: false,
          error: `the ACP worker exited with ${result.signal ?? `code ${result.code}`}${detail ? `: ${detail}` : ''}`,
        };
      },
    };
  },
};
