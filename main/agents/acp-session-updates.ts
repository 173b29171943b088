// What the agent's `session/update`s tell during a prompt: its message text (the last
// message is the turn's output), its thoughts, tool calls and plan as live lines, and
// whether it waits on its model.
import type * as acp from '@agentclientprotocol/sdk';
import type { ToolCallSeen } from './acp-permissions';
import { emit, live, preview } from './acp-output';

/**
 * A message chunk the agent's CLI wrote of its own, not its model: claude-agent-acp marks
 * Claude Code's notices (a gateway warning naming the gateway's address) `informational`.
 */
export function cliNotice(update: { _meta?: { [key: string]: unknown } | null }): boolean {
  const claudeCode = update._meta?.claudeCode as { kind?: unknown } | undefined;
  return claudeCode?.kind === 'informational';
}

/** The agent's message text of one prompt turn, in segments: a tool call or a new message starts the next. */
class Messages {
  private segments: string[] = [''];
  private messageId: string | null | undefined;
  private pending = '';

  add(text: string, messageId: string | null | undefined): void {
    if (messageId && this.messageId && messageId !== this.messageId) this.close();
    if (messageId) this.messageId = messageId;
    this.segments[this.segments.length - 1] += text;
    this.pending += text;
    // People watching see whole lines, not tokens.
    const newline = this.pending.lastIndexOf('\n');
    if (newline >= 0) {
      for (const line of this.pending.slice(0, newline).split('\n')) if (line.trim()) live(preview(line));
      this.pending = this.pending.slice(newline + 1);
    }
  }

  close(): void {
    if (this.pending.trim()) live(preview(this.pending));
    this.pending = '';
    if (this.segments.at(-1)!.trim()) this.segments.push('');
    this.messageId = undefined;
  }

  /** The agent's last message: the turn's output. */
  last(): string {
    return (
      [...this.segments]
        .reverse()
        .find((segment) => segment.trim())
        ?.trim() ?? ''
    );
  }
}

/** One prompt's updates, as they come. */
export class SessionUpdates {
  readonly messages = new Messages();
  private readonly toolTitles = new Map<string, string>();
  /** The tool calls seen, for the permission requests that name them. */
  readonly toolCalls = new Map<string, ToolCallSeen>();
  private thought = '';
  /** What the updates say about the agent's model, told to Parley when it changes. */
  private modelState: 'answered' | 'waiting' | null = null;

  closeThought(): void {
    if (this.thought.trim()) live(`thinking: ${preview(this.thought, 200)}`);
    this.thought = '';
  }

  private model(signal: 'answered' | 'waiting'): void {
    if (this.modelState !== signal) emit({ type: 'model', signal });
    this.modelState = signal;
  }

  take(update: acp.SessionUpdate): void {
    if (update.sessionUpdate === 'agent_message_chunk' && cliNotice(update)) {
      // Shown on the run for the person, kept out of the answer (which may go to a peer).
      if (update.content.type === 'text') live(`the agent’s own notice: ${preview(update.content.text, 200)}`);
      return;
    }
    if (
      update.sessionUpdate === 'agent_message_chunk' ||
      update.sessionUpdate === 'agent_thought_chunk' ||
      update.sessionUpdate === 'tool_call'
    )
      this.model('answered');
    // A tool's result goes back to the model: the agent waits on it again.
    else if (
      update.sessionUpdate === 'tool_call_update' &&
      (update.status === 'completed' || update.status === 'failed')
    )
      this.model('waiting');
    switch (update.sessionUpdate) {
      case 'agent_message_chunk':
        this.closeThought();
        if (update.content.type === 'text') this.messages.add(update.content.text, update.messageId);
        return;
      case 'agent_thought_chunk':
        if (update.content.type === 'text') this.thought += update.content.text;
        return;
      case 'tool_call': {
        this.messages.close();
        this.closeThought();
        this.toolTitles.set(update.toolCallId, update.title);
        this.toolCalls.set(update.toolCallId, update);
        const input = update.rawInput === undefined ? '' : ` ${preview(JSON.stringify(update.rawInput), 200)}`;
        live(`→ ${update.title}${input}`);
        return;
      }
      case 'tool_call_update': {
        if (update.title) this.toolTitles.set(update.toolCallId, update.title);
        if (update.status === 'completed' || update.status === 'failed')
          live(`← ${this.toolTitles.get(update.toolCallId) ?? 'tool'} ${update.status}`);
        return;
      }
      case 'plan':
        live(
          `plan: ${update.entries.map((entry) => `${entry.status === 'completed' ? '✓' : '·'} ${entry.content}`).join('; ')}`,
        );
        return;
      default:
        return;
    }
  }
}
