import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSettings } from '../../shared/domain';
import { distPaths } from '../paths';
import { groupAlive, processAlive } from '../runs/process-tree';
import { getRole } from '../store/queries/roles';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import { sessionFile, type OpenAiTurn } from './openai-compatible';

const KEY = 'sk-test-5ecret-Key-0123456789';

interface ChatRequest {
  headers: http.IncomingHttpHeaders;
  body: {
    model: string;
    stream?: boolean;
    temperature?: number;
    messages: { role: string; content: string | null; tool_calls?: unknown[]; tool_call_id?: string }[];
    tools?: { type: string; function: { name: string } }[];
  };
  /** Resolves when the client goes away before the answer ended. */
  aborted: Promise<void>;
}

type Responder = (request: ChatRequest, res: http.ServerResponse) => void;

/**
 * A chat-completions server on loopback. Each request is answered by the next
 * responder in line; the requests are kept for the test to look at.
 */
class FakeModelServer {
  readonly requests: ChatRequest[] = [];
  /** When each request arrived (ms since the epoch). */
  readonly arrivals: number[] = [];
  private readonly responders: Responder[] = [];
  private readonly waiting: Array<{ n: number; resolve: (request: ChatRequest) => void }> = [];
  private server = http.createServer((req, res) => this.handle(req, res));
  url = '';

  async start(): Promise<this> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/v1`;
    return this;
  }

  answer(...responders: Responder[]): void {
    this.responders.push(...responders);
  }

  /** Resolves with the n-th request (0-based) once it has arrived. */
  request(n: number): Promise<ChatRequest> {
    const arrived = this.requests[n];
    if (arrived) return Promise.resolve(arrived);
    return new Promise((resolve) => this.waiting.push({ n, resolve }));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404).end();
      return;
    }
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const aborted = new Promise<void>((resolve) => res.once('close', () => !res.writableEnded && resolve()));
      const request: ChatRequest = { headers: req.headers, body: JSON.parse(raw) as ChatRequest['body'], aborted };
      this.requests.push(request);
      this.arrivals.push(Date.now());
      for (const waiter of this.waiting.filter((w) => w.n === this.requests.length - 1)) {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        waiter.resolve(request);
      }
      // Like the strict chat templates of Mistral, Gemma and Llama 2 (vLLM, llama.cpp).
      const broken = alternationError(request.body.messages);
      if (broken) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: broken } }));
        return;
      }
      const responder = this.responders.shift();
      if (!responder)
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"no answer scripted"}}');
      else responder(request, res);
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * What a strict chat template says about a history, or null when it takes it: after
 * the system message, user and assistant take turns, starting with the user; tool
 * results follow the assistant message that called them, and an assistant answer
 * follows them.
 */
function alternationError(messages: ChatRequest['body']['messages']): string | null {
  let expect: 'user' | 'assistant' = 'user';
  let inTools = false;
  for (const [index, message] of messages.entries()) {
    if (message.role === 'system') {
      if (index !== 0) return 'System message must be first';
      continue;
    }
    if (message.role === 'tool') {
      if (!inTools) return 'Tool results must follow an assistant message with tool calls';
      continue;
    }
    if (inTools && message.role !== 'assistant') return 'After tool results must come an assistant message';
    inTools = false;
    if (message.role !== expect) return 'Conversation roles must alternate user/assistant/user/assistant/...';
    if (message.role === 'assistant' && message.tool_calls?.length) {
      inTools = true;
      continue;
    }
    expect = message.role === 'user' ? 'assistant' : 'user';
  }
  return null;
}

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

function sse(res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
}

/** Streams tool calls the way OpenAI does: id and name first, the arguments in pieces. */
const toolCalls =
  (...calls: { name: string; args: object }[]): Responder =>
  (_request, res) => {
    sse(res);
    res.write(chunk({ role: 'assistant', content: null }));
    calls.forEach((call, index) => {
      const args = JSON.stringify(call.args);
      const cut = Math.floor(args.length / 2);
      res.write(
        chunk({
          tool_calls: [{ index, id: `call_${index}`, type: 'function', function: { name: call.name, arguments: '' } }],
        }),
      );
      res.write(chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, cut) } }] }));
      res.write(chunk({ tool_calls: [{ index, function: { arguments: args.slice(cut) } }] }));
    });
    res.write(chunk({}, 'tool_calls'));
    res.end('data: [DONE]\n\n');
  };

/** Streams a text answer a few characters at a time. */
const text =
  (answer: string): Responder =>
  (_request, res) => {
    sse(res);
    res.write(chunk({ role: 'assistant', content: '' }));
    for (let i = 0; i < answer.length; i += 4) res.write(chunk({ content: answer.slice(i, i + 4) }));
    res.write(chunk({}, 'stop'));
    res.end('data: [DONE]\n\n');
  };

/** Starts an answer and never finishes it. */
const hang: Responder = (_request, res) => {
  sse(res);
  res.write(chunk({ role: 'assistant', content: 'Thinking about it' }));
  res.write(chunk({ content: '...\n' }));
};

/** Answers with an error status (and a Retry-After, if given). */
const status =
  (code: number, retryAfter?: string): Responder =>
  (_request, res) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
    res.writeHead(code, headers).end(JSON.stringify({ error: { message: `status ${code} from the test server` } }));
  };

/** Never answers at all: no status line, no headers. */
const silent: Responder = () => {};

/** Refuses the key, quoting it back the way some servers do. */
const unauthorized: Responder = (request, res) => {
  const key = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
  res.writeHead(401, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${key}`, type: 'invalid_request_error' } }));
};

describe('openai-compatible adapter', () => {
  let t: TestInstallation;
  let model: FakeModelServer;
  afterEach(async () => {
    await t?.close();
    await model?.close();
  });

  const settings = (extra: Partial<Extract<AgentSettings, { adapter: 'openai-compatible' }>> = {}): AgentSettings => ({
    adapter: 'openai-compatible',
    baseUrl: model.url,
    model: 'test-model',
    apiKey: KEY,
    instructions: 'You are terse.',
    ...extra,
  });

  async function conversationWith(agent: AgentSettings) {
    const role = await t.owner('roles.create', { name: 'assistant', agent });
    return { role, conversation: await t.owner('conversations.open', { roleId: role.id }) };
  }

  const turnEnded = (id: number, count: number) =>
    t.waitFor(async () => {
      const detail = await t.owner('conversations.get', { id });
      const ended = detail.turns.filter((turn) => turn.status !== 'running');
      return ended.length >= count ? detail : undefined;
    }, `turn ${count} to end`);

  /** Everything the database holds about turns and messages, as one string. */
  const dbDump = () =>
    JSON.stringify([
      t.installation.db.prepare('SELECT * FROM turns').all(),
      t.installation.db.prepare('SELECT * FROM messages').all(),
      t.installation.db.prepare('SELECT * FROM inputs').all(),
      t.installation.db.prepare('SELECT * FROM runs').all(),
    ]);

  it('runs the role tools the model calls, posts the report, and makes the final answer the reply', async () => {
    model = await new FakeModelServer().start();
    t = await openTestInstallation();
    const { conversation } = await conversationWith(settings({ temperature: 0.2 }));
    model.answer(
      toolCalls({ name: 'report', args: { text: 'Looking into it.' } }, { name: 'context', args: {} }),
      text('You are talking to me in a conversation.'),
    );
    await t.owner('conversations.send', { id: conversation.id, text: 'Where are we?' });
    const detail = await turnEnded(conversation.id, 1);
    expect(detail.turns.at(-1)).toMatchObject({ status: 'done' });
    expect(detail.messages.map((m) => [m.author.kind, m.body])).toEqual([
      ['person', 'Where are we?'],
      ['role', 'Looking into it.'],
      ['role', 'You are talking to me in a conversation.'],
    ]);

    const [first, second] = [model.requests[0]!, model.requests[1]!];
    expect(first.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(first.body).toMatchObject({ model: 'test-model', stream: true, temperature: 0.2 });
    expect(first.body.tools!.map((tool) => tool.function.name).sort()).toEqual([
      'context',
      'history',
      'peers',
      'reply',
      'report',
      'send',
    ]);
    expect(first.body.messages[0]!.role).toBe('system');
    expect(first.body.messages[0]!.content).toMatch(
      /^You are terse\.\n\nYou are assistant, in your conversation with alice\./,
    );
    expect(first.body.messages.slice(1)).toEqual([{ role: 'user', content: 'alice: Where are we?' }]);
    // The second request carries the calls and their results from the role API.
    const [, , call, reportResult, contextResult] = second.body.messages;
    expect(call).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_0' }, { id: 'call_1' }] });
    expect(reportResult).toMatchObject({ role: 'tool', tool_call_id: 'call_0' });
    expect(reportResult!.content).not.toMatch(/^error/);
    expect(contextResult).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
    const described = JSON.parse(contextResult!.content!) as { context: unknown };
    expect(described).toMatchObject({ token: 'run', role: { name: 'assistant' } });
    expect(described.context).toMatchObject({
      kind: 'conversation',
      id: conversation.id,
      person: { name: 'alice' },
      root: { kind: 'conversation' },
    });
  });

  it('keeps the history as the session and continues it in the next turn', async () => {
    model = await new FakeModelServer().start();
    t = await openTestInstallation();
    const { conversation } = await conversationWith(settings());
    model.answer(text('First answer.'), toolCalls({ name: 'context', args: {} }), text('Second answer.'));
    await t.owner('conversations.send', { id: conversation.id, text: 'first question' });
    await turnEnded(conversation.id, 1);
    const session = (await t.owner('conversations.get', { id: conversation.id })).conversation.run.session!;
    expect(session).toMatch(/^oai-[0-9a-f]{32}$/);
    const file = sessionFile(path.join(t.installation.dataDir, 'turns', 'turn'), session);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);

    await t.owner('conversations.send', { id: conversation.id, text: 'second question' });
    const detail = await turnEnded(conversation.id, 2);
    expect(detail.messages.filter((m) => m.author.kind === 'role').map((m) => m.body)).toEqual([
      'First answer.',
      'Second answer.',
    ]);
    expect(detail.conversation.run.session).toBe(session);
    const messages = model.requests[1]!.body.messages.map((m) => [m.role, m.content]);
    expect(messages.slice(1)).toEqual([
      ['user', 'alice: first question'],
      ['assistant', 'First answer.'],
      ['user', 'alice: second question'],
    ]);
    // The tool round of the second turn is in the history as well.
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { messages: { role: string }[] };
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
  });

  it('stops in the middle of a streamed answer: the request is aborted, the worker is gone, the session kept', async () => {
    model = await new FakeModelServer().start();
    t = await openTestInstallation({ stopGraceMs: 5_000 });
    const { conversation } = await conversationWith(settings());
    model.answer(hang, text('After the stop.'));
    await t.owner('conversations.send', { id: conversation.id, text: 'take your time' });
    const request = await model.request(0);
    const run = (await t.owner('conversations.get', { id: conversation.id })).conversation.run;
    const turn = t.installation.db.prepare("SELECT pid FROM turns WHERE status = 'running'").get() as { pid: number };
    expect(turn.pid).toBeGreaterThan(0);
    // The streamed part shows as live output while the answer is on its way.
    await t.waitFor(
      () => t.installation.runs.liveOutput(run.id!).includes('Thinking about it...'),
      'the streamed start of the answer',
    );

    const started = Date.now();
    expect(await t.owner('conversations.stop', { id: conversation.id })).toEqual({ stopped: true });
    // SIGTERM was enough: no wait for the SIGKILL grace.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(processAlive(turn.pid)).toBe(false);
    expect(groupAlive(turn.pid)).toBe(false);
    await request.aborted;
    const detail = await t.owner('conversations.get', { id: conversation.id });
    expect(detail.turns.at(-1)).toMatchObject({ status: 'stopped', reason: 'Stopped by alice' });
    expect(detail.conversation.run.session).toBe(run.session);

    // The next turn continues the session in one user message: the stopped request, the stop notice, the new one.
    await t.owner('conversations.send', { id: conversation.id, text: 'still there?' });
    const after = await turnEnded(conversation.id, 2);
    expect(after.turns.at(-1)).toMatchObject({ status: 'done' });
    const messages = model.requests[1]!.body.messages.slice(1).map((m) => [m.role, m.content]);
    expect(messages).toHaveLength(1);
    expect(messages[0]![0]).toBe('user');
    expect(messages[0]![1]).toMatch(
      /^alice: take your time\n\n\[notice\] You were stopped by alice .*\n\nalice: still there\?$/s,
    );
  });

  it('keeps the history alternating after a failed turn, and tells the next turn it failed', async () => {
    model = await new FakeModelServer().start();
    t = await openTestInstallation();
    const { conversation } = await conversationWith(settings());
    // A tool round, then the server fails: the history ends with tool results and no answer.
    model.answer(toolCalls({ name: 'context', args: {} }), status(500));
    await t.owner('conversations.send', { id: conversation.id, text: 'first' });
    const failed = await turnEnded(conversation.id, 1);
    expect(failed.turns.at(-1)).toMatchObject({ status: 'failed' });
    // A turn that fails before anything came back.
    model.answer(status(500));
    await t.owner('conversations.send', { id: conversation.id, text: 'second' });
    await turnEnded(conversation.id, 2);
    model.answer(text('Back again.'));
    await t.owner('conversations.send', { id: conversation.id, text: 'third' });
    const detail = await turnEnded(conversation.id, 3);
    expect(detail.turns.map((turn) => turn.status)).toEqual(['failed', 'failed', 'done']);
    expect(detail.messages.at(-1)!.body).toBe('Back again.');
    const last = model.requests.at(-1)!.body.messages.slice(1);
    expect(last.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    expect(last[3]!.content).toMatch(/^\[Parley: this turn ended before an answer/);
    expect(last[4]!.content).toMatch(
      /^alice: second\n\n\[notice\] Your previous turn failed: the model server answered 500 .*\n\nalice: third$/s,
    );
  });

  it('says so when the server does not answer in time, or stops in the middle of its answer', async () => {
    model = await new FakeModelServer().start();
    t = await openTestInstallation();
    const { conversation } = await conversationWith(settings({ requestTimeoutSec: 1, idleTimeoutSec: 1 }));
    model.answer(silent);
    await t.owner('conversations.send', { id: conversation.id, text: 'hello' });
    const first = await turnEnded(conversation.id, 1);
    expect(first.messages.at(-1)!.body).toBe(
      'The agent failed: the model server did not answer within 1 s (the role’s requestTimeoutSec); is it overloaded, or still loading the model?',
    );
    model.answer(hang);
    await t.owner('conversations.send', { id: conversation.id, text: 'again' });
    const second = await turnEnded(conversation.id, 2);
    expect(second.messages.at(-1)!.body).toBe(
      'The agent failed: the model server sent nothing for 1 s in the middle of its answer (the role’s idleTimeoutSec)',
    );
  });

  it('tries again when the server is busy (429, 503), waiting as long as Retry-After says', async () => {
    model = await new FakeModelServer().start();
    t = await openTestInstallation();
    const { conversation } = await conversationWith(settings());
    model.answer(status(429, '1'), status(503, '0'), text('Made it.'));
    await t.owner('conversations.send', { id: conversation.id, text: 'hello' });
    const detail = await turnEnded(conversation.id, 1);
    expect(detail.turns.at(-1)).toMatchObject({ status: 'done' });
    expect(detail.messages.at(-1)!.body).toBe('Made it.');
    expect(model.requests).toHaveLength(3);
    expect(model.arrivals[1]! - model.arrivals[0]!).toBeGreaterThanOrEqual(1_000);
    // A wait longer than Parley waits is not waited for: the turn says when to try again.
    model.answer(status(429, '3600'));
    await t.owner('conversations.send', { id: conversation.id, text: 'more' });
    const refused = await turnEnded(conversation.id, 2);
    expect(refused.messages.at(-1)!.body).toBe(
      'The agent failed: the model server is busy (429 Too Many Requests) and asks to wait 3600 s; send the message again later.',
    );
  });

  it('fails with a clear message when the server refuses the key, and never shows the key', async () => {
    model = await new FakeModelServer().start();
    t = await openTestInstallation();
    const { conversation } = await conversationWith(settings());
    model.answer(unauthorized);
    await t.owner('conversations.send', { id: conversation.id, text: 'hello' });
    const detail = await turnEnded(conversation.id, 1);
    expect(detail.turns.at(-1)).toMatchObject({ status: 'failed' });
    expect(detail.messages.at(-1)!.body).toBe(
      'The agent failed: the model server answered 401 Unauthorized: Incorrect API key provided: [api key]. Check the API key in the role’s settings.',
    );
    expect(model.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(dbDump()).not.toContain(KEY);
  });

  it('says when the server cannot be reached', async () => {
    model = await new FakeModelServer().start();
    const url = model.url;
    await model.close();
    t = await openTestInstallation();
    const { conversation } = await conversationWith(settings({ baseUrl: url }));
    await t.owner('conversations.send', { id: conversation.id, text: 'hello' });
    const detail = await turnEnded(conversation.id, 1);
    expect(detail.messages.at(-1)!.body).toBe(
      `The agent failed: cannot reach the model server at ${url}/chat/completions: ` +
        (t.installation.sandbox.available
          ? 'the server refused the connection, or the sandbox does not let the agent reach it'
          : 'ECONNREFUSED'),
    );
  });

  it('never sends a stored key back through the app API, and keeps it across updates on the same server', async () => {
    model = await new FakeModelServer().start();
    t = await openTestInstallation();
    const created = await t.owner('roles.create', { name: 'assistant', agent: settings() });
    expect(created.agent).not.toHaveProperty('apiKey');
    expect(created.hasApiKey).toBe(true);
    const member = (await t.owner('people.add', { name: 'bob', kind: 'member' })).person;
    const listed = await t.as(member)('roles.list', {});
    expect(JSON.stringify(listed)).not.toContain(KEY);
    expect(listed[0]).toMatchObject({ hasApiKey: true, agent: { baseUrl: model.url, model: 'test-model' } });

    // An update without the key keeps it (the UI cannot send back what it never saw)…
    const { apiKey: _, ...withoutKey } = settings() as Extract<AgentSettings, { adapter: 'openai-compatible' }>;
    const updated = await t.owner('roles.update', { id: created.id, agent: { ...withoutKey, model: 'other-model' } });
    expect(JSON.stringify(updated)).not.toContain(KEY);
    expect(getRole(t.installation.db, created.id)!.agent).toMatchObject({ model: 'other-model', apiKey: KEY });
    // …and so does a rename.
    await t.owner('roles.update', { id: created.id, name: 'helper' });
    expect(getRole(t.installation.db, created.id)!.agent).toMatchObject({ apiKey: KEY });
    // Pointing the role at another server needs the key given again: the stored one is not sent elsewhere.
    const moved = await t.owner('roles.update', {
      id: created.id,
      agent: { ...withoutKey, baseUrl: 'http://127.0.0.2:9/v1' },
    });
    expect(moved.hasApiKey).toBe(false);
    expect(getRole(t.installation.db, created.id)!.agent).not.toHaveProperty('apiKey');
  });
});

describe('openai-compatible worker', () => {
  let model: FakeModelServer;
  afterEach(async () => {
    await model?.close();
  });

  /** Runs the worker by hand and collects everything it writes. */
  async function runWorker(turn: OpenAiTurn): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [path.join(path.dirname(distPaths.scriptedAgent), 'openai-worker.js')], {
      env: { PATH: process.env.PATH ?? '', PARLEY_TOKEN: 'prt_not-a-real-token', PARLEY_API: '/nonexistent.sock' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (data: string) => (stdout += data));
    child.stderr.setEncoding('utf8').on('data', (data: string) => (stderr += data));
    child.stdin.end(JSON.stringify(turn));
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, stdout, stderr };
  }

  const turn = (sessionDir: string, overrides: Partial<OpenAiTurn> = {}): OpenAiTurn => ({
    baseUrl: model.url,
    model: 'test-model',
    apiKey: KEY,
    temperature: null,
    maxSteps: 2,
    system: 'system prompt',
    prompt: 'alice: hi',
    session: 'oai-00000000000000000000000000000000',
    sessionFile: path.join(sessionDir, 'oai-00000000000000000000000000000000.json'),
    historyBudgetChars: 200_000,
    requestTimeoutMs: 60_000,
    idleTimeoutMs: 60_000,
    ...overrides,
  });

  it('keeps the key out of its output and errors, even when the server quotes it', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-oai-'));
    try {
      model = await new FakeModelServer().start();
      // A tool call whose role API call fails (no Parley here), an answer quoting the key, then a 401.
      model.answer(toolCalls({ name: 'report', args: { text: `key is ${KEY}` } }), text(`Your key is ${KEY}.`));
      const answered = await runWorker(turn(dir));
      expect(answered.code).toBe(0);
      expect(answered.stdout).toContain('"type":"result"');
      expect(answered.stdout + answered.stderr).not.toContain(KEY);
      // The tool's failure went back to the model as its result.
      expect(model.requests[1]!.body.messages.at(-1)!.content).toMatch(/^error: cannot reach Parley/);

      model.answer(unauthorized);
      const refused = await runWorker(turn(dir));
      expect(refused.code).toBe(1);
      expect(refused.stdout).toContain('401');
      expect(refused.stdout + refused.stderr).not.toContain(KEY);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ends the turn after maxSteps tool-call rounds and says so', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-oai-'));
    try {
      model = await new FakeModelServer().start();
      const again = toolCalls({ name: 'context', args: {} });
      model.answer(again, again, again);
      const result = await runWorker(turn(dir, { maxSteps: 2 }));
      expect(result.code).toBe(0);
      const events = result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; output?: string });
      expect(events.at(-1)).toEqual({
        type: 'result',
        output: '[Parley ended this turn after 2 tool-call rounds (the role’s maxSteps)]',
      });
      expect(model.requests).toHaveLength(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
