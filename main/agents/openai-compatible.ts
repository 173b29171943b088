// The openai-compatible adapter: a chat-completions endpoint (Ollama, LM Studio, vLLM,
// OpenAI) behind a role. Each turn runs Parley's worker (openai-worker.ts) as a real
// process in the turn's process group, so Stop ends it like any agent. The worker
// streams the answer, executes the five role tools (context, report, history, send,
// reply) as function calls against the role API, and keeps the conversation's message
// history in a private file whose name is the run's session reference.
//
// The API key travels to the worker on stdin only (never argv, never env) and is
// scrubbed from everything that comes back: output, errors, stderr.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { agentEnv } from './environment';
import { peerDirectory, turnPeople } from './agent-prompt';
import { FENCE_RULE, fenceNotice, newFence, type Fence } from './peer-words';
import type { AgentAdapter, AgentContext, AgentLaunch, PeerDirectoryEntry, TurnRequest } from './types';
import { hasPeerText, inputsAsText } from './types';

/** Tool-call rounds per turn when the role sets no `maxSteps`. */
export const DEFAULT_MAX_STEPS = 10;
/** How much history (in characters) is sent to the model; older turns are left out. */
export const HISTORY_BUDGET_CHARS = 200_000;
/** How long the server may take to start answering when the role sets no `requestTimeoutSec`: a local model may be loading. */
export const DEFAULT_REQUEST_TIMEOUT_SEC = 300;
/** How long a streamed answer may pause when the role sets no `idleTimeoutSec`. */
export const DEFAULT_IDLE_TIMEOUT_SEC = 120;

/** What the worker reads on stdin. */
export interface OpenAiTurn {
  baseUrl: string;
  model: string;
  apiKey: string | null;
  temperature: number | null;
  maxSteps: number;
  /** Role instructions and where the agent is; sent first, never stored in the history. */
  system: string;
  /** This turn's inputs as one user message. */
  prompt: string;
  session: string;
  sessionFile: string;
  historyBudgetChars: number;
  /** Until the server starts answering (its status line and headers). */
  requestTimeoutMs: number;
  /** Between two pieces of a streamed answer. */
  idleTimeoutMs: number;
}

/** One JSON object per stdout line. */
export type OpenAiEvent =
  | { type: 'session'; session: string }
  | { type: 'live'; text: string }
  | { type: 'result'; output: string }
  | { type: 'error'; message: string };

const SESSION = /^oai-[0-9a-f]{32}$/;

/**
 * The folder of session histories, in the installation's data folder: `sessions`, beside
 * `turns` (the turn's private folder is one of `turns`).
 */
export function sessionsFolder(privateDir: string): string {
  return path.join(path.dirname(path.dirname(path.resolve(privateDir))), 'sessions');
}

export function sessionFile(privateDir: string, session: string): string {
  if (!SESSION.test(session)) throw new Error(`not an openai-compatible session: ${session}`);
  return path.join(sessionsFolder(privateDir), `${session}.json`);
}

/** Replaces every occurrence of the secret (and its Bearer form) with a mask. */
export function scrub(text: string, secret: string | null | undefined): string {
  if (!secret) return text;
  return text.split(secret).join('[api key]');
}

/**
 * Instructions first, then where the agent is, how its words reach people and what
 * fenced text is; last, after every instruction, whom it can ask, as fenced data.
 */
export function systemPrompt(
  context: AgentContext,
  instructions: string | undefined,
  peers: readonly PeerDirectoryEntry[],
  fence: Fence,
): string {
  const parts: string[] = [];
  if (instructions?.trim()) parts.push(instructions.trim());
  const where = [
    `${context.summary} You work inside Parley, which connects you with people and with the agents of other installations.`,
    `This turn answers for ${context.root.summary}.`,
    context.reporting,
  ];
  if (context.kind === 'thread')
    where.push(
      context.peerStarted
        ? `${context.peer ?? 'A peer'} started this agent conversation: \`reply\` sends your answer back to it; a final answer given without replying is sent as your reply.`
        : 'An answer came back in an agent conversation you started: pass on what matters with `report`.',
    );
  where.push(
    'Tools: `context` (where you are, as JSON), `peers` (whom you can ask), `report` (post to the root now), `send` (a text to PEER/ROLE on a connected installation), `reply` (answer in this agent conversation), `history` (everything between you and PEER/ROLE).',
    'Your answer without tool calls ends the turn and is your final output.',
  );
  parts.push(where.join('\n'));
  parts.push(FENCE_RULE);
  parts.push(peerDirectory(peers, fence));
  return parts.join('\n\n');
}

export const openAiCompatibleAdapter: AgentAdapter = {
  prepare(request: TurnRequest): AgentLaunch {
    const agent = request.role.agent;
    if (agent.adapter !== 'openai-compatible')
      throw new Error('openai-compatible adapter given another adapter’s settings');
    const folder = sessionsFolder(request.privateDir);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    // A session of another adapter (the role's adapter changed), or one whose history is gone, starts afresh.
    const previous = request.session;
    const continues =
      previous !== null && SESSION.test(previous) && existsSync(sessionFile(request.privateDir, previous));
    const session = continues ? previous : `oai-${randomBytes(16).toString('hex')}`;
    const apiKey = agent.apiKey ?? null;
    const fence = newFence();
    const turn: OpenAiTurn = {
      baseUrl: agent.baseUrl,
      model: agent.model,
      apiKey,
      temperature: agent.temperature ?? null,
      maxSteps: agent.maxSteps ?? DEFAULT_MAX_STEPS,
      system: systemPrompt(request.context, agent.instructions, request.peers, fence),
      prompt:
        (hasPeerText(request.inputs) ? fenceNotice(fence) + '\n\n' : '') +
        inputsAsText(request.inputs, fence, turnPeople(request)),
      session,
      sessionFile: sessionFile(request.privateDir, session),
      historyBudgetChars: HISTORY_BUDGET_CHARS,
      requestTimeoutMs: (agent.requestTimeoutSec ?? DEFAULT_REQUEST_TIMEOUT_SEC) * 1000,
      idleTimeoutMs: (agent.idleTimeoutSec ?? DEFAULT_IDLE_TIMEOUT_SEC) * 1000,
    };
    let output: string | null = null;
    let failure: string | null = null;
    const clean = (text: string) => scrub(text, apiKey);
    return {
      command: request.paths.node,
      args: [path.join(path.dirname(request.paths.scriptedAgent), 'openai-worker.js')],
      cwd: request.defaultCwd,
      env: { ...agentEnv(undefined, request.env), ELECTRON_RUN_AS_NODE: '1' },
      stdin: JSON.stringify(turn),
      readsTokenFirst: true,
      onLine(line) {
        let event: OpenAiEvent;
        try {
          event = JSON.parse(line) as OpenAiEvent;
        } catch {
          return { live: clean(line) };
        }
        if (event.type === 'session') return { session: event.session };
        if (event.type === 'live') return { live: clean(event.text) };
        if (event.type === 'result') output = clean(event.output);
        if (event.type === 'error') failure = clean(event.message);
        return undefined;
      },
      finish(result) {
        if (result.code === 0 && output !== null) return { ok: true, output, session };
        if (failure !== null) return { ok: false, error: failure };
        const detail = clean(result.stderr.trim().split('\n').slice(-5).join('\n'));
        if (result.code === null && result.signal === null) return { ok: false, error: detail };
        return {
          ok: false,
          error: `the openai-compatible worker exited with ${result.signal ?? `code ${result.code}`}${detail ? `: ${detail}` : ''}`,
        };
      },
    };
  },
};
