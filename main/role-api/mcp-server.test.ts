import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import { MCP_TOOL_NAMES } from './mcp-server';
import { NO_TOPIC_MESSAGE } from './protocol';

/** `parley mcp` started the way an agent's MCP client starts it: the `parley` launcher on its PATH. */
async function connect(t: TestInstallation, env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'parley-test', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: path.join(t.installation.dataDir, 'bin', 'parley'),
    args: ['mcp'],
    env: { PATH: process.env.PATH ?? '', ...env },
    stderr: 'pipe',
  });
  await client.connect(transport);
  return client;
}

const textOf = (result: unknown) =>
  (result as CallToolResult).content.map((part) => (part.type === 'text' ? part.text : '')).join('');

/** The CLI's answer to the same call, for comparing messages. */
function cli(t: TestInstallation, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve) => {
    execFile(path.join(t.installation.dataDir, 'bin', 'parley'), args, { env }, (_error, _stdout, stderr) =>
      resolve(stderr.trim()),
    );
  });
}

describe('parley mcp', () => {
  let alice: TestInstallation;
  let bob: TestInstallation;
  let dir: string;
  let conversationId: number;
  let roleId: number;
  let runEnv: Record<string, string>;
  const clients: Client[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'parley-mcp-'));
    alice = await openPeer('alice');
    bob = await openPeer('bob');
    // Bob's researcher takes texts and says nothing back.
    await bob.owner('roles.create', {
      name: 'researcher',
      agent: { adapter: 'command', command: [process.execPath, '-e', 'void 0'] },
    });
    // Alice's worker hands its turn's token to the test and works until it is stopped.
    const tokenFile = path.join(dir, 'token.json');
    const worker = await alice.owner('roles.create', {
      name: 'worker',
      agent: {
        adapter: 'command',
        command: [
          process.execPath,
          '-e',
          `require('node:fs').writeFileSync(${JSON.stringify(tokenFile)}, JSON.stringify({ PARLEY_TOKEN: process.env.PARLEY_TOKEN, PARLEY_API: process.env.PARLEY_API })); setInterval(() => {}, 1000);`,
        ],
        // It writes the token in its own folder: in the sandbox it writes nowhere else.
        cwd: dir,
      },
    });
    roleId = worker.id;
    await pair(bob, alice, { inviter: ['researcher'], acceptor: ['worker'] });
    conversationId = (await alice.owner('conversations.open', { roleId })).id;
    await alice.owner('conversations.send', { id: conversationId, text: 'go' });
    runEnv = await alice.waitFor(() => {
      try {
        return JSON.parse(readFileSync(tokenFile, 'utf8')) as Record<string, string>;
      } catch {
        return undefined;
      }
    }, 'the running turn’s token');
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    if (conversationId) await alice.owner('conversations.stop', { id: conversationId });
    await alice?.close();
    await bob?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function client(env: Record<string, string>) {
    const c = await connect(alice, env);
    clients.push(c);
    return c;
  }

  it('lists the six tools with their input schemas, every parameter described', async () => {
    const c = await client(runEnv);
    const { tools } = await c.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...MCP_TOOL_NAMES].sort());
    const send = tools.find((tool) => tool.name === 'send')!;
    expect(send.inputSchema).toMatchObject({ type: 'object', required: ['to', 'text'] });
    expect(tools.find((tool) => tool.name === 'context')!.annotations).toMatchObject({ readOnlyHint: true });
    // Every parameter says what it is for.
    for (const tool of tools)
      for (const [name, property] of Object.entries(tool.inputSchema.properties ?? {}))
        expect((property as { description?: string }).description, `${tool.name}.${name}`).toMatch(/\w{3}/);
  });

  it('sends from a run token to the peer’s role', async () => {
    const c = await client(runEnv);
    const result = await c.callTool({ name: 'send', arguments: { to: 'bob/researcher', text: 'hello over MCP' } });
    expect(result.isError ?? false).toBe(false);
    const received = await bob.waitFor(async () => {
      const threads = await bob.owner('threads.list', { peerStarted: true });
      return threads.find((thread) => thread.lastText?.body === 'hello over MCP');
    }, 'bob to receive the text');
    expect(received).toMatchObject({ localRole: 'researcher', peerRole: 'worker', startedBy: 'peer' });
    const threads = await alice.owner('threads.list', { root: { kind: 'conversation', id: conversationId } });
    expect(threads).toMatchObject([{ peerRole: 'researcher', localRole: 'worker', startedBy: 'local' }]);
    expect(threads[0]!.threadId).toBe(received.threadId);
  });

  it('tells a run its context and root', async () => {
    const c = await client(runEnv);
    const result = await c.callTool({ name: 'context', arguments: {} });
    expect(JSON.parse(textOf(result))).toMatchObject({
      token: 'run',
      role: { id: roleId, name: 'worker' },
      context: { kind: 'conversation', id: conversationId, root: { kind: 'conversation', id: conversationId } },
    });
  });

  it('answers Claude Code’s permission prompts with a person’s word', async () => {
    const c = await client({ ...runEnv, PARLEY_MCP_PERMISSION_TOOL: '1' });
    const asked = async (title: string, approve: boolean) => {
      const answer = c.callTool({ name: 'permission', arguments: { tool_name: title, input: { path: 'notes.txt' } } });
      const waiting = await alice.waitFor(async () => {
        const approvals = await alice.owner('approvals.list', {});
        return approvals.find((approval) => approval.state === 'pending' && approval.title === title);
      }, `the ${title} request`);
      await alice.owner('approvals.decide', { id: waiting.id, approve });
      return JSON.parse(textOf(await answer)) as unknown;
    };
    expect(await asked('Write', true)).toEqual({ behavior: 'allow', updatedInput: { path: 'notes.txt' } });
    expect(await asked('Bash', false)).toEqual({ behavior: 'deny', message: 'alice denied it' });
  });

  it('lets a role token read, and refuses its every send with the no-topic message, like the CLI', async () => {
    const { token } = await alice.owner('roles.token', { id: roleId });
    const env = { PARLEY_TOKEN: token, PARLEY_API: alice.installation.roleApiSocket };
    const c = await client(env);
    const context = await c.callTool({ name: 'context', arguments: {} });
    expect(JSON.parse(textOf(context))).toEqual({
      token: 'role',
      role: { id: roleId, name: 'worker' },
      run: null,
      context: null,
      peers: [{ peer: 'bob', state: 'online', roles: [{ address: 'bob/researcher', description: '' }] }],
    });
    for (const [name, args] of [
      ['send', { to: 'bob/researcher', text: 'no topic' }],
      ['reply', { text: 'no topic' }],
      ['report', { text: 'no topic' }],
    ] as const) {
      const result = await c.callTool({ name, arguments: args });
      expect(result.isError, name).toBe(true);
      expect(textOf(result), name).toBe(NO_TOPIC_MESSAGE);
    }
    const history = await c.callTool({ name: 'history', arguments: { with: 'bob/researcher' } });
    expect(history.isError ?? false).toBe(false);
    expect(await cli(alice, ['send', '--to', 'bob/researcher', 'no topic'], env)).toBe(`parley: ${NO_TOPIC_MESSAGE}`);
  });

  it('returns the role API’s refusals as tool errors with the CLI’s messages', async () => {
    const c = await client(runEnv);
    const result = await c.callTool({ name: 'history', arguments: { with: 'carol/writer' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('no connection named "carol"; you can address bob/researcher');
    expect(await cli(alice, ['history', 'carol/writer'], runEnv)).toBe(`parley: ${textOf(result)}`);
    const reply = await c.callTool({ name: 'reply', arguments: { text: 'hi' } });
    expect(reply.isError).toBe(true);
    expect(`parley: ${textOf(reply)}`).toBe(await cli(alice, ['reply', 'hi'], runEnv));
    const invalid = await c.callTool({ name: 'send', arguments: { to: 'nobody', text: 'hi' } });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toContain('must look like PEER/ROLE, e.g. bob/researcher');
  });

  it('says what is missing when it was not started by Parley, and when the token is no longer valid', async () => {
    const bare = await client({});
    const result = await bare.callTool({ name: 'context', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('PARLEY_TOKEN and PARLEY_API are not set: this command is for agents that Parley runs');
    const stale = await client({ ...runEnv, PARLEY_TOKEN: 'prt_not-a-token' });
    const refused = await stale.callTool({ name: 'context', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe('this token is not valid (a run token works only while its turn runs)');
  });
});
