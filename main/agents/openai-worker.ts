// Parley's openai-compatible worker: one process per turn. It reads an OpenAiTurn as
// JSON on stdin, continues the session's message history, streams chat completions
// (`POST {baseUrl}/chat/completions`, `stream: true`) and runs the role tools the
// model calls against the role API, until the model answers without tool calls or
// the turn's `maxSteps` tool-call rounds are used. It writes OpenAiEvent JSON lines
// on stdout. SIGTERM (Stop) aborts the request in flight and ends the process; the
// history keeps every step that was complete.
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { callRoleApi, type RoleApiTarget } from '../role-api/client';
import type { OpenAiEvent, OpenAiTurn } from './openai-compatible';

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
}

interface Completion {
  content: string;
  toolCalls: ToolCall[];
}

const controller = new AbortController();
let apiKey: string | null = null;

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

function loadHistory(file: string): ChatMessage[] {
  let saved: SessionFile;
  try {
    saved = JSON.parse(readFileSync(file, 'utf8')) as SessionFile;
  } catch {
    return [];
  }
  const messages = Array.isArray(saved.messages) ? saved.messages : [];
  // An assistant's tool calls without their results would be refused by the server.
  while (messages.length > 0) {
    const last = messages.at(-1)!;
    if (last.role === 'assistant' && last.tool_calls?.length) messages.pop();
    else break;
  }
  return messages;
}

/** Written whole and renamed into place, so a stop mid-write leaves the previous version. */
function saveHistory(file: string, messages: ChatMessage[]): void {
  const data: SessionFile = { version: 1, messages };
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

async function complete(turn: OpenAiTurn, messages: ChatMessage[], withTools: boolean): Promise<Completion> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
  if (turn.apiKey) headers.authorization = `Bearer ${turn.apiKey}`;
  const body: Record<string, unknown> = { model: turn.model, messages, stream: true };
  if (withTools) body.tools = toolDefinitions;
  if (turn.temperature !== null) body.temperature = turn.temperature;
  let response: Response;
  try {
    response = await fetch(endpoint(turn.baseUrl), {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: controller.signal,
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new TurnError(
      `cannot reach the model server at ${endpoint(turn.baseUrl)}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
    );
  }
  if (!response.ok) throw httpError(response.status, response.statusText, (await response.text()).slice(0, 4000));
  const accumulator = new Accumulator();
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('text/event-stream')) {
    // A server that ignores `stream: true` answers with one JSON object.
    const parsed = (await response.json()) as { choices?: StreamChoice[] };
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
    const { value, done: ended } = await reader.read();
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

  const history = loadHistory(turn.sessionFile);
  history.push({ role: 'user', content: turn.prompt });
  saveHistory(turn.sessionFile, history);

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
    const message =
      error instanceof TurnError ? error.message : `the openai-compatible worker failed: ${String(error)}`;
    emit({ type: 'error', message: scrub(message) });
    exit(1);
  },
);
