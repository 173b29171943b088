// The prompt Parley gives a coding-agent CLI (Claude Code, Codex) for one turn: where
// the run is and whom it answers for, how to reach people and peers, then what arrived.
import path from 'node:path';
import type { AgentContext, TurnRequest } from './types';
import { inputsAsText } from './types';

/** The standing text for the agent's system prompt: who it is and how it acts. */
export function standingInstructions(request: TurnRequest): string {
  const lines = [
    `You are the agent behind the role "${request.role.name}" in Parley, an app where people and their agents work with the agents of people they trust.`,
    'Each of your turns starts with what arrived since the last one: messages from people, comments on a task, texts from peer roles, and notices from Parley.',
    'You act in Parley only through the tools of the MCP server "parley" (the `parley` command on your PATH does the same):',
    '- context: where this run is, whom it answers for and how to report there (JSON)',
    '- report {text}: post to the root right away (the person’s conversation, the task log, or the agent conversation this answers for)',
    '- send {to: "PEER/ROLE", text}: write to a peer’s role; its answer arrives in a later turn, not as the tool’s result',
    '- reply {text}: answer the peer in the agent conversation this run works in',
    '- history {with: "PEER/ROLE"}: everything between this role and that peer role',
  ];
  const extra = request.role.agent.instructions?.trim();
  if (extra) lines.push('', 'Instructions from the role’s owner:', extra);
  return lines.join('\n');
}

function describeContext(context: AgentContext): string[] {
  const lines = [context.summary];
  if (context.kind === 'thread' && context.root.kind !== 'thread')
    lines.push(`This agent conversation answers for ${context.root.summary}.`);
  if (context.task) {
    lines.push(`Task #${context.task.id} "${context.task.title}" (${context.task.status}).`);
    if (context.task.body.trim()) lines.push('', context.task.body.trim(), '');
  }
  lines.push(context.reporting);
  lines.push('The parley tools (send, reply, report, history, context) do what the `parley` commands named here do.');
  return lines;
}

/** One turn's prompt: the run's context and root, then the inputs. */
export function turnPrompt(request: TurnRequest, notice?: string): string {
  const parts = ['[Parley] ' + describeContext(request.context).join('\n')];
  if (notice) parts.push(`[notice] ${notice}`);
  parts.push(inputsAsText(request.inputs));
  return parts.join('\n\n') + '\n';
}

/** The `parley` launcher Parley puts first on every agent's PATH. */
export function parleyLauncher(request: TurnRequest): string {
  const first = (request.env.PATH ?? '').split(path.delimiter)[0];
  return first ? path.join(first, 'parley') : 'parley';
}
