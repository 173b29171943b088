// `parley mcp`: the role API as a stdio MCP server, for agents that speak MCP (Claude
// Code, Codex, ACP agents). Six tools, the same rules and messages as the `parley` CLI, acting
// with the turn's run token from PARLEY_TOKEN on the socket in PARLEY_API. A role
// token reads (context, history); every send from it is refused: it has no topic.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import packageJson from '../../package.json';
import { callRoleApi, ConnectError, type RoleApiTarget } from './client';
import {
  PERMISSION_TOOL_VARIABLE,
  peerRoleSchema,
  RoleApiError,
  roleApiRequests,
  type RoleApiCommand,
} from './protocol';

export const MCP_TOOL_NAMES = ['send', 'reply', 'report', 'history', 'context', 'peers'] as const;

const NOT_SET = 'PARLEY_TOKEN and PARLEY_API are not set: this command is for agents that Parley runs';

const text = roleApiRequests.report.shape.text;
const peerRole = peerRoleSchema.describe(
  'PEER/ROLE: the name of a connection and one of the roles it lets you address, e.g. bob/researcher (the `peers` tool lists them)',
);

/** One tool call against the role API; refusals come back as tool errors with the CLI's message. */
async function call(target: RoleApiTarget | null, command: RoleApiCommand, body: object): Promise<CallToolResult> {
  if (!target) return { isError: true, content: [{ type: 'text', text: NOT_SET }] };
  try {
    const result = await callRoleApi(target, command, body);
    return { content: [{ type: 'text', text: JSON.stringify(result, null, 2) }] };
  } catch (error) {
    if (error instanceof RoleApiError || error instanceof ConnectError)
      return { isError: true, content: [{ type: 'text', text: error.message }] };
    throw error;
  }
}

/**
 * Claude Code's `--permission-prompt-tool`: a request to use a tool waits for a person's
 * word through the role API's `permission` call, and the word is Claude Code's answer.
 */
async function askPerson(target: RoleApiTarget | null, toolName: string, input: unknown): Promise<CallToolResult> {
  const deny = (message: string): CallToolResult => ({
    content: [{ type: 'text', text: JSON.stringify({ behavior: 'deny', message }) }],
  });
  if (!target) return deny(NOT_SET);
  const shown = input === undefined ? undefined : JSON.stringify(input);
  try {
    const answer = await callRoleApi(target, 'permission', {
      title: toolName.slice(0, 500),
      ...(shown ? { input: shown.slice(0, 20_000) } : {}),
    });
    if (answer.outcome === 'approved')
      return { content: [{ type: 'text', text: JSON.stringify({ behavior: 'allow', updatedInput: input ?? {} }) }] };
    // A denial with a reason is Parley's own, given without asking anyone.
    if (answer.outcome === 'cancelled' || answer.reason !== undefined) return deny(`nobody answered: ${answer.reason}`);
    return deny(`${answer.by} denied it`);
  } catch (error) {
    return deny(`Parley could not ask a person: ${(error as Error).message}`);
  }
}

/** The server with its six tools; `target` is null when the environment names no token. */
export function createMcpServer(target: RoleApiTarget | null, options: { permissionTool?: boolean } = {}): McpServer {
  const server = new McpServer(
    { name: 'parley', version: packageJson.version },
    {
      instructions:
        'Parley’s role tools: how an agent run by Parley talks to people and to the agents of peers. ' +
        'Call `context` first to learn where this run is, whom it answers for and how to report there; `peers` lists whom you can ask.',
    },
  );
  server.registerTool(
    'send',
    {
      title: 'Send to a peer role',
      description:
        'Send TEXT to a role a peer exposes (PEER/ROLE, e.g. bob/researcher), in the agent conversation for the topic this run works on. ' +
        'It is created on first use; the answer does not come back as this tool’s result but as a new input in a later turn.',
      inputSchema: {
        to: peerRole,
        text: text.describe(
          'What to say to the peer role, in plain words or Markdown. Its agent reads it as from you.',
        ),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ to, text: body }) => call(target, 'send', { to, text: body }),
  );
  server.registerTool(
    'reply',
    {
      title: 'Reply in this agent conversation',
      description:
        'Answer the peer role of the agent conversation this run works in. Only in an agent conversation; in a person’s conversation or on a task use `report`.',
      inputSchema: { text: text.describe('Your answer to the peer role, in plain words or Markdown.') },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ text: body }) => call(target, 'reply', { text: body }),
  );
  server.registerTool(
    'report',
    {
      title: 'Report to the root',
      description:
        'Post TEXT right away to what this run answers for: a message in the person’s conversation, an entry in the task’s log, or (for an agent conversation a peer started) a send on it.',
      inputSchema: {
        text: text.describe(
          'What to post, in plain words or Markdown: the person or the task’s readers see it as from you.',
        ),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ text: body }) => call(target, 'report', { text: body }),
  );
  server.registerTool(
    'history',
    {
      title: 'History with a peer role',
      description: 'Everything between this role and PEER/ROLE, every agent conversation, in time order (JSON).',
      inputSchema: { with: peerRole },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ with: peerRole }) => call(target, 'history', { with: peerRole }),
  );
  server.registerTool(
    'context',
    {
      title: 'This run’s context',
      description:
        'Where this run is, the topic (root) it answers for, how to report there, the trust it works under (the peer’s level, or own), and whom you can ask (JSON).',
      inputSchema: z.strictObject({}),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => call(target, 'context', {}),
  );
  server.registerTool(
    'peers',
    {
      title: 'Whom you can ask',
      description:
        'The connections to other installations: whether each is online, offline (a send waits for it) or paused (sends are refused), and the roles it lets you address as PEER/ROLE, with what they do (JSON).',
      inputSchema: z.strictObject({}),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => call(target, 'peers', {}),
  );
  if (options.permissionTool)
    server.registerTool(
      'permission',
      {
        title: 'Ask a person',
        description: 'Parley answers Claude Code’s permission prompts here: a person approves or denies each request.',
        inputSchema: { tool_name: z.string(), input: z.unknown().optional(), tool_use_id: z.string().optional() },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      ({ tool_name, input }) => askPerson(target, tool_name, input),
    );
  return server;
}

/** `parley mcp`: serves on stdin/stdout until the client goes away. */
export async function mcpCommand(args: string[]): Promise<void> {
  if (args.length > 0) throw new Error('`parley mcp` takes no arguments');
  const token = process.env.PARLEY_TOKEN;
  const socketPath = process.env.PARLEY_API;
  const target = token && socketPath ? { token, socketPath } : null;
  if (!target) process.stderr.write(`parley mcp: ${NOT_SET}; every tool will say so\n`);
  const server = createMcpServer(target, { permissionTool: process.env[PERMISSION_TOOL_VARIABLE] === '1' });
  const transport = new StdioServerTransport();
  // The client closing our stdin ends the server; a kept-alive socket to Parley must not hold it.
  const done = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  await done;
  await server.close();
  process.exit(0);
}
