// The codex adapter: `codex exec --json` on the first turn, `codex exec resume ID
// --json` after, run by the session runner so that a thread that cannot be resumed
// falls back to a fresh one. The prompt goes on stdin (`-`); `parley mcp` is given as
// an MCP server with `-c mcp_servers.parley…`, and it inherits the turn's token through
// `env_vars`, so the token never appears on a command line.
//
// Parley's standing text goes in `developer_instructions` (nothing in it is private);
// the role owner's instructions go on stdin instead, in the first turn of a thread and
// again whenever they change, since a command line is readable by every user.
//
// Codex runs its shell commands in a login shell by default, whose profile resets PATH
// (so `parley` is not found), and passes the shell either everything or nothing whose
// name holds KEY, SECRET or TOKEN depending on its version. Parley turns the login
// shell off and passes the shell the turn's environment without secrets other than
// PARLEY_TOKEN, so `parley` works from Codex's shell as documented.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parleyLauncher, standingInstructions, turnPrompt } from './agent-prompt';
import { newFence, type Fence } from './peer-words';
import { CliStream, cliTurn, preview, type CliProduct } from './cli-agent';
import { instructionsForContinued, instructionsRecord } from './instructions-record';
import {
  DEFAULT_MODEL_TIMEOUT_SEC,
  retryingLine,
  retryReason,
  unreachableSentence,
  type ModelSignal,
} from './model-watch';
import { runnerLaunch, SESSION_UUID, type RunnerPlan } from './session-runner';
import { codexModeOptions } from './trust-modes';
import type { AgentAdapter, AgentLaunch, ProcessResult, StreamUpdate, TurnOutcome, TurnRequest } from './types';

/** What Codex says when `exec resume` finds no thread to resume. */
export const CODEX_RESUME_FAILED = 'no rollout found|thread/resume failed|no (saved )?session found';

const LOGIN_FAILED =
  /not logged in|codex login|\b401\b|unauthori[sz]ed|missing bearer|invalid api key|incorrect api key/i;

export const FRESH_THREAD_NOTICE =
  'Parley could not resume your previous Codex thread (it was probably stopped before it was saved), so this is a fresh thread: you do not remember earlier turns. The parley context and history tools tell you where you are and what was said with peers.';

/** The items of `codex exec --json` Parley reads (codex-rs/exec/src/exec_events.rs). */
export interface CodexItem {
  id: string;
  type: string;
  text?: string;
  command?: string;
  exit_code?: number | null;
  status?: string;
  server?: string;
  tool?: string;
  arguments?: unknown;
  error?: { message: string } | null;
  changes?: { path: string; kind: string }[];
  query?: string;
  message?: string;
}

export type CodexEvent =
  | { type: 'thread.started'; thread_id: string }
  | { type: 'turn.started' }
  | { type: 'turn.completed'; usage?: unknown }
  | { type: 'turn.failed'; error: { message: string } }
  | { type: 'item.started' | 'item.updated' | 'item.completed'; item: CodexItem }
  | { type: 'error'; message: string };

/** Codex's progress event while it retries its model: "Reconnecting... 2/5 (why)", or "… waiting for network (why)". */
const RECONNECTING = /^Reconnecting\.*\s*(?:(\d+)\/\d+)?/i;

/** Codex's words for a model server that answers with an error it retries. */
const SERVER_FAILING = /high demand|overloaded|capacity|\b5\d\d\b/i;

/**
 * Codex's own log lines that say what it does with its model, with RUST_LOG set to let
 * them through: the turn's prompt is about to be sent, a request's response status, and
 * each event of a response's stream. `codex exec --json` prints nothing while it waits on
 * a model server that accepted the request and never answers, nor while an answer
 * streams: these tell the two apart.
 */
export const CODEX_MODEL_LOG =
  'event\\.name="codex\\.(?:conversation_starts|user_prompt|api_request|sse_event)"(?:[^\\n]*?http\\.response\\.status_code=\\d+)?';

/** RUST_LOG for Codex: errors as by default (or the role's own filter), and the log lines above. */
export function codexLogFilter(own: string | undefined): string {
  return `${own?.trim() || 'error'},codex_otel.log_only=info`;
}

/**
 * The custom model provider Codex's config.toml selects (its top-level `model_provider`,
 * defined under `[model_providers.ID]`); null for a built-in provider, whose settings
 * Codex lets nobody override.
 */
export function customProvider(config: string): string | null {
  const top = config.split(/^\s*\[/m)[0] ?? '';
  const id = /^\s*model_provider\s*=\s*["']([A-Za-z0-9_-]+)["']\s*(?:#.*)?$/m.exec(top)?.[1];
  if (!id) return null;
  return new RegExp(`^\\s*\\[model_providers\\.(?:${id}|"${id}")\\]`, 'm').test(config) ? id : null;
}

/**
 * Codex's own limits for a custom provider, so that it retries a stalled stream within
 * the role's model timeout rather than after its default five minutes of silence: a
 * third of the timeout per try and two retries, which Parley's deadline then ends.
 */
export function codexRetryOptions(env: Record<string, string>, modelTimeoutSec: number): string[] {
  const home = env.CODEX_HOME || path.join(env.HOME || os.homedir(), '.codex');
  let config: string;
  try {
    config = readFileSync(path.join(home, 'config.toml'), 'utf8');
  } catch {
    return [];
  }
  const id = customProvider(config);
  if (!id) return [];
  const provider = `model_providers.${id}`;
  return [
    '-c',
    `${provider}.stream_idle_timeout_ms=${Math.round((modelTimeoutSec * 1000) / 3)}`,
    '-c',
    `${provider}.stream_max_retries=2`,
  ];
}

/** A TOML string for a `-c key=value` override (JSON's escapes are TOML's). */
const toml = (value: string) => JSON.stringify(value);

const CODEX: CliProduct = {
  name: 'Codex',
  sessionWord: 'thread',
  program: 'codex',
  install: 'Install it (`npm install -g @openai/codex`), run `codex login` once',
};

/** Reads Codex's JSONL: the thread ID, live lines, the final agent message. */
export class CodexStream extends CliStream<CodexEvent> {
  message: string | null = null;
  completed = false;
  failure: string | null = null;
  lastError: string | null = null;
  /** Tries of the current model request that failed, and why the last did; 0 once the model answered. */
  private failedTries = 0;
  private retryWhy = '';
  /** Whether this Codex reports its model requests in its log (CODEX_MODEL_LOG). */
  private reportsRequests = false;

  constructor(session: string | null) {
    super(session, CODEX);
  }

  /** The failed turn's sentence when the model did not answer within `limitSec`. */
  unreachable(limitSec: number): string {
    return unreachableSentence('Codex', this.retryWhy || retryReason(null), limitSec, this.failedTries);
  }

  protected forgetAttempt(): void {
    this.message = null;
    this.completed = false;
    this.failure = null;
    this.lastError = null;
    this.failedTries = 0;
  }

  protected override logSignal(text: string): StreamUpdate | undefined {
    this.reportsRequests = true;
    if (text.includes('"codex.user_prompt"')) return { model: 'waiting' };
    const status = /status_code=(\d+)/.exec(text);
    // An error status is not an answer: Codex's retry event follows it.
    if (text.includes('"codex.api_request"') && !(status && Number(status[1]) < 400)) return undefined;
    if (text.includes('"codex.api_request"') || text.includes('"codex.sse_event"')) {
      this.failedTries = 0;
      return { model: 'answered' };
    }
    return undefined;
  }

  protected event(event: CodexEvent): StreamUpdate | undefined {
    switch (event.type) {
      case 'thread.started':
        this.session = event.thread_id;
        return { session: event.thread_id, live: 'Codex started' };
      case 'turn.completed':
        this.completed = true;
        return undefined;
      case 'turn.failed':
        this.failure = event.error?.message ?? 'the turn failed';
        return { live: `Codex: ${preview(this.failure)}` };
      case 'error': {
        const reconnecting = RECONNECTING.exec(event.message ?? '');
        if (reconnecting) {
          this.failedTries = Math.max(this.failedTries + 1, Number(reconnecting[1] ?? 0));
          const status = /\bstatus (\d{3})\b/.exec(event.message);
          this.retryWhy = status
            ? retryReason(Number(status[1]))
            : SERVER_FAILING.test(event.message)
              ? 'the model server fails'
              : retryReason(null);
          return { live: retryingLine(this.retryWhy, this.failedTries + 1), model: 'retrying' };
        }
        this.lastError = event.message;
        return { live: `Codex: ${preview(event.message)}` };
      }
      case 'item.started':
      case 'item.completed': {
        const update = this.item(event.item, event.type === 'item.completed');
        const signal = modelSignal(event.item, event.type === 'item.completed', this.reportsRequests);
        if (signal) this.failedTries = 0;
        return signal ? { ...update, model: signal } : update;
      }
      default:
        return undefined;
    }
  }

  private item(item: CodexItem | undefined, completed: boolean): StreamUpdate | undefined {
    if (!item) return undefined;
    switch (item.type) {
      case 'agent_message':
        if (!completed) return undefined;
        this.message = item.text ?? '';
        return { live: preview(this.message) };
      case 'reasoning':
        return completed && item.text ? { live: `thinking: ${preview(item.text, 200)}` } : undefined;
      case 'command_execution':
        return completed
          ? { live: `$ ${preview(item.command ?? '', 200)} → ${item.status ?? 'done'} (exit ${item.exit_code ?? '?'})` }
          : { live: `$ ${preview(item.command ?? '', 200)}` };
      case 'mcp_tool_call': {
        const name = `${item.server ?? '?'}.${item.tool ?? '?'}`;
        if (!completed) return { live: `→ ${name} ${preview(JSON.stringify(item.arguments ?? {}), 200)}` };
        return {
          live: item.error
            ? `← ${name} failed: ${preview(item.error.message, 200)}`
            : `← ${name} ${item.status ?? ''}`.trim(),
        };
      }
      case 'file_change':
        return completed
          ? { live: `changed ${(item.changes ?? []).map((change) => `${change.kind} ${change.path}`).join(', ')}` }
          : undefined;
      case 'web_search':
        return completed ? { live: `searched: ${preview(item.query ?? '', 200)}` } : undefined;
      case 'error':
        return { live: `Codex: ${preview(item.message ?? '')}` };
      default:
        return undefined;
    }
  }

  finish(process: ProcessResult, command: string, commandIsSetting: boolean): TurnOutcome {
    const notStarted = this.notStarted(command, commandIsSetting);
    if (notStarted) return { ok: false, error: notStarted };
    const after = this.fellBack ? ' (after the earlier thread could not be resumed)' : '';
    if (!this.failure && (this.completed || (process.code === 0 && this.message !== null))) {
      const output = this.message ?? '';
      const note = this.fellBack
        ? `(Parley could not resume the earlier Codex thread — ${this.fellBack} — so this answer comes from a fresh thread that does not remember earlier turns.)\n\n`
        : '';
      return { ok: true, output: note + output, session: this.session };
    }
    let message = this.failure ?? this.lastError;
    if (!message) {
      if (process.signal) message = `it was ended by ${process.signal}`;
      else {
        const lines = process.stderr.trim().split('\n');
        message =
          lines.find((line) => /^error:/i.test(line))?.replace(/^error:\s*/i, '') ??
          (lines.slice(-5).join('\n') || `it exited with code ${process.code} without finishing the turn`);
      }
    }
    if (LOGIN_FAILED.test(message))
      return {
        ok: false,
        error: `Codex is not logged in here, or its key was refused (“${message}”). Run \`codex login\` once in a terminal on this computer (or set OPENAI_API_KEY in the role’s environment), then send the message again.${after}`,
      };
    if (this.failedTries > 0)
      return {
        ok: false,
        error: `Codex could not reach its model: ${this.retryWhy} after ${this.failedTries + 1} tries (it said: “${preview(message, 300)}”). Check that the model server is running and reachable from this computer, then send the message again.${after}`,
      };
    return { ok: false, error: `Codex failed: ${message}${after}` };
  }
}

/**
 * What an item says about the model: it answered (a message, reasoning, a tool call). A
 * tool's end sends its result to the model at once, so Codex waits on the model from
 * there, when its log reports the answer (CODEX_MODEL_LOG); without that log a silence
 * is no sign that the model is unreachable, and a retry counts from the tool's end.
 */
export function modelSignal(
  item: CodexItem | undefined,
  completed: boolean,
  reportsRequests: boolean,
): ModelSignal | undefined {
  if (!item) return undefined;
  switch (item.type) {
    case 'agent_message':
    case 'reasoning':
      return 'answered';
    case 'command_execution':
    case 'mcp_tool_call':
    case 'file_change':
    case 'web_search':
      return completed && reportsRequests ? 'waiting' : 'answered';
    default:
      // Codex's own notices (an `error` item about model metadata, say) are not the model.
      return undefined;
  }
}

/** Names Codex would keep from its shell commands by default, and Parley keeps from them too (but PARLEY_TOKEN). */
const SECRET_NAME = /KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL/i;

/** The `-c` overrides and flags every Codex turn gets; `env` is the environment Codex is started with. */
export function codexOptions(
  request: TurnRequest,
  env: Record<string, string> = request.env,
  fence: Fence = newFence(),
): string[] {
  const agent = request.role.agent;
  if (agent.adapter !== 'codex') throw new Error('codex adapter given another adapter’s settings');
  const options = ['--json', '--skip-git-repo-check'];
  if (agent.model) options.push('--model', agent.model);
  options.push(...codexRetryOptions(env, agent.modelTimeoutSec ?? DEFAULT_MODEL_TIMEOUT_SEC));
  // `exec resume` has no --sandbox flag: the config keys work for both.
  options.push(...codexModeOptions(request.trust, agent.sandbox));
  const secrets = Object.keys(env)
    .filter((name) => SECRET_NAME.test(name) && name !== 'PARLEY_TOKEN')
    .sort();
  options.push(
    '-c',
    `developer_instructions=${toml(standingInstructions(request, { cliOnPath: true, withoutOwnerInstructions: true, fence }))}`,
    // Shell commands see the turn's PATH (with `parley`) and PARLEY_TOKEN, and no other secret.
    '-c',
    'allow_login_shell=false',
    '-c',
    'shell_environment_policy.ignore_default_excludes=true',
    '-c',
    `shell_environment_policy.exclude=[${secrets.map(toml).join(',')}]`,
    '-c',
    `mcp_servers.parley.command=${toml(parleyLauncher(request))}`,
    '-c',
    'mcp_servers.parley.args=["mcp"]',
    // The server inherits these from Codex's environment; their values stay off the command line.
    '-c',
    'mcp_servers.parley.env_vars=["PARLEY_TOKEN","PARLEY_API"]',
    // The parley tools are how this agent acts in Parley: no approval prompt (there is no one to ask).
    '-c',
    'mcp_servers.parley.default_tools_approval_mode="approve"',
    // Wait for it however slowly it starts: Codex leaves out an optional server not ready after a short grace.
    '-c',
    'mcp_servers.parley.required=true',
  );
  return options;
}

export const codexAdapter: AgentAdapter = {
  prepare(request): AgentLaunch {
    const agent = request.role.agent;
    if (agent.adapter !== 'codex') throw new Error('codex adapter given another adapter’s settings');
    const turn = cliTurn(request, agent, 'codex');
    const { command, cwd } = turn;
    const env = { ...turn.env, RUST_LOG: codexLogFilter(turn.env.RUST_LOG) };
    // One fence for the turn: the developer instructions' peer directory and the prompt's peer texts.
    const fence = newFence();
    const options = codexOptions(request, env, fence);
    const instructions = agent.instructions?.trim() ?? '';
    const record = instructionsRecord(request.defaultCwd, 'codex');
    const attempts: RunnerPlan['attempts'] = [];
    if (request.session && SESSION_UUID.test(request.session)) {
      // A thread remembers what it was told: the instructions again only when they changed.
      attempts.push(
        {
          args: ['exec', 'resume', ...options, request.session, '-'],
          stdin: turnPrompt(request, fence, {
            instructions: instructionsForContinued(record.read(request.session), instructions),
          }),
        },
        {
          args: ['exec', ...options, '-'],
          stdin: turnPrompt(request, fence, { notice: FRESH_THREAD_NOTICE, instructions }),
        },
      );
    } else {
      // No thread yet, or a session another adapter made: start a thread of our own.
      attempts.push({ args: ['exec', ...options, '-'], stdin: turnPrompt(request, fence, { instructions }) });
    }
    const plan: RunnerPlan = {
      command,
      attempts,
      retryWhen: CODEX_RESUME_FAILED,
      cleanup: [],
      unset: [],
      signals: CODEX_MODEL_LOG,
    };
    const stream = new CodexStream(request.session);
    const modelTimeoutSec = agent.modelTimeoutSec ?? DEFAULT_MODEL_TIMEOUT_SEC;
    return {
      ...runnerLaunch(request, plan, cwd, env),
      onLine: (line) => stream.line(line),
      modelTimeout: { limitSec: modelTimeoutSec, fail: () => stream.unreachable(modelTimeoutSec) },
      finish(result) {
        const outcome = stream.finish(result, command, agent.command !== undefined);
        if (stream.session && SESSION_UUID.test(stream.session)) record.write(stream.session, instructions);
        return outcome;
      },
    };
  },
};
