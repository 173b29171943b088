// The openai-compatible worker's requests to the model server: chat completions
// (`POST {baseUrl}/chat/completions`, `stream: true`), read as they stream in, with the
// text shown live line by line. A server that is busy (429, 503) is asked again after
// the wait its Retry-After names, or a growing one; one that does not start answering
// within the request timeout, or pauses longer than the idle timeout, fails the turn.
import { randomBytes } from 'node:crypto';
import { EnvHttpProxyAgent, setGlobalDispatcher } from 'undici';
import type { OpenAiTurn } from './openai-compatible';
import type { ChatMessage, ToolCall } from './openai-history';
import { live, TurnError } from './openai-output';
import { toolDefinitions } from './openai-tools';

// Inside the agents' sandbox the network is its proxy (HTTP_PROXY), which Node's fetch
// does not read by itself.
const proxied = Boolean(
  process.env.HTTP_PROXY || process.env.HTTPS_PROXY || process.env.http_proxy || process.env.https_proxy,
);
if (proxied) setGlobalDispatcher(new EnvHttpProxyAgent());

interface Completion {
  content: string;
  toolCalls: ToolCall[];
}

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

/**
 * One completion of the model: streamed, with the role tools offered when `withTools`.
 * A busy server is asked again; `stopped` (the turn's Stop) aborts whatever is in flight.
 */
export async function complete(
  turn: OpenAiTurn,
  messages: ChatMessage[],
  withTools: boolean,
  stopped: AbortSignal,
): Promise<Completion> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptCompletion(turn, messages, withTools, stopped);
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

async function attemptCompletion(
  turn: OpenAiTurn,
  messages: ChatMessage[],
  withTools: boolean,
  stopped: AbortSignal,
): Promise<Completion> {
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
        signal: AbortSignal.any([stopped, attempt.signal]),
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
