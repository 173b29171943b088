// The openai-compatible worker's session history: the chat messages of a session's past
// turns, kept in its session file, shaped so that every chat template takes them.
//
// The history always alternates user and assistant, as strict chat templates
// (Mistral, Gemma, Llama 2 in vLLM and llama.cpp) demand: a turn that was stopped or
// failed before its answer leaves its user message, and the next turn's inputs are
// merged into it (with a notice that it failed); one cut off after a tool round gets
// an assistant line saying so.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

interface SessionFile {
  version: 1;
  messages: ChatMessage[];
  /** The last turn failed before its answer: why. The next one is told. */
  failed?: string | null;
}

export function loadSession(file: string): { messages: ChatMessage[]; failed: string | null } {
  let saved: SessionFile;
  try {
    saved = JSON.parse(readFileSync(file, 'utf8')) as SessionFile;
  } catch {
    return { messages: [], failed: null };
  }
  const messages = alternate(Array.isArray(saved.messages) ? saved.messages : []);
  // An assistant's tool calls without their results would be refused by the server.
  while (messages.length > 0) {
    const last = messages.at(-1)!;
    if (last.role === 'assistant' && last.tool_calls?.length) messages.pop();
    else break;
  }
  return { messages, failed: typeof saved.failed === 'string' ? saved.failed : null };
}

/** An assistant line for a turn that ended after a tool round, before its answer. */
const cutOff = (failed: string | null) =>
  `[Parley: this turn ended before an answer${failed ? `; it failed: ${failed}` : ' (it was stopped)'}]`;

/**
 * A history every chat template takes: after the system prompt, user and assistant
 * take turns, starting with the user; tool results follow the call they answer. Two
 * user messages in a row (an older Parley's stopped or failed turn) become one.
 */
function alternate(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const message of messages) {
    const last = out.at(-1);
    if (message.role === 'system') continue;
    if (message.role === 'tool') {
      // A result without its call is refused; drop it.
      if (last?.role === 'tool' || (last?.role === 'assistant' && last.tool_calls?.length)) out.push(message);
      continue;
    }
    if (message.role === 'user') {
      if (last?.role === 'user') {
        out[out.length - 1] = { role: 'user', content: `${last.content}\n\n${message.content}` };
        continue;
      }
      if (last?.role === 'tool') out.push({ role: 'assistant', content: cutOff(null) });
      out.push(message);
      continue;
    }
    // An assistant message: it answers a user message or tool results.
    if (!last) continue;
    if (last.role === 'assistant' && !last.tool_calls?.length) {
      out[out.length - 1] = {
        role: 'assistant',
        content: [last.content, message.content].filter(Boolean).join('\n\n'),
      };
      if (message.tool_calls?.length)
        (out[out.length - 1] as { tool_calls?: ToolCall[] }).tool_calls = message.tool_calls;
      continue;
    }
    out.push(message);
  }
  return out;
}

/**
 * The turn's prompt as the next user message. After a turn that ended before its
 * answer, it joins that turn's user message (told that the turn failed, if it did);
 * after one cut off in a tool round, it follows a line saying so.
 */
export function addPrompt(messages: ChatMessage[], prompt: string, failed: string | null): void {
  const last = messages.at(-1);
  if (last?.role === 'tool') {
    messages.push({ role: 'assistant', content: cutOff(failed) }, { role: 'user', content: prompt });
  } else if (last?.role === 'user') {
    const notice = failed
      ? `[notice] Your previous turn failed: ${failed.replace(/\.$/, '')}. What you were given then is above.\n\n`
      : '';
    messages[messages.length - 1] = { role: 'user', content: `${last.content}\n\n${notice}${prompt}` };
  } else messages.push({ role: 'user', content: prompt });
}

/** Written whole and renamed into place, so a stop mid-write leaves the previous version. */
export function saveHistory(file: string, messages: ChatMessage[], failed: string | null = null): void {
  const data: SessionFile = { version: 1, messages, ...(failed ? { failed } : {}) };
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, JSON.stringify(data), { mode: 0o600 });
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

const size = (message: ChatMessage) =>
  (message.content?.length ?? 0) + ('tool_calls' in message ? JSON.stringify(message.tool_calls ?? []).length : 0);

/** The most recent whole turns that fit the budget (always at least the current one). */
export function recent(messages: ChatMessage[], budget: number): ChatMessage[] {
  let total = messages.reduce((sum, message) => sum + size(message), 0);
  let start = 0;
  while (total > budget) {
    const next = messages.findIndex((message, index) => index > start && message.role === 'user');
    if (next < 0) break;
    for (let i = start; i < next; i++) total -= size(messages[i]!);
    start = next;
  }
  return messages.slice(start);
}
