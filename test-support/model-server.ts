// A model server on loopback for tests that drive real agent CLIs: it speaks just enough
// of the Anthropic Messages API (Claude Code, and the Claude Agent SDK under
// claude-agent-acp) and of the OpenAI Responses API (Codex, codex-acp) for an agent to
// run a turn, call tools and stream an answer. What it answers comes from a small
// deterministic script, not a model.
//
// What it fakes, and how:
// - `POST …/messages` (Anthropic) and `POST …/responses` (OpenAI), streamed as server-sent
//   events the way those APIs stream them, or as one JSON body when `stream` is off.
//   Token counts are made up; there are no images, thinking blocks or caching.
// - `POST …/messages/count_tokens` answers a rough count; any other path is 404.
// - Keys: every request's key (`x-api-key` or `Authorization: Bearer`) is recorded; a key
//   the test refused gets a 401 with the API's own error shape.
// - A `slow` reply streams one word every `slowChunkMs` until the client goes away (Stop),
//   for at most `slowLimitMs`.
// Everything it received is kept in `requests`, so a test can check what the agent sent
// (for instance that a second turn carried the first turn's messages: it resumed).
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type ModelApi = 'anthropic' | 'openai';

/** One message of the conversation the agent sent, flattened to text. */
export interface ModelMessage {
  role: 'user' | 'assistant' | 'tool';
  text: string;
  /** assistant: the tool it called. */
  call?: { name: string; input: unknown };
}

export interface ModelRequest {
  /** Order of arrival, from 1. */
  seq: number;
  api: ModelApi;
  path: string;
  key: string | null;
  model: string;
  stream: boolean;
  system: string;
  messages: ModelMessage[];
  /** The names of the tools the agent offered. */
  tools: string[];
  /** The request body as the agent sent it. */
  body: Record<string, unknown>;
  /** What the server answered, once it did. */
  reply?: ModelReply | { refused: number };
  /** Set when the client went away before the answer was complete. */
  aborted?: boolean;
}

export type ModelReply =
  | { text: string }
  /** A call of the offered tool whose name is `tool` or ends with `__tool` (MCP tools are prefixed). */
  | { tool: string; input: Record<string, unknown> }
  | { slow: string };

export type ModelScript = (request: ModelRequest) => ModelReply;

export interface ModelServerOptions {
  script?: ModelScript;
  /** Keys answered with 401; every other key (or none) is accepted. */
  refuseKeys?: string[];
  slowChunkMs?: number;
  slowLimitMs?: number;
}

export interface ModelServer {
  /** `http://127.0.0.1:PORT`: ANTHROPIC_BASE_URL. */
  url: string;
  /** `http://127.0.0.1:PORT/v1`: an OpenAI provider's base_url. */
  openaiUrl: string;
  /** Every model request so far (messages and responses), in order. */
  requests: ModelRequest[];
  /** Resolves with the first request, past or future, for which `match` is true. */
  waitFor(match: (request: ModelRequest) => boolean, what: string, timeoutMs?: number): Promise<ModelRequest>;
  refuseKey(key: string): void;
  close(): Promise<void>;
}

/** The tool a request offers under `name` (exactly, or with an MCP prefix such as `mcp__parley__`). */
export function offeredTool(request: Pick<ModelRequest, 'tools'>, name: string): string | undefined {
  return request.tools.find((tool) => tool === name || tool.endsWith(`__${name}`) || tool.endsWith(`.${name}`));
}

/** Parley starts every turn's prompt with this (agent-prompt.ts). */
export const PROMPT_MARK = '[Parley]';

/**
 * What the agent's last step was about: the tool result it just got, or Parley's prompt
 * for this turn (from its `[Parley]` mark on; agents add messages of their own around it,
 * such as reminders and lists of skills, which are passed over).
 */
export function currentStep(
  request: ModelRequest,
): { kind: 'tool'; text: string } | { kind: 'prompt'; text: string } | null {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i]!;
    if (message.role === 'tool') return { kind: 'tool', text: message.text };
    if (message.role === 'assistant') return null;
    const at = message.text.lastIndexOf(PROMPT_MARK);
    if (at >= 0) return { kind: 'prompt', text: message.text.slice(at) };
  }
  // No mark (a prompt Parley did not write): the last user message with an input line.
  for (let i = request.messages.length - 1; i >= 0 && request.messages[i]!.role === 'user'; i--)
    if (lastInput(request.messages[i]!.text)) return { kind: 'prompt', text: request.messages[i]!.text };
  return null;
}

/** Every text of the request, for "did the agent see X" assertions. */
export function requestText(request: ModelRequest): string {
  return [request.system, ...request.messages.map((m) => m.text)].join('\n');
}

const INPUT = /^([A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)?): (.+)$/;

const FENCE_OPEN = /^<<<(peer-text-[0-9a-f]+) from ([A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)$/;

/**
 * The last input of a prompt: a `FROM: TEXT` line (a person's) or a peer's fenced text
 * (`<<<TAG from PEER/ROLE` … `TAG>>>`, agent-prompt.ts), whose body is what is inside.
 */
export function lastInput(text: string): { from: string; body: string } | null {
  const lines = text.split('\n');
  let last: { from: string; body: string } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    const open = FENCE_OPEN.exec(line);
    if (open) {
      const end = lines.findIndex((l, j) => j > i && l.trim() === `${open[1]}>>>`);
      if (end < 0) break;
      last = {
        from: open[2]!,
        body: lines
          .slice(i + 1, end)
          .join('\n')
          .trim(),
      };
      i = end;
      continue;
    }
    const match = INPUT.exec(line);
    if (match) last = { from: match[1]!, body: match[2]! };
  }
  return last;
}

/**
 * The scripted agent's rules (DESIGN §10) as a model, through Parley's MCP tools:
 * - a person's `ask PEER/ROLE: Q` → `send {to, text: Q}`;
 * - a person's `sleep` → a slow stream (for Stop);
 * - a peer's text (`PEER/ROLE: T`) → `reply {text: "answer: T"}`; an answer that came
 *   back (`PEER/ROLE: answer: T`) → `report {text: "PEER/ROLE says: answer: T"}`;
 * - after a tool's result → `done (TOOL): RESULT`;
 * - anything else → `echo: TEXT`.
 * A tool the request does not offer (a side request such as a title) gets plain text.
 */
export const parleyScript: ModelScript = (request) => {
  const step = currentStep(request);
  if (step?.kind === 'tool') {
    const call = [...request.messages].reverse().find((m) => m.call)?.call;
    const name = (call?.name ?? 'tool').split(/__|\./).at(-1);
    return { text: `done (${name}): ${step.text.replace(/\s+/g, ' ').trim().slice(0, 300)}` };
  }
  const input = step ? lastInput(step.text) : null;
  if (!input) return { text: 'echo: (nothing)' };
  const tool = (name: string, args: Record<string, unknown>): ModelReply => {
    const offered = offeredTool(request, name);
    return offered ? { tool: offered, input: args } : { text: `(no ${name} tool offered) ${input.body}` };
  };
  if (input.from.includes('/')) {
    if (input.body.startsWith('answer: ')) return tool('report', { text: `${input.from} says: ${input.body}` });
    return tool('reply', { text: `answer: ${input.body}` });
  }
  const ask = /^ask ([^\s:]+\/[^\s:]+): (.+)$/.exec(input.body);
  if (ask) return tool('send', { to: ask[1], text: ask[2] });
  if (/^sleep\b/.test(input.body)) return { slow: 'still working on it' };
  return { text: `echo: ${input.body}` };
};

// ---- reading requests ----------------------------------------------------------------

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;
const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const textOf = (value: unknown): string => {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textOf).filter(Boolean).join('\n');
  if (isObject(value)) {
    if (typeof value.text === 'string') return value.text;
    if ('content' in value) return textOf(value.content);
    if (typeof value.output === 'string') return value.output;
  }
  return '';
};

function anthropicMessages(body: Json): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObject(message)) continue;
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    if (!Array.isArray(blocks)) continue;
    const texts: string[] = [];
    for (const block of blocks) {
      if (!isObject(block)) continue;
      if (block.type === 'text') texts.push(str(block.text));
      else if (block.type === 'tool_use')
        out.push({ role: 'assistant', text: '', call: { name: String(block.name), input: block.input } });
      else if (block.type === 'tool_result') out.push({ role: 'tool', text: textOf(block.content) });
    }
    if (texts.length) out.push({ role: message.role === 'assistant' ? 'assistant' : 'user', text: texts.join('\n') });
  }
  return out;
}

function openaiMessages(body: Json): ModelMessage[] {
  const out: ModelMessage[] = [];
  const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input;
  for (const item of Array.isArray(input) ? input : []) {
    if (!isObject(item)) continue;
    const type = item.type ?? 'message';
    if (type === 'message') {
      const role = item.role === 'assistant' ? 'assistant' : item.role === 'user' ? 'user' : null;
      if (role) out.push({ role, text: textOf(item.content) });
    } else if (type === 'function_call') {
      let args: unknown = item.arguments;
      try {
        args = JSON.parse(String(item.arguments));
      } catch {
        // kept as it came
      }
      const name =
        typeof item.namespace === 'string' ? qualified(item.namespace, String(item.name)) : String(item.name);
      out.push({ role: 'assistant', text: '', call: { name, input: args } });
    } else if (type === 'function_call_output') {
      out.push({ role: 'tool', text: textOf(item.output) });
    }
  }
  return out;
}

/** A namespaced tool's full name, as Claude Code spells MCP tools: `mcp__server__tool`. */
const qualified = (namespace: string, name: string) =>
  namespace.endsWith('__') ? namespace + name : `${namespace}__${name}`;

/** The namespace and short name of an offered OpenAI tool (Codex groups an MCP server's tools in a namespace). */
function openaiToolName(body: Json, full: string): { name: string; namespace?: string } {
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    if (!isObject(tool) || !Array.isArray(tool.tools)) continue;
    const namespace = str(tool.name);
    for (const inner of tool.tools)
      if (isObject(inner) && qualified(namespace, String(inner.name)) === full)
        return { name: String(inner.name), namespace };
  }
  return { name: full };
}

const toolNames = (tools: unknown): string[] =>
  (Array.isArray(tools) ? tools : []).flatMap((tool) => {
    if (!isObject(tool)) return [];
    // A namespace of tools (Codex groups an MCP server's tools so).
    if (Array.isArray(tool.tools)) return toolNames(tool.tools).map((name) => qualified(str(tool.name), name));
    return typeof tool.name === 'string' ? [tool.name] : [];
  });

// ---- writing answers -----------------------------------------------------------------

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
const words = (text: string) => text.match(/\S+\s*/g) ?? [''];

interface Sink {
  event(name: string, data: Json): void;
  /** True once the client went away. */
  gone(): boolean;
}

function sseSink(res: http.ServerResponse): Sink {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  return {
    event(name, data) {
      if (!res.destroyed) res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    gone: () => res.destroyed || res.writableEnded,
  };
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function slowWords(text: string, sink: Sink, chunkMs: number, limitMs: number, write: (w: string) => void) {
  const until = Date.now() + limitMs;
  for (let i = 0; !sink.gone() && Date.now() < until; i++) {
    write(`${text} (${i}) `);
    await delay(chunkMs);
  }
}

async function anthropicAnswer(request: ModelRequest, reply: ModelReply, res: http.ServerResponse, o: Timing) {
  const message = { id: id('msg'), type: 'message', role: 'assistant', model: request.model };
  const usage = { input_tokens: 10, output_tokens: 5 };
  const toolUse = 'tool' in reply ? { type: 'tool_use', id: id('toolu'), name: reply.tool, input: reply.input } : null;
  const finalText = 'text' in reply ? reply.text : '';
  if (!request.stream) {
    const content = toolUse ? [toolUse] : [{ type: 'text', text: finalText }];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...message, content, stop_reason: toolUse ? 'tool_use' : 'end_turn', usage }));
    return;
  }
  const sink = sseSink(res);
  sink.event('message_start', {
    type: 'message_start',
    message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage },
  });
  if (toolUse) {
    sink.event('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { ...toolUse, input: {} },
    });
    sink.event('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(toolUse.input) },
    });
  } else {
    sink.event('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    });
    const delta = (text: string) =>
      sink.event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
    if ('slow' in reply) await slowWords(reply.slow, sink, o.slowChunkMs, o.slowLimitMs, delta);
    else for (const word of words(finalText)) delta(word);
  }
  sink.event('content_block_stop', { type: 'content_block_stop', index: 0 });
  sink.event('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: toolUse ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: 5 },
  });
  sink.event('message_stop', { type: 'message_stop' });
  res.end();
}

async function openaiAnswer(request: ModelRequest, reply: ModelReply, res: http.ServerResponse, o: Timing) {
  const responseId = id('resp');
  const usage = {
    input_tokens: 10,
    input_tokens_details: null,
    output_tokens: 5,
    output_tokens_details: null,
    total_tokens: 15,
  };
  const base = { id: responseId, object: 'response', model: request.model, created_at: Math.floor(Date.now() / 1000) };
  const item: Json =
    'tool' in reply
      ? {
          type: 'function_call',
          id: id('fc'),
          call_id: id('call'),
          ...openaiToolName(request.body, reply.tool),
          arguments: JSON.stringify(reply.input),
          status: 'completed',
        }
      : { type: 'message', id: id('msg'), role: 'assistant', status: 'completed', content: [] };
  const finalText = 'text' in reply ? reply.text : '';
  if (!request.stream) {
    if (item.type === 'message') item.content = [{ type: 'output_text', text: finalText, annotations: [] }];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...base, status: 'completed', output: [item], usage }));
    return;
  }
  const sink = sseSink(res);
  sink.event('response.created', {
    type: 'response.created',
    response: { ...base, status: 'in_progress', output: [] },
  });
  sink.event('response.output_item.added', { type: 'response.output_item.added', output_index: 0, item });
  let streamed = '';
  if (item.type === 'message') {
    const delta = (text: string) => {
      streamed += text;
      sink.event('response.output_text.delta', {
        type: 'response.output_text.delta',
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        delta: text,
      });
    };
    if ('slow' in reply) await slowWords(reply.slow, sink, o.slowChunkMs, o.slowLimitMs, delta);
    else for (const word of words(finalText)) delta(word);
    item.content = [{ type: 'output_text', text: streamed, annotations: [] }];
  }
  sink.event('response.output_item.done', { type: 'response.output_item.done', output_index: 0, item });
  sink.event('response.completed', {
    type: 'response.completed',
    response: { ...base, status: 'completed', output: [item], usage },
  });
  res.end();
}

interface Timing {
  slowChunkMs: number;
  slowLimitMs: number;
}

function refuse(api: ModelApi, res: http.ServerResponse): void {
  res.writeHead(401, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify(
      api === 'anthropic'
        ? { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }
        : {
            error: {
              message: 'Incorrect API key provided.',
              type: 'invalid_request_error',
              code: 'invalid_api_key',
              param: null,
            },
          },
    ),
  );
}

export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const script = options.script ?? parleyScript;
  const refused = new Set(options.refuseKeys ?? []);
  const timing: Timing = { slowChunkMs: options.slowChunkMs ?? 200, slowLimitMs: options.slowLimitMs ?? 120_000 };
  const requests: ModelRequest[] = [];
  const events = new EventEmitter();
  const sockets = new Set<Socket>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(error) } }));
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const api: ModelApi | null = path.endsWith('/messages')
      ? 'anthropic'
      : path.endsWith('/responses')
        ? 'openai'
        : null;
    if (req.method === 'POST' && path.endsWith('/messages/count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: Math.ceil(raw.length / 4) }));
      return;
    }
    if (req.method !== 'POST' || api === null) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'not_found_error', message: `no ${req.method} ${path} here` } }));
      return;
    }
    let body: Json;
    try {
      const parsed: unknown = JSON.parse(raw);
      body = isObject(parsed) ? parsed : {};
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'the body is not JSON' } }));
      return;
    }
    const bearer = /^Bearer (.+)$/i.exec(String(req.headers.authorization ?? ''))?.[1];
    const key = (req.headers['x-api-key'] as string | undefined) ?? bearer ?? null;
    const request: ModelRequest = {
      seq: requests.length + 1,
      api,
      path,
      key,
      model: str(body.model),
      stream: body.stream === true,
      system: api === 'anthropic' ? textOf(body.system) : textOf(body.instructions),
      messages: api === 'anthropic' ? anthropicMessages(body) : openaiMessages(body),
      tools: toolNames(body.tools),
      body,
    };
    requests.push(request);
    res.once('close', () => {
      if (!res.writableFinished) {
        request.aborted = true;
        events.emit('change');
      }
    });
    if (key !== null && refused.has(key)) {
      request.reply = { refused: 401 };
      events.emit('change');
      refuse(api, res);
      return;
    }
    const reply = script(request);
    request.reply = reply;
    events.emit('change');
    if (api === 'anthropic') await anthropicAnswer(request, reply, res, timing);
    else await openaiAnswer(request, reply, res, timing);
    events.emit('change');
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    openaiUrl: `${url}/v1`,
    requests,
    waitFor(match, what, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = requests.find(match);
          if (!found) return;
          clearTimeout(timer);
          events.off('change', check);
          resolve(found);
        };
        const timer = setTimeout(() => {
          events.off('change', check);
          reject(new Error(`timed out waiting for the model server to see ${what}`));
        }, timeoutMs);
        events.on('change', check);
        check();
      });
    },
    refuseKey(key) {
      refused.add(key);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
