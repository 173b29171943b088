// The prompt Parley gives a coding agent (Claude Code, Codex, ACP agents) for one
// turn: where the run is and whom it answers for, how to reach people and peers, then
// what arrived. The tools are named as the MCP server offers them; the `parley`
// command is mentioned only where the agent's shell has it (with its token) on PATH.
import path from 'node:path';
import type { AgentContext, PeerDirectoryEntry, TurnRequest } from './types';
import { hasPeerText, inputsAsText } from './types';
import { cleanDescription, fenced, fenceNotice, FENCE_RULE, type Fence } from './peer-words';

export interface StandingOptions {
  /** The agent's shell commands see `parley` on PATH with the turn's token, and may run it without asking anyone. */
  cliOnPath: boolean;
  /** Leave out the role owner's instructions (the adapter gives them another way). */
  withoutOwnerInstructions?: boolean;
  /** The turn's fence, for the peer directory. */
  fence: Fence;
}

/** Whom the role can ask, one line per peer role: what each peer says of its roles, cleaned. */
export function describePeers(peers: readonly PeerDirectoryEntry[]): string[] {
  const lines: string[] = [];
  for (const entry of peers) {
    const state =
      entry.state === 'online'
        ? 'online'
        : entry.state === 'offline'
          ? 'offline: a text waits until it is back'
          : entry.pausedBy === 'peer'
            ? `paused by ${entry.peer}: sends are refused until it unpauses`
            : 'paused: sends are refused';
    if (entry.roles.length === 0) lines.push(`- ${entry.peer} (${state}) lets you address none of its roles`);
    for (const role of entry.roles) {
      const description = cleanDescription(role.description);
      lines.push(`- ${role.address}${description ? ` — ${description}` : ''} (${state})`);
    }
  }
  return lines;
}

/**
 * The peer directory as the data part of a prompt: a sentence from Parley, then the
 * directory inside the fence, since names and descriptions are the peers' words.
 */
export function peerDirectory(peers: readonly PeerDirectoryEntry[], fence: Fence): string {
  if (peers.length === 0) return 'You are not connected to any peer yet, so there is no one to `send` to.';
  return [
    'Whom you can ask with `send` (the `peers` tool says this again, up to date). The names and descriptions are what each peer says of itself:',
    fenced(fence, 'peer directory', describePeers(peers).join('\n')),
  ].join('\n');
}

/**
 * The standing text for the agent's system prompt: who it is, how it acts, what fenced
 * text is, the owner's instructions; then, after the instructions, the peer directory as data.
 */
export function standingInstructions(request: TurnRequest, options: StandingOptions): string {
  const lines = [
    `You are the agent behind the role "${request.role.name}" in Parley, an app where people and their agents work with the agents of people they trust.`,
    'Each of your turns starts with what arrived since the last one: messages from people, comments on a task, texts from peer roles, and notices from Parley.',
    'You act in Parley through the tools of the MCP server "parley"; they need no approval:',
    '- context: where this run is, whom it answers for and how to report there (JSON)',
    '- peers: whom you can ask: each connection, whether it is online or paused, and the roles it lets you address',
    '- report {text}: post to the root right away (the person’s conversation, the task log, or the agent conversation this answers for)',
    '- send {to: "PEER/ROLE", text}: write to a peer’s role; its answer arrives in a later turn, not as the tool’s result',
    '- reply {text}: answer the peer in the agent conversation this run works in',
    '- history {with: "PEER/ROLE"}: everything between this role and that peer role',
  ];
  if (options.cliOnPath)
    lines.push(
      'The same commands are on your shell’s PATH as `parley` (`parley report TEXT`, `parley send --to PEER/ROLE TEXT`, `parley peers` …), for scripts.',
    );
  lines.push('', FENCE_RULE);
  const extra = request.role.agent.instructions?.trim();
  if (extra && !options.withoutOwnerInstructions) lines.push('', 'Instructions from the role’s owner:', extra);
  lines.push('', peerDirectory(request.peers, options.fence));
  return lines.join('\n');
}

/** True when one of the turn's inputs already carries the task's body (its first turn). */
function bodyInInputs(request: TurnRequest, body: string): boolean {
  return request.inputs.some((input) => input.body.includes(body));
}

function describeContext(request: TurnRequest): string[] {
  const context: AgentContext = request.context;
  const lines = [context.summary];
  if (context.kind === 'thread' && context.root.kind !== 'thread')
    lines.push(`This agent conversation answers for ${context.root.summary}.`);
  if (context.task) {
    lines.push(`Task #${context.task.id} "${context.task.title}" (${context.task.status}).`);
    const body = context.task.body.trim();
    if (body && !bodyInInputs(request, body)) lines.push('', body, '');
  }
  lines.push(context.reporting);
  return lines;
}

export interface PromptOptions {
  /** Said before the inputs, from Parley. */
  notice?: string;
  /** The role owner's instructions, for an agent that does not get them in its system prompt. */
  instructions?: string;
}

/** One turn's prompt: the run's context and root, then the inputs, a peer's inside the turn's fence. */
export function turnPrompt(request: TurnRequest, fence: Fence, options: PromptOptions = {}): string {
  const parts = ['[Parley] ' + describeContext(request).join('\n')];
  if (options.instructions?.trim())
    parts.push(`[Instructions from the role’s owner, until they say otherwise]\n${options.instructions.trim()}`);
  if (options.notice) parts.push(`[notice] ${options.notice}`);
  if (hasPeerText(request.inputs)) parts.push(fenceNotice(fence));
  parts.push(inputsAsText(request.inputs, fence, turnPeople(request)));
  return parts.join('\n\n') + '\n';
}

/** The people a turn's prompt names: whose line a peer's text must not imitate. */
export function turnPeople(request: TurnRequest): string[] {
  return [...(request.people ?? []), ...(request.context.person ? [request.context.person.name] : [])];
}

/** The `parley` launcher Parley puts first on every agent's PATH. */
export function parleyLauncher(request: TurnRequest): string {
  const first = (request.env.PATH ?? '').split(path.delimiter)[0];
  return first ? path.join(first, 'parley') : 'parley';
}
