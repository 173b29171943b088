// Parley's openai-compatible worker: one process per turn. It reads an OpenAiTurn as
// JSON on stdin, continues the session's message history (openai-history.ts), streams
// chat completions (openai-chat.ts) and runs the role tools the model calls against the
// role API (openai-tools.ts), until the model answers without tool calls or the turn's
// `maxSteps` tool-call rounds are used. It writes OpenAiEvent JSON lines on stdout
// (openai-output.ts). SIGTERM (Stop) aborts the request in flight and ends the process;
// the history keeps every step that was complete.
import type { RoleApiTarget } from '../role-api/client';
import { complete } from './openai-chat';
import type { OpenAiTurn } from './openai-compatible';
import { addPrompt, loadSession, recent, saveHistory, type ChatMessage } from './openai-history';
import { emit, hideApiKey, live, scrub, TurnError } from './openai-output';
import { runTool } from './openai-tools';
import { readTurn } from './turn-input';

const controller = new AbortController();
/** The session being worked on, so a failure can be written into it. */
let current: { file: string; history: ChatMessage[] } | null = null;

function stop(): void {
  controller.abort();
  // The socket closes with the process: the server sees the request end.
  process.exit(143);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

async function main(): Promise<void> {
  const turn = await readTurn<OpenAiTurn>();
  hideApiKey(turn.apiKey);
  emit({ type: 'session', session: turn.session });
  const token = process.env.PARLEY_TOKEN;
  const socketPath = process.env.PARLEY_API;
  if (!token || !socketPath) throw new TurnError('PARLEY_TOKEN and PARLEY_API are not set: run me from Parley');
  const target: RoleApiTarget = { socketPath, token };

  const saved = loadSession(turn.sessionFile);
  const history = saved.messages;
  addPrompt(history, turn.prompt, saved.failed);
  saveHistory(turn.sessionFile, history);
  current = { file: turn.sessionFile, history };

  for (let round = 0; ; round++) {
    const messages: ChatMessage[] = [
      { role: 'system', content: turn.system },
      ...recent(history, turn.historyBudgetChars),
    ];
    const answer = await complete(turn, messages, true, controller.signal);
    if (answer.toolCalls.length === 0) {
      history.push({ role: 'assistant', content: answer.content });
      saveHistory(turn.sessionFile, history);
      emit({ type: 'result', output: scrub(answer.content.trim()) });
      return;
    }
    const step: ChatMessage[] = [{ role: 'assistant', content: answer.content || null, tool_calls: answer.toolCalls }];
    if (round >= turn.maxSteps) {
      // Out of rounds: the calls are answered as not run, so the history stays valid.
      for (const call of answer.toolCalls)
        step.push({
          role: 'tool',
          tool_call_id: call.id,
          content: 'error: not run, this turn’s tool-call limit was reached',
        });
      history.push(...step);
      saveHistory(turn.sessionFile, history);
      const note = `[Parley ended this turn after ${turn.maxSteps} tool-call rounds (the role’s maxSteps)]`;
      emit({ type: 'result', output: scrub(answer.content.trim() ? `${answer.content.trim()}\n\n${note}` : note) });
      return;
    }
    for (const call of answer.toolCalls) {
      live(`→ ${call.function.name} ${call.function.arguments.slice(0, 200)}`);
      const result = await runTool(target, call);
      step.push({ role: 'tool', tool_call_id: call.id, content: result });
    }
    history.push(...step);
    saveHistory(turn.sessionFile, history);
  }
}

/** Ends once everything written to stdout has been handed over. */
const exit = (code: number) => process.stdout.write('', () => process.exit(code));

main().then(
  () => exit(0),
  (error: unknown) => {
    if (controller.signal.aborted) process.exit(143);
    const message = scrub(
      error instanceof TurnError ? error.message : `the openai-compatible worker failed: ${String(error)}`,
    );
    // The next turn continues from here and is told this one failed.
    if (current)
      try {
        saveHistory(current.file, current.history, message);
      } catch {
        // The history stays as it was after the last complete step.
      }
    emit({ type: 'error', message });
    exit(1);
  },
);
