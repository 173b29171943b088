// Agents know whom they can ask (DESIGN §11.8): `parley context`, `parley peers` and
// the MCP tools list the connections, whether each is online or paused, and the peer
// roles each lets this role address, with their descriptions; refusals name the
// alternatives. Three real installations on loopback; the agent is a real process
// running the real `parley` CLI.
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
import { exitCodes } from './protocol';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

describe('peer discovery', () => {
  let alice: TestInstallation;
  let bob: TestInstallation;
  let carol: TestInstallation;
  let dir: string;
  let runEnv: Record<string, string>;
  let conversationId: number;
  let client: Client;

  const expected = [
    {
      peer: 'bob',
      state: 'online',
      roles: [
        { address: 'bob/researcher', description: 'Finds sources and summarises them.' },
        { address: 'bob/writer', description: 'Writes and edits prose.' },
      ],
    },
    { peer: 'carol', state: 'paused', roles: [{ address: 'carol/analyst', description: 'Runs the numbers.' }] },
  ];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'parley-peers-'));
    alice = await openPeer('alice');
    bob = await openPeer('bob');
    carol = await openPeer('carol');
    const quiet = { adapter: 'command' as const, command: [process.execPath, '-e', 'void 0'] };
    await bob.owner('roles.create', {
      name: 'researcher',
      description: 'Finds sources and summarises them.',
      agent: quiet,
    });
    await bob.owner('roles.create', { name: 'writer', description: 'Writes and edits prose.', agent: quiet });
    await bob.owner('roles.create', { name: 'private', description: 'Not for peers.', agent: quiet });
    await carol.owner('roles.create', { name: 'analyst', description: 'Runs the numbers.', agent: quiet });
    // Alice's worker hands its turn's token to the test and works until it is stopped.
    const tokenFile = path.join(dir, 'token.json');
    const worker = await alice.owner('roles.create', {
      name: 'worker',
      agent: {
        adapter: 'command',
        command: [
          process.execPath,
          '-e',
          `require('node:fs').writeFileSync(${JSON.stringify(tokenFile)}, JSON.stringify({ PARLEY_TOKEN: process.env.PARLEY_TOKEN, PARLEY_API: process.env.PARLEY_API, PATH: process.env.PATH })); setInterval(() => {}, 1000);`,
        ],
      },
    });
    await pair(bob, alice, { inviter: ['researcher', 'writer'], acceptor: ['worker'] });
    const { acceptorConnectionId: toCarol } = await pair(carol, alice, { inviter: ['analyst'], acceptor: [] });
    await alice.owner('connections.pause', { id: toCarol });
    conversationId = (await alice.owner('conversations.open', { roleId: worker.id })).id;
    await alice.owner('conversations.send', { id: conversationId, text: 'go' });
    runEnv = await alice.waitFor(() => {
      try {
        return JSON.parse(readFileSync(tokenFile, 'utf8')) as Record<string, string>;
      } catch {
        return undefined;
      }
    }, 'the running turn’s token');
    client = new Client({ name: 'parley-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: path.join(alice.installation.dataDir, 'bin', 'parley'),
        args: ['mcp'],
        env: runEnv,
        stderr: 'pipe',
      }),
    );
  });

  afterAll(async () => {
    await client?.close();
    if (conversationId) await alice.owner('conversations.stop', { id: conversationId });
    for (const t of [alice, bob, carol]) await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function parley(args: string[]): Promise<CliResult> {
    return new Promise((resolve) => {
      execFile('parley', args, { env: runEnv }, (error, stdout, stderr) =>
        resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
      );
    });
  }

  const textOf = (result: unknown) =>
    (result as CallToolResult).content.map((part) => (part.type === 'text' ? part.text : '')).join('');

  it('lists the connections, their state and the roles each lets this role address in `parley context`', async () => {
    const result = await parley(['context']);
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { peers: unknown }).peers).toEqual(expected);
  });

  it('lists the same with `parley peers` and the MCP `peers` and `context` tools', async () => {
    const result = await parley(['peers']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(expected);
    const tool = await client.callTool({ name: 'peers', arguments: {} });
    expect(tool.isError ?? false).toBe(false);
    expect(JSON.parse(textOf(tool))).toEqual(expected);
    const context = await client.callTool({ name: 'context', arguments: {} });
    expect((JSON.parse(textOf(context)) as { peers: unknown }).peers).toEqual(expected);
  });

  it('names the alternatives when the connection does not exist', async () => {
    const result = await parley(['send', '--to', 'zed/helper', 'hi']);
    expect(result.code).toBe(exitCodes.not_found);
    expect(result.stderr).toBe(
      'parley: no connection named "zed"; you can address bob/researcher, bob/writer, carol/analyst (paused)\n',
    );
    const history = await client.callTool({ name: 'history', arguments: { with: 'zed/helper' } });
    expect(textOf(history)).toBe(
      'no connection named "zed"; you can address bob/researcher, bob/writer, carol/analyst (paused)',
    );
  });

  it('names the roles a peer lets this role address when it asks for another', async () => {
    const result = await parley(['send', '--to', 'bob/private', 'hi']);
    expect(result.code).toBe(exitCodes.not_exposed);
    expect(result.stderr).toBe(
      'parley: bob does not let you address a role named "private"; bob lets you address bob/researcher, bob/writer\n',
    );
  });
});
