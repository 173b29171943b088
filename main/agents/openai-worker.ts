// Parley's openai-compatible worker: one process per turn. It reads an OpenAiTurn as
// JSON on stdin, continues the session's message history, streams chat completions
// (`POST {baseUrl}/chat/completions`, `stream: true`) and runs the role tools the
// model calls against the role API, until the model answers without tool calls or
// the turn's `maxSteps` tool-call rounds are used. It writes OpenAiEvent JSON lines
// on stdout. SIGTERM (Stop) aborts the request in flight and ends the process; the
// history keeps every step that was complete.
//
// The history always alternates user and assistant, as strict chat templates
// (Mistral, Gemma, Llama 2 in vLLM and llama.cpp) demand: a turn that was stopped or
// failed before its answer leaves its user message, and the next turn's inputs are
// merged into it (with a notice that it failed); one cut off after a tool round gets
// an assistant line saying so. A server that is busy (429, 503) is asked again after
// the wait its Retry-After names, or a growing one; one that does not start answering
// within the request timeout, or pauses longer than the idle timeout, fails the turn.
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { callRoleApi, type RoleApiTarget } from '../role-api/client';
import type { OpenAiEvent, OpenAiTurn } from './openai-compatible';
import { EnvHttpProxyAgent, setGlobalDispatcher } from 'undici';

// Inside the agents' sandbox the network is its proxy (HTTP_PROXY), which Node's fetch
// does not read by itself.
const proxied = Boolean(
  process.env.HTTP_PROXY || process.env.HTTPS_PROXY || process.env.http_proxy || process.env.https_proxy,
);
if (proxied) setGlobalDispatcher(new EnvHttpProxyAgent());

interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

interface SessionFile {
  version: 1;
  messages: ChatMessage[];
  /** The last turn failed before its answer: why. The next one is told. */
  failed?: string | null;
}

interface Completion {
  content: string;
  toolCalls: ToolCall[];
}

const controller = new AbortController();
let apiKey: string | null = null;
/** The session being worked on, so a failure can be written into it. */
let current: { file: string; history: ChatMessage[] } | null = null;

function stop(): void {
  controller.abort();
  // The socket closes with the process: the server sees the request end.
  process.exit(143);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

const scrub = (text: string) => (apiKey ? text.split(apiKey).join('[api key]') : text);

function emit(event: OpenAiEvent): void {
  process.stdout.write(JSON.stringify(event) + '\n');
}

const live = (text: string) => emit({ type: 'live', text: scrub(text) });

class TurnError extends Error {}

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

// ---- the history ----------------------------------------------------------------

function loadSession(file: string): { messages: ChatMessage[]; failed: string | null } {
  let saved: SessionFile;
  try {
    saved = JSON.parse(readFileSync(file, 'utf8')) as SessionFile;
  } catch {
    return { messages: [], failed: null };
  }
  const messages = alternate(Array.isArray(saved.messages) ? saved.messages : []);
  // An assistant's tool calls without their results would be refused by the server.
  while (messages.length > 0) {
    const last = messages.at(-1)!;
    if (last.role === 'assistant' && last.tool_calls?.length) messages.pop();
    else break;
  }
  return { messages, failed: typeof saved.failed === 'string' ? saved.failed : null };
}

/** An assistant line for a turn that ended after a tool round, before its answer. */
const cutOff = (failed: string | null) =>
  `[Parley: this turn ended before an answer${failed ? `; it failed: ${failed}` : ' (it was stopped)'}]`;

/**
 * A history every chat template takes: after the system prompt, user and assistant
 * take turns, starting with the user; tool results follow the call they answer. Two
 * user messages in a row (an older Parley's stopped or failed turn) become one.
 */
function alternate(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const message of messages) {
    const last = out.at(-1);
    if (message.role === 'system') continue;
    if (message.role === 'tool') {
      // A result without its call is refused; drop it.
      if (last?.role === 'tool' || (last?.role === 'assistant' && last.tool_calls?.length)) out.push(message);
      continue;
    }
    if (message.role === 'user') {
      if (last?.role === 'user') {
        out[out.length - 1] = { role: 'user', content: `${last.content}\n\n${message.content}` };
        continue;
      }
      if (last?.role === 'tool') out.push({ role: 'assistant', content: cutOff(null) });
      out.push(message);
      continue;
    }
    // An assistant message: it answers a user message or tool results.
    if (!last) continue;
    if (last.role === 'assistant' && !last.tool_calls?.length) {
      out[out.length - 1] = {
        role: 'assistant',
        content: [last.content, message.content].filter(Boolean).join('\n\n'),
      };
      if (message.tool_calls?.length)
        (out[out.length - 1] as { tool_calls?: ToolCall[] }).tool_calls = message.tool_calls;
      continue;
    }
    out.push(message);
  }
  return out;
}

/**
 * The turn's prompt as the next user message. After a turn that ended before its
 * answer, it joins that turn's user message (told that the turn failed, if it did);
 * after one cut off in a tool round, it follows a line saying so.
 */
function addPrompt(messages: ChatMessage[], prompt: string, failed: string | null): void {
  const last = messages.at(-1);
  if (last?.role === 'tool') {
    messages.push({ role: 'assistant', content: cutOff(failed) }, { role: 'user', content: prompt });
  } else if (last?.role === 'user') {
    const notice = failed
      ? `[notice] Your previous turn failed: ${failed.replace(/\.$/, '')}. What you were given then is above.\n\n`
      : '';
    messages[messages.length - 1] = { role: 'user', content: `${last.content}\n\n${notice}${prompt}` };
  } else messages.push({ role: 'user', content: prompt });
}

/** Written whole and renamed into place, so a stop mid-write leaves the previous version. */
function saveHistory(file: string, messages: ChatMessage[], failed: string | null = null): void {
  const data: SessionFile = { version: 1, messages, ...(failed ? { failed } : {}) };
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, JSON.stringify(data), { mode: 0o600 });
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

const size = (message: ChatMessage) =>
  (message.content?.length ?? 0) + ('tool_calls' in message ? JSON.stringify(message.tool_calls ?? []).length : 0);

/** The most recent whole turns that fit the budget (always at least the current one). */
function recent(messages: ChatMessage[], budget: number): ChatMessage[] {
  let total = messages.reduce((sum, message) => sum + size(message), 0);
  let start = 0;
  while (total > budget) {
    const next = messages.findIndex((message, index) => index > start && message.role === 'user');
    if (next < 0) break;
    for (let i = start; i < next; i++) total -= size(messages[i]!);
    start = next;
  }
  return messages.slice(start);
}

// ---- the role tools -------------------------------------------------------------

const text = { type: 'string', description: 'The text, in plain words or Markdown.' };
const peerRole = {
  type: 'string',
  description: 'PEER/ROLE: a connected installation’s name and one of its roles, e.g. bob/researcher',
};

const tools = [
  {
    name: 'context',
    description:
      'Where you are working: the run’s context and root (whose conversation or which task you answer for), as JSON.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    pick: () => ({}),
  },
  {
    name: 'report',
    description:
      'Post a text to your root right away: a message in the person’s conversation, an entry in the task log, or a send in the agent conversation.',
    parameters: { type: 'object', properties: { text }, required: ['text'], additionalProperties: false },
    pick: (args: Record<string, unknown>) => ({ text: args.text }),
  },
  {
    name: 'send',
    description:
      'Send a text to a role of a connected installation. Its answer comes back to you in a later turn, in an agent conversation about this topic.',
    parameters: {
      type: 'object',
      properties: { to: peerRole, text },
      required: ['to', 'text'],
      additionalProperties: false,
    },
    pick: (args: Record<string, unknown>) => ({ to: args.to, text: args.text }),
  },
  {
    name: 'reply',
    description: 'In an agent conversation: answer the peer role that wrote to you.',
    parameters: { type: 'object', properties: { text }, required: ['text'], additionalProperties: false },
    pick: (args: Record<string, unknown>) => ({ text: args.text }),
  },
  {
    name: 'peers',
    description:
      'Whom you can ask: each connected installation, whether it is online, offline (a send waits) or paused (sends are refused), and the roles it lets you address as PEER/ROLE, with what they do.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    pick: () => ({}),
  },
  {
    name: 'history',
    description: 'Everything between you and a peer role, every agent conversation, in time order.',
    parameters: {
      type: 'object',
      properties: { with: peerRole },
      required: ['with'],
      additionalProperties: false,
    },
    pick: (args: Record<string, unknown>) => ({ with: args.with }),
  },
] as const;

const toolDefinitions = tools.map((tool) => ({
  type: 'function' as const,
  function: { name: tool.name, description: tool.description, parameters: tool.parameters },
}));

async function runTool(target: RoleApiTarget, call: ToolCall): Promise<string> {
  const tool = tools.find((candidate) => candidate.name === call.function.name);
  if (!tool)
    return `error: there is no tool named "${call.function.name}"; use one of ${tools.map((t) => t.name).join(', ')}`;
  let args: Record<string, unknown>;
  try {
    // The model never sees the key; should it guess it anyway, it does not get posted.
    const raw = scrub(call.function.arguments).trim();
    const parsed: unknown = raw ? JSON.parse(raw) : {};
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    args = parsed as Record<string, unknown>;
  } catch {
    return 'error: the arguments are not a JSON object';
  }
  try {
    const result = await callRoleApi(target, tool.name, tool.pick(args));
    return JSON.stringify(result);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return `error${typeof code === 'string' ? ` (${code})` : ''}: ${(error as Error).message}`;
  }
}

// ---- chat completions -----------------------------------------------------------

function endpoint(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
}

/** The server's own words about an error, from an OpenAI-style `{ error: { message } }` or plain text. */
function errorDetail(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON
  }
  return body.trim().slice(0, 300);
}

function httpError(status: number, statusText: string, body: string): TurnError {
  const detail = errorDetail(body);
  const hint =
    status === 401 || status === 403
      ? ' Check the API key in the role’s settings.'
      : status === 404
        ? ' Check the base URL and the model name in the role’s settings.'
        : '';
  return new TurnError(
    `the model server answered ${status}${statusText ? ` ${statusText}` : ''}${detail ? `: ${detail}` : ''}.${hint}`,
  );
}

interface StreamChoice {
  delta?: {
    content?: string | null;
    tool_calls?: { index?: number; id?: string; type?: string; function?: { name?: string; arguments?: string } }[];
  };
  message?: { content?: string | null; tool_calls?: ToolCall[] };
}

class Accumulator {
  content = '';
  private calls: ToolCall[] = [];
  private liveLine = '';

  add(choice: StreamChoice | undefined): void {
    const delta = choice?.delta;
    if (!delta) return;
    if (typeof delta.content === 'string' && delta.content) {
      this.content += delta.content;
      this.liveLine += delta.content;
      let newline: number;
      while ((newline = this.liveLine.indexOf('\n')) >= 0) {
        live(this.liveLine.slice(0, newline));
        this.liveLine = this.liveLine.slice(newline + 1);
      }
    }
    for (const part of delta.tool_calls ?? []) {
      let index = part.index;
      if (index === undefined) {
        const byId = part.id ? this.calls.findIndex((call) => call.id === part.id) : -1;
        index = byId >= 0 ? byId : part.id || this.calls.length === 0 ? this.calls.length : this.calls.length - 1;
      }
      const call = (this.calls[index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
      if (part.id) call.id = part.id;
      if (part.function?.name && !call.function.name) call.function.name = part.function.name;
      if (part.function?.arguments) call.function.arguments += part.function.arguments;
    }
  }

  finish(): Completion {
    if (this.liveLine) live(this.liveLine);
    this.liveLine = '';
    const toolCalls = this.calls
      .filter((call) => call !== undefined && call.function.name)
      .map((call) => ({ ...call, id: call.id || `call_${randomBytes(6).toString('hex')}` }));
    return { content: this.content, toolCalls };
  }
}

/** Statuses that mean "not now": asked again after a wait. */
const BUSY = new Set([429, 503]);
const MAX_ATTEMPTS = 5;
/** Parley waits this long at most between attempts; a Retry-After that asks for more fails the turn. */
const MAX_RETRY_WAIT_MS = 60_000;

class Busy extends Error {
  constructor(
    readonly status: string,
    readonly retryAfterMs: number | null,
    readonly detail: string,
  ) {
    super(`the model server is busy (${status})`);
  }
}

/** `Retry-After` in seconds or as a date, or OpenAI's `retry-after-ms`; null when absent or unreadable. */
function retryAfter(headers: Headers): number | null {
  const ms = Number(headers.get('retry-after-ms'));
  if (headers.get('retry-after-ms') !== null && Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get('retry-after')?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function complete(turn: OpenAiTurn, messages: ChatMessage[], withTools: boolean): Promise<Completion> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptCompletion(turn, messages, withTools);
    } catch (error) {
      if (!(error instanceof Busy)) throw error;
      if (error.retryAfterMs !== null && error.retryAfterMs > MAX_RETRY_WAIT_MS)
        throw new TurnError(
          `the model server is busy (${error.status}) and asks to wait ${Math.ceil(error.retryAfterMs / 1000)} s; send the message again later.`,
        );
      if (attempt >= MAX_ATTEMPTS)
        throw new TurnError(
          `the model server is still busy (${error.status}) after ${MAX_ATTEMPTS} tries${error.detail ? `: ${error.detail}` : ''}; send the message again later.`,
        );
      // Full jitter on a doubling wait when the server names none.
      const wait = error.retryAfterMs ?? Math.random() * Math.min(MAX_RETRY_WAIT_MS / 2, 1000 * 2 ** attempt);
      live(`the model server is busy (${error.status}); trying again in ${seconds(wait)}`);
      await sleep(wait);
    }
  }
}

async function attemptCompletion(turn: OpenAiTurn, messages: ChatMessage[], withTools: boolean): Promise<Completion> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
  if (turn.apiKey) headers.authorization = `Bearer ${turn.apiKey}`;
  const body: Record<string, unknown> = { model: turn.model, messages, stream: true };
  if (withTools) body.tools = toolDefinitions;
  if (turn.temperature !== null) body.temperature = turn.temperature;
  // This attempt's own abort, for its timeouts; a stop aborts every attempt.
  const attempt = new AbortController();
  let timedOut: 'request' | 'idle' | null = null;
  let timer = setTimeout(() => {
    timedOut = 'request';
    attempt.abort();
  }, turn.requestTimeoutMs);
  const waitForMore = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = 'idle';
      attempt.abort();
    }, turn.idleTimeoutMs);
  };
  const timeoutError = () =>
    timedOut === 'request'
      ? new TurnError(
          `the model server did not answer within ${seconds(turn.requestTimeoutMs)} (the role’s requestTimeoutSec); is it overloaded, or still loading the model?`,
        )
      : new TurnError(
          `the model server sent nothing for ${seconds(turn.idleTimeoutMs)} in the middle of its answer (the role’s idleTimeoutSec)`,
        );
  /** A read of the answer, under the idle timeout. */
  const reading = async <T>(read: () => Promise<T>): Promise<T> => {
    waitForMore();
    try {
      return await read();
    } catch (error) {
      if (timedOut) throw timeoutError();
      throw error;
    }
  };
  try {
    let response: Response;
    try {
      response = await fetch(endpoint(turn.baseUrl), {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.any([controller.signal, attempt.signal]),
      });
    } catch (error) {
      if (timedOut) throw timeoutError();
      const cause = (error as { cause?: { code?: string | number; message?: string } }).cause;
      // Through the sandbox's proxy a refused connection and a host it does not allow look alike.
      const why =
        typeof cause?.code === 'string'
          ? cause.code
          : proxied
            ? 'the server refused the connection, or the sandbox does not let the agent reach it'
            : (cause?.message ?? (error as Error).message);
      throw new TurnError(`cannot reach the model server at ${endpoint(turn.baseUrl)}: ${why}`);
    }
    if (!response.ok) {
      const text = (await reading(() => response.text())).slice(0, 4000);
      const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
      if (BUSY.has(response.status)) throw new Busy(status, retryAfter(response.headers), errorDetail(text));
      throw httpError(response.status, response.statusText, text);
    }
    const accumulator = new Accumulator();
    const type = response.headers.get('content-type') ?? '';
    if (!type.includes('text/event-stream')) {
      // A server that ignores `stream: true` answers with one JSON object.
      const parsed = (await reading(() => response.json())) as { choices?: StreamChoice[] };
      const message = parsed.choices?.[0]?.message;
      if (!message) throw new TurnError('the model server’s answer has no message');
      return { content: message.content ?? '', toolCalls: message.tool_calls ?? [] };
    }
    const decoder = new TextDecoder();
    let buffer = '';
    let data: string[] = [];
    let done = false;
    const dispatch = () => {
      const payload = data.join('\n');
      data = [];
      if (!payload) return;
      if (payload === '[DONE]') {
        done = true;
        return;
      }
      let chunk: { choices?: StreamChoice[]; error?: unknown };
      try {
        chunk = JSON.parse(payload) as typeof chunk;
      } catch {
        throw new TurnError(`the model server sent a stream event that is not JSON: ${payload.slice(0, 200)}`);
      }
      if (chunk.error) throw new TurnError(`the model server reported an error: ${errorDetail(JSON.stringify(chunk))}`);
      accumulator.add(chunk.choices?.[0]);
    };
    const reader = response.body!.getReader();
    while (!done) {
      const { value, done: ended } = await reading(() => reader.read());
      if (ended) break;
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while (!done && (newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline).replace(/\r$/, '');
        buffer = buffer.slice(newline + 1);
        if (line === '') dispatch();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        // Comments (`: keep-alive`) and other fields carry nothing for us.
      }
    }
    if (!done) {
      if (buffer.startsWith('data:')) data.push(buffer.slice(5).replace(/^ /, ''));
      dispatch();
    }
    void reader.cancel().catch(() => {});
    return accumulator.finish();
  } finally {
    clearTimeout(timer);
  }
}

// ---- the turn -------------------------------------------------------------------

async function main(): Promise<void> {
  const turn = JSON.parse(await readStdin()) as OpenAiTurn;
  apiKey = turn.apiKey;
  emit({ type: 'session', session: turn.session });
  const token = process.env.PARLEY_TOKEN;
  const socketPath = process.env.PARLEY_API;
  if (!token || !socketPath) throw new TurnError('PARLEY_TOKEN and PARLEY_API are not set: run me from Parley');
  const target: RoleApiTarget = { socketPath, token };

  const saved = loadSession(turn.sessionFile);
  const history = saved.messages;
  addPrompt(history, turn.prompt, saved.failed);
  saveHistory(turn.sessionFile, history);
  current = { file: turn.sessionFile, history };

  for (let round = 0; ; round++) {
    const messages: ChatMessage[] = [
      { role: 'system', content: turn.system },
      ...recent(history, turn.historyBudgetChars),
    ];
    const answer = await complete(turn, messages, true);
    if (answer.toolCalls.length === 0) {
      history.push({ role: 'assistant', content: answer.content });
      saveHistory(turn.sessionFile, history);
      emit({ type: 'result', output: scrub(answer.content.trim()) });
      return;
    }
    const step: ChatMessage[] = [{ role: 'assistant', content: answer.content || null, tool_calls: answer.toolCalls }];
    if (round >= turn.maxSteps) {
      // Out of rounds: the calls are answered as not run, so the history stays valid.
      for (const call of answer.toolCalls)
        step.push({
          role: 'tool',
          tool_call_id: call.id,
          content: 'error: not run, this turn’s tool-call limit was reached',
        });
      history.push(...step);
      saveHistory(turn.sessionFile, history);
      const note = `[Parley ended this turn after ${turn.maxSteps} tool-call rounds (the role’s maxSteps)]`;
      emit({ type: 'result', output: scrub(answer.content.trim() ? `${answer.content.trim()}\n\n${note}` : note) });
      return;
    }
    for (const call of answer.toolCalls) {
      live(`→ ${call.function.name} ${call.function.arguments.slice(0, 200)}`);
      const result = await runTool(target, call);
      step.push({ role: 'tool', tool_call_id: call.id, content: result });
    }
    history.push(...step);
    saveHistory(turn.sessionFile, history);
  }
}

/** Ends once everything written to stdout has been handed over. */
const exit = (code: number) => process.stdout.write('', () => process.exit(code));

main().then(
  () => exit(0),
  (error: unknown) => {
    if (controller.signal.aborted) process.exit(143);
    const message = scrub(
      error instanceof TurnError ? error.message : `the openai-compatible worker failed: ${String(error)}`,
    );
    // The next turn continues from here and is told this one failed.
    if (current)
      try {
        saveHistory(current.file, current.history, message);
      } catch {
        // The history stays as it was after the last complete step.
      }
    emit({ type: 'error', message });
    exit(1);
  },
);
