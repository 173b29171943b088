// The role tools the openai-compatible worker offers the model, and how a call of one is
// run against the role API: the answer, or an error in words the model can act on.
import { callRoleApi, type RoleApiTarget } from '../role-api/client';
import type { ToolCall } from './openai-history';
import { scrub } from './openai-output';

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

export const toolDefinitions = tools.map((tool) => ({
  type: 'function' as const,
  function: { name: tool.name, description: tool.description, parameters: tool.parameters },
}));

export async function runTool(target: RoleApiTarget, call: ToolCall): Promise<string> {
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
