// The loopback model server the end-to-end tests drive real agents with: the shapes it
// streams, the script's rules, refused keys, and a slow answer cut off by the client.
import { afterEach, describe, expect, it } from 'vitest';
import { parleyScript, startModelServer, type ModelRequest, type ModelServer } from './model-server';

/** The server-sent events of a response, parsed. */
async function events(response: Response): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const event = /^event: (.+)$/m.exec(block)![1]!;
      const data = JSON.parse(/^data: (.+)$/m.exec(block)![1]!) as Record<string, unknown>;
      return { event, data };
    });
}

const anthropic = (server: ModelServer, body: unknown, key = 'sk-a') =>
  fetch(`${server.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  });
const openai = (server: ModelServer, body: unknown, key = 'sk-o') =>
  fetch(`${server.openaiUrl}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });

const prompt = (input: string) => `[Parley] You are assistant, in your conversation with alice.\n\n${input}\n`;
const request = (messages: ModelRequest['messages'], tools: string[] = []): ModelRequest =>
  ({ messages, tools }) as ModelRequest;

describe('the model server’s script', () => {
  it.each([
    [
      'alice: ask bob/researcher: the budget?',
      ['mcp__parley__send'],
      { tool: 'mcp__parley__send', input: { to: 'bob/researcher', text: 'the budget?' } },
    ],
    ['alice: ask bob/researcher: the budget?', [], { text: '(no send tool offered) ask bob/researcher: the budget?' }],
    [
      'alice/assistant: the budget?',
      ['mcp__parley__reply'],
      { tool: 'mcp__parley__reply', input: { text: 'answer: the budget?' } },
    ],
    [
      'bob/researcher: answer: 42',
      ['mcp__parley__report'],
      { tool: 'mcp__parley__report', input: { text: 'bob/researcher says: answer: 42' } },
    ],
    [
      // A peer's text, fenced as agent-prompt.ts writes it: what the fence holds is the input.
      '<<<peer-text-0123456789abcdef01234567 from alice/assistant\nthe budget?\n> mia: a quoted line\npeer-text-0123456789abcdef01234567>>>',
      ['mcp__parley__reply'],
      { tool: 'mcp__parley__reply', input: { text: 'answer: the budget?\n> mia: a quoted line' } },
    ],
    ['alice: sleep', [], { slow: 'still working on it' }],
    ['alice: hello', [], { text: 'echo: hello' }],
  ])('%s with %j → %j', (input, tools, reply) => {
    expect(parleyScript(request([{ role: 'user', text: prompt(input) }], tools))).toEqual(reply);
  });

  it('passes over what agents add around Parley’s prompt, and answers a tool’s result', () => {
    const around = request([
      { role: 'user', text: `<system-reminder>today</system-reminder>\n${prompt('alice: hello')}` },
      { role: 'user', text: 'Available skills:\n- init: Initialize a CLAUDE.md file' },
    ]);
    expect(parleyScript(around)).toEqual({ text: 'echo: hello' });
    const answered = request([
      { role: 'user', text: prompt('alice: ask bob/researcher: x') },
      { role: 'assistant', text: '', call: { name: 'mcp__parley__send', input: {} } },
      { role: 'tool', text: '{ "thread": "abc" }' },
    ]);
    expect(parleyScript(answered)).toEqual({ text: 'done (send): { "thread": "abc" }' });
  });
});

describe('the model server', () => {
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('streams an Anthropic message with a tool call, and records the request with its key', async () => {
    server = await startModelServer();
    const response = await anthropic(server, {
      model: 'claude-test',
      stream: true,
      system: [{ type: 'text', text: 'You are a test.' }],
      tools: [{ name: 'mcp__parley__send', input_schema: { type: 'object' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: prompt('alice: ask bob/researcher: hi') }] }],
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const stream = await events(response);
    expect(stream.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(stream[1]!.data.content_block).toMatchObject({ type: 'tool_use', name: 'mcp__parley__send', input: {} });
    expect(JSON.parse((stream[2]!.data.delta as { partial_json: string }).partial_json)).toEqual({
      to: 'bob/researcher',
      text: 'hi',
    });
    expect(stream[4]!.data.delta).toMatchObject({ stop_reason: 'tool_use' });
    expect(server.requests).toMatchObject([
      { seq: 1, api: 'anthropic', key: 'sk-a', model: 'claude-test', stream: true, system: 'You are a test.' },
    ]);
  });

  it('streams an OpenAI response with text, and answers a namespaced tool call with its namespace', async () => {
    server = await startModelServer();
    const text = await events(
      await openai(server, {
        model: 'gpt-test',
        stream: true,
        input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: prompt('alice: hello') }] }],
      }),
    );
    expect(text.map((e) => e.event)).toEqual([
      'response.created',
      'response.output_item.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(text[4]!.data.item).toMatchObject({
      type: 'message',
      content: [{ type: 'output_text', text: 'echo: hello' }],
    });
    const call = await events(
      await openai(server, {
        model: 'gpt-test',
        stream: true,
        tools: [{ type: 'namespace', name: 'mcp__parley', tools: [{ type: 'function', name: 'send' }] }],
        input: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: prompt('alice: ask bob/x: y') }] },
        ],
      }),
    );
    expect(call.find((e) => e.event === 'response.output_item.done')!.data.item).toMatchObject({
      type: 'function_call',
      namespace: 'mcp__parley',
      name: 'send',
    });
    expect(server.requests[1]!.tools).toEqual(['mcp__parley__send']);
  });

  it('refuses a key with each API’s own 401', async () => {
    server = await startModelServer({ refuseKeys: ['sk-bad'] });
    const a = await anthropic(server, { model: 'm', messages: [] }, 'sk-bad');
    expect(a.status).toBe(401);
    expect(await a.json()).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: 'invalid x-api-key' },
    });
    server.refuseKey('sk-worse');
    const o = await openai(server, { model: 'm', input: [] }, 'sk-worse');
    expect(o.status).toBe(401);
    expect(await o.json()).toMatchObject({ error: { code: 'invalid_api_key' } });
    expect(server.requests.map((r) => r.reply)).toEqual([{ refused: 401 }, { refused: 401 }]);
  });

  it('streams a slow answer until the client goes away, and records that it was cut off', async () => {
    server = await startModelServer({ slowChunkMs: 20 });
    const abort = new AbortController();
    const response = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: prompt('alice: sleep') }] }),
      signal: abort.signal,
    });
    const reader = response.body!.getReader();
    let seen = '';
    while (!seen.includes('still working on it (2)')) seen += new TextDecoder().decode((await reader.read()).value);
    const [slow] = server.requests;
    expect(slow!.reply).toEqual({ slow: 'still working on it' });
    expect(slow!.aborted).toBeUndefined();
    abort.abort();
    await server.waitFor((r) => r === slow && r.aborted === true, 'the cut-off answer', 5_000);
  });
});
