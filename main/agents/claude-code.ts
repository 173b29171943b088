// The claude-code adapter: one `claude -p --output-format stream-json --verbose` per
// turn, run by the session runner so that a session that cannot be resumed falls back
// to a fresh one. The prompt goes on stdin; Parley's standing text and the role's
// instructions are appended to Claude Code's system prompt from a file (a command
// line is readable by every user of the machine); `parley mcp` is its only way to act
// in Parley, through a per-turn MCP config. Both files live in a private folder of
// the data folder that goes with the turn.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parleyLauncher, standingInstructions, turnPrompt } from './agent-prompt';
import { newFence, type Fence } from './peer-words';
import { CliStream, cliTurn, preview, type CliProduct } from './cli-agent';
import { DEFAULT_MODEL_TIMEOUT_SEC, retryingLine, retryReason, unreachableSentence } from './model-watch';
import { withoutCliNotices } from './cli-notices';
import { runnerLaunch, SESSION_UUID, type RunnerPlan } from './session-runner';
import { claudeCodeModeArgs, PERMISSION_TOOL_VARIABLE } from './trust-modes';
import type { AgentAdapter, AgentLaunch, ProcessResult, StreamUpdate, TurnOutcome, TurnRequest } from './types';

/** What Claude Code says when `--resume` finds nothing to resume. */
export const CLAUDE_RESUME_FAILED = 'No conversation found with session ID';

/** Claude Code's words for a refused key in its `api_retry` events. */
const KEY_REFUSED = /authentication|unauthori[sz]ed|invalid.*key/i;

/** What a failed login or a refused key looks like. */
const LOGIN_FAILED =
  /not logged in|please run \/login|invalid api key|authentication_failed|oauth token (has )?expired|invalid x-api-key|\b401\b|unauthori[sz]ed/i;

const LOG_IN =
  'Run `claude` once in a terminal on this computer and log in (or set ANTHROPIC_API_KEY in the role’s environment), then send the message again.';

export const FRESH_SESSION_NOTICE =
  'Parley could not resume your previous Claude Code session (it was probably stopped before it was saved), so this is a fresh session: you do not remember earlier turns. The context and history tools tell you where you are and what was said with peers.';

/** The stream-json events Parley reads; everything else is passed over. */
export type ClaudeEvent =
  | { type: 'system'; subtype: 'init'; session_id: string; model?: string; permissionMode?: string }
  | {
      type: 'system';
      subtype: 'api_retry';
      attempt?: number;
      max_retries?: number;
      error?: string;
      error_status?: number | null;
    }
  | { type: 'system'; subtype: string }
  | { type: 'assistant'; message: { content: ClaudeContent[]; model?: string }; error?: string }
  | { type: 'user'; message: { content: ClaudeContent[] | string } }
  | {
      type: 'result';
      subtype: string;
      is_error: boolean;
      result?: string;
      errors?: string[];
      session_id?: string;
    };

type ClaudeContent =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; name: string; input?: unknown }
  | { type: 'tool_result'; content?: unknown; is_error?: boolean }
  | { type: string };

function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part: { type?: string; text?: string }) => (part?.type === 'text' ? (part.text ?? '') : ''))
      .join(' ');
  return '';
}

const CLAUDE_CODE: CliProduct = {
  name: 'Claude Code',
  sessionWord: 'session',
  program: 'claude',
  install: 'Install it (`npm install -g @anthropic-ai/claude-code`), run `claude` once to log in',
};

/** The model Claude Code names on the messages it makes up itself (an API error, a notice). */
const SYNTHETIC_MODEL = '<synthetic>';

/** Reads Claude Code's stream-json: the session, live lines, the final result. */
export class ClaudeStream extends CliStream<ClaudeEvent> {
  result: Extract<ClaudeEvent, { type: 'result' }> | null = null;
  /** The API refused the key: the turn was ended at once. */
  private refused = false;
  /** The text of the model's last message: the answer, without what Claude Code adds of its own. */
  private modelText: string | null = null;
  /** Failed tries of the current model request, and why the last one failed; 0 once the model answered. */
  private failedTries = 0;
  private retryWhy = '';

  constructor(session: string | null) {
    super(session, CLAUDE_CODE);
  }

  protected forgetAttempt(): void {
    this.result = null;
    this.modelText = null;
    this.failedTries = 0;
  }

  /** The failed turn's sentence when the model did not answer within `limitSec`. */
  unreachable(limitSec: number): string {
    return unreachableSentence('Claude Code', this.retryWhy || retryReason(null), limitSec, this.failedTries);
  }

  protected event(event: ClaudeEvent): StreamUpdate | undefined {
    switch (event.type) {
      case 'system': {
        if (event.subtype === 'init') {
          const init = event as Extract<ClaudeEvent, { subtype: 'init' }>;
          this.session = init.session_id;
          return { session: init.session_id, live: `Claude Code started (${init.model ?? 'default model'})` };
        }
        if (event.subtype === 'api_retry') {
          const retry = event as Extract<ClaudeEvent, { subtype: 'api_retry' }>;
          // A refused key stays refused: Claude Code would retry it for minutes before saying so.
          const refused =
            retry.error_status === 401 || retry.error_status === 403 || KEY_REFUSED.test(retry.error ?? '');
          if (refused && !this.refused) {
            this.refused = true;
            const why = [retry.error_status, retry.error]
              .filter((part) => part !== undefined && part !== null)
              .join(' ');
            return {
              live: `Claude Code: the API refused the key (${why})`,
              fail: `Claude Code is not logged in here, or its API key was refused (${why}). ${LOG_IN}`,
            };
          }
          // `attempt` counts the failed tries so far: the next one is attempt + 1.
          this.failedTries = Math.max(this.failedTries + 1, retry.attempt ?? 0);
          this.retryWhy = retryReason(retry.error_status);
          return { live: retryingLine(this.retryWhy, this.failedTries + 1), model: 'retrying' };
        }
        return undefined;
      }
      case 'assistant': {
        const content = event.message?.content ?? [];
        const fromModel = event.message?.model !== SYNTHETIC_MODEL;
        if (fromModel) {
          const text = content.flatMap((part) => (part.type === 'text' ? [(part as { text: string }).text] : []));
          if (text.length) this.modelText = text.join('');
          this.failedTries = 0;
        }
        const parts = content.flatMap((part) => {
          if (part.type === 'text') return [preview((part as { text: string }).text)];
          if (part.type === 'tool_use') {
            const use = part as { name: string; input?: unknown };
            return [`→ ${use.name} ${preview(JSON.stringify(use.input ?? {}), 200)}`];
          }
          return [];
        });
        if (!fromModel) return parts.length ? { live: parts.join(' · ') } : undefined;
        return parts.length ? { live: parts.join(' · '), model: 'answered' } : { model: 'answered' };
      }
      case 'user': {
        const content = event.message?.content;
        if (!Array.isArray(content)) return undefined;
        const parts = content.flatMap((part) => {
          if (part.type !== 'tool_result') return [];
          const result = part as { content?: unknown; is_error?: boolean };
          return [`${result.is_error ? '← error: ' : '← '}${preview(toolResultText(result.content), 200)}`];
        });
        // A tool's result goes to the model at once: its next request counts from here.
        return parts.length ? { live: parts.join(' · '), model: 'answered' } : undefined;
      }
      case 'result':
        this.result = event;
        if (!this.session && event.session_id && !event.is_error) this.session = event.session_id;
        return undefined;
      default:
        return undefined;
    }
  }

  /** The turn's outcome once the process ended. */
  finish(process: ProcessResult, command: string, commandIsSetting: boolean): TurnOutcome {
    const resumeNote = this.fellBack
      ? `(Parley could not resume the earlier Claude Code session — ${this.fellBack} — so this answer comes from a fresh session that does not remember earlier turns.)`
      : null;
    const notStarted = this.notStarted(command, commandIsSetting);
    if (notStarted) return { ok: false, error: notStarted };
    const result = this.result;
    if (result && !result.is_error) {
      const output = this.answer(result.result ?? '');
      return {
        ok: true,
        output: resumeNote ? `${resumeNote}\n\n${output}` : output,
        session: this.session,
      };
    }
    let message: string;
    if (result) {
      message = result.result?.trim() || result.errors?.join('; ') || `it ended with ${result.subtype}`;
    } else if (process.signal) {
      message = `it was ended by ${process.signal}`;
    } else {
      const detail = process.stderr.trim().split('\n').slice(-5).join('\n');
      message = detail || `it exited with code ${process.code} without a result`;
    }
    const after = this.fellBack ? ' (after the earlier session could not be resumed)' : '';
    if (LOGIN_FAILED.test(message))
      return { ok: false, error: `Claude Code is not logged in here (“${message}”). ${LOG_IN}${after}` };
    if (this.failedTries > 0)
      // It gave up on its own (its retries are bounded by Parley): what it tried, in plain words.
      return {
        ok: false,
        error: `Claude Code could not reach its model: ${this.retryWhy} after ${this.failedTries + 1} tries (it said: “${preview(message, 300)}”). Check that the model server is running and reachable from this computer, then send the message again.${after}`,
      };
    return { ok: false, error: `Claude Code failed: ${message}${after}` };
  }

  /**
   * The answer is the model's words. Claude Code may add its own notices to `result` (a
   * gateway warning): when the model's last message is in it, that message is the answer;
   * otherwise only the notices the reply guard knows are taken out.
   */
  private answer(result: string): string {
    const model = this.modelText;
    if (model !== null && model.trim() && result !== model && result.includes(model)) return model;
    return withoutCliNotices(result);
  }
}

/**
 * The turn's private files, in a folder only this user can read (mkdtemp makes it
 * 0700): the MCP config (`parley mcp` with the turn's token) and the system prompt.
 */
function writeTurnFiles(request: TurnRequest, fence: Fence): { dir: string; mcpConfig: string; systemPrompt: string } {
  const dir = mkdtempSync(path.join(request.privateDir, 'claude-'));
  const mcpConfig = path.join(dir, 'mcp.json');
  const systemPrompt = path.join(dir, 'system-prompt.md');
  const env: Record<string, string> = {};
  for (const name of ['PARLEY_TOKEN', 'PARLEY_API', 'PATH'] as const) {
    const value = request.env[name];
    if (value !== undefined) env[name] = value;
  }
  // At `work` a request to use a tool waits for a person (the server's `permission` tool).
  if (request.trust === 'work') env[PERMISSION_TOOL_VARIABLE] = '1';
  // alwaysLoad: Claude Code waits for this server before the first request; without it `claude -p`
  // connects --mcp-config servers in the background, and a slow start leaves the turn without Parley's tools.
  const parley = { type: 'stdio', command: parleyLauncher(request), args: ['mcp'], env, alwaysLoad: true };
  const config = { mcpServers: { parley } };
  writeFileSync(mcpConfig, JSON.stringify(config, null, 2), { mode: 0o600 });
  // Claude Code asks before it runs a shell command: the MCP tools are how it acts in Parley.
  writeFileSync(systemPrompt, standingInstructions(request, { cliOnPath: false, fence }), { mode: 0o600 });
  return { dir, mcpConfig, systemPrompt };
}

/**
 * Claude Code's own retry settings, sized to the role's model timeout: by default it
 * retries a failing request ten times with growing waits, and waits minutes on a server
 * that accepted the connection and says nothing. Bounded, it gives up on a server that
 * refuses or fails within seconds and says why; a silent one is given a third of the
 * timeout per try (API_TIMEOUT_MS bounds the wait for an answer to begin, not a streamed
 * answer's length), and Parley ends the turn at the timeout. The role's environment wins.
 */
export function claudeRetryEnv(env: Record<string, string>, modelTimeoutSec: number): Record<string, string> {
  const settings: Record<string, string> = {};
  if (env.CLAUDE_CODE_MAX_RETRIES === undefined) settings.CLAUDE_CODE_MAX_RETRIES = '4';
  if (env.API_TIMEOUT_MS === undefined) settings.API_TIMEOUT_MS = String(Math.round((modelTimeoutSec * 1000) / 3));
  return settings;
}

export const claudeCodeAdapter: AgentAdapter = {
  prepare(request): AgentLaunch {
    const agent = request.role.agent;
    if (agent.adapter !== 'claude-code') throw new Error('claude-code adapter given another adapter’s settings');
    const { command, cwd, env } = cliTurn(request, agent, 'claude');
    const modelTimeoutSec = agent.modelTimeoutSec ?? DEFAULT_MODEL_TIMEOUT_SEC;
    Object.assign(env, claudeRetryEnv(env, modelTimeoutSec));
    // One fence for the turn: the system prompt's peer directory and the prompt's peer texts.
    const fence = newFence();
    const files = writeTurnFiles(request, fence);
    const common = [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--mcp-config',
      files.mcpConfig,
      // The parley tools need no approval: they are how this agent acts in Parley.
      '--allowedTools',
      'mcp__parley',
      '--append-system-prompt-file',
      files.systemPrompt,
    ];
    common.push(...claudeCodeModeArgs(request.trust, agent.permissionMode));
    if (agent.model) common.push('--model', agent.model);
    const fresh = {
      args: [...common, '--session-id', randomUUID()],
      stdin: turnPrompt(request, fence, { notice: FRESH_SESSION_NOTICE }),
    };
    const attempts: RunnerPlan['attempts'] = [];
    if (request.session && SESSION_UUID.test(request.session)) {
      attempts.push({ args: [...common, '--resume', request.session], stdin: turnPrompt(request, fence) }, fresh);
    } else {
      // No session yet, or one another adapter made: start one of our own.
      attempts.push({ args: fresh.args, stdin: turnPrompt(request, fence) });
    }
    const plan: RunnerPlan = {
      command,
      attempts,
      retryWhen: CLAUDE_RESUME_FAILED,
      cleanup: [files.dir],
      unset: [],
    };
    const stream = new ClaudeStream(request.session);
    return {
      ...runnerLaunch(request, plan, cwd, env),
      onLine: (line) => stream.line(line),
      modelTimeout: { limitSec: modelTimeoutSec, fail: () => stream.unreachable(modelTimeoutSec) },
      finish(result) {
        rmSync(files.dir, { recursive: true, force: true });
        return stream.finish(result, command, agent.command !== undefined);
      },
    };
  },
};
