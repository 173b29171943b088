// Parley's ACP client: one process per turn (the turn's process, in the turn's process
// group). It reads an AcpTurn as JSON on stdin, starts the ACP agent as its child, and
// speaks the Agent Client Protocol to it with the official SDK:
//   initialize → session/load (or session/resume) of the run's session, else session/new
//   with Parley's MCP server → the model, when the role sets one → session/prompt.
// It writes AcpEvent JSON lines on stdout: the session, live lines from the agent's
// `session/update`s, the agent's last message as the result, or an error.
//
// The agent gets a process group of its own, and Stop's first SIGTERM reaches this worker
// alone (the launch says `stopsItsChildren`), which then does what ACP asks of a client:
// `session/cancel`, wait (bounded) for the prompt to end with `cancelled`, then end the
// agent's group. The session stays with the agent for the next turn.
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import type { AcpEvent, AcpTurn } from './acp';
import { callRoleApi } from '../role-api/client';
import {
  answerFromPerson,
  decidePermission,
  questionFor,
  type PermissionQuestion,
  type PersonsAnswer,
  type ToolCallSeen,
} from './acp-permissions';
import { chooseAcpMode } from './trust-modes';

const emit = (event: AcpEvent) => process.stdout.write(JSON.stringify(event) + '\n');
const live = (text: string) => emit({ type: 'live', text });
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One line, not too long (as cli-agent's preview, kept here so the worker stays small). */
function preview(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

/** The agent went away before it answered. */
class AgentGone extends Error {}

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

/** The part of a JSON-RPC error people can read. */
function errorText(error: unknown): string {
  if (error instanceof acp.RequestError) {
    const data = error.data as { details?: unknown; message?: unknown } | string | undefined;
    const detail =
      typeof data === 'string'
        ? data
        : typeof data?.details === 'string'
          ? data.details
          : typeof data?.message === 'string'
            ? data.message
            : '';
    return detail && !error.message.includes(detail) ? `${error.message}: ${detail}` : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** ACP's "authentication required". */
const AUTH_REQUIRED = -32000;
/** What agents say when their model refused the key (they pass the API's error on as text). */
const KEY_REFUSED =
  /invalid api key|incorrect api key|invalid x-api-key|authentication_error|\b401\b|unauthori[sz]ed|not logged in|please run \/login/i;

/** What an agent's error says when its model server could not be reached at all. */
const UNREACHABLE =
  /ECONNREFUSED|connection refused|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|ECONNRESET|ETIMEDOUT|timed? ?out|error sending request|connection error|stream disconnected/i;

async function main(): Promise<void> {
  const turn = JSON.parse(await readStdin()) as AcpTurn;
  const name = turn.label;
  const env = { ...process.env };
  for (const variable of turn.unset) delete env[variable];
  const child = spawn(turn.command, turn.args, {
    cwd: turn.cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: process.platform !== 'win32',
    windowsHide: true,
  });
  let stderrTail = '';
  let exitedWith: string | null = null;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitedWith = signal ? `was ended by ${signal}` : `exited with code ${code}`;
      resolve();
    });
    child.once('error', (error: NodeJS.ErrnoException) => {
      exitedWith =
        error.code === 'ENOENT'
          ? `could not be started: there is no \`${turn.command}\` program (is it installed and on PATH?)`
          : `could not be started: ${error.message}`;
      resolve();
    });
  });
  child.stdin.on('error', () => {
    // The agent may exit without reading what we wrote; 'exit' says so.
  });
  child.stderr.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-4096);
  });

  const signalAgent = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(process.platform === 'win32' ? child.pid : -child.pid, signal);
    } catch {
      // Already gone.
    }
  };
  // Whatever happens to this worker, the agent's group does not outlive it.
  process.on('exit', () => signalAgent('SIGKILL'));
  /** Ends the agent: its input closed, then SIGTERM, then SIGKILL for what is left of its group. */
  const endAgent = async (politeMs: number, graceMs: number) => {
    child.stdin.end();
    if (exitedWith === null) await Promise.race([exited, delay(politeMs)]);
    if (exitedWith === null) {
      signalAgent('SIGTERM');
      await Promise.race([exited, delay(graceMs)]);
    }
    signalAgent('SIGKILL');
    // So that once this worker is gone, the agent is too.
    if (exitedWith === null) await Promise.race([exited, delay(1_000)]);
  };

  /** A request's answer, or AgentGone when the agent exits first. */
  const gone = () => new AgentGone(`the agent (\`${name}\`) ${exitedWith}`);
  const answer = async <T>(request: Promise<T>): Promise<T> => {
    try {
      return await Promise.race([
        request,
        exited.then(() => {
          throw gone();
        }),
      ]);
    } catch (error) {
      // The connection closes as the agent exits: say how it exited rather than "connection closed".
      if (!(error instanceof AgentGone) && !(error instanceof acp.RequestError)) {
        await Promise.race([exited, delay(1_000)]);
        if (exitedWith !== null) throw gone();
      }
      throw error;
    }
  };

  let sessionId: string | null = null;
  /** While a session is loaded the agent replays its history: none of that is this turn's. */
  let replaying = false;
  let stopping = false;
  let markStopped: () => void = () => {};
  /** Settles once a stop begins: a request waiting for a person is answered `cancelled` then. */
  const stopped = new Promise<void>((resolve) => (markStopped = resolve));
  let prompting: Promise<unknown> | null = null;
  const messages = new Messages();
  const toolTitles = new Map<string, string>();
  const toolCalls = new Map<string, ToolCallSeen>();
  let thought = '';
  /** The last request refused this turn, as people read it: some agents end their turn on a refusal. */
  const refusal: { last: string | null } = { last: null };
  const noteRefusal = (
    decision: { outcome: acp.RequestPermissionOutcome; says: string },
    options: acp.PermissionOption[],
  ) => {
    if (decision.outcome.outcome !== 'selected') return;
    const chosen = decision.outcome.optionId;
    if (options.some((o) => o.optionId === chosen && (o.kind === 'reject_once' || o.kind === 'reject_always')))
      refusal.last = decision.says;
  };
  const closeThought = () => {
    if (thought.trim()) live(`thinking: ${preview(thought, 200)}`);
    thought = '';
  };

  /** What the updates say about the agent's model, told to Parley when it changes. */
  let modelState: 'answered' | 'waiting' | null = null;
  const model = (signal: 'answered' | 'waiting') => {
    if (modelState !== signal) emit({ type: 'model', signal });
    modelState = signal;
  };
  const onUpdate = (notification: acp.SessionNotification) => {
    if (replaying || prompting === null || notification.sessionId !== sessionId) return;
    const update = notification.update;
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
      model('answered');
    // A tool's result goes back to the model: the agent waits on it again.
    else if (
      update.sessionUpdate === 'tool_call_update' &&
      (update.status === 'completed' || update.status === 'failed')
    )
      model('waiting');
    switch (update.sessionUpdate) {
      case 'agent_message_chunk':
        closeThought();
        if (update.content.type === 'text') messages.add(update.content.text, update.messageId);
        return;
      case 'agent_thought_chunk':
        if (update.content.type === 'text') thought += update.content.text;
        return;
      case 'tool_call': {
        messages.close();
        closeThought();
        toolTitles.set(update.toolCallId, update.title);
        toolCalls.set(update.toolCallId, update);
        const input = update.rawInput === undefined ? '' : ` ${preview(JSON.stringify(update.rawInput), 200)}`;
        live(`→ ${update.title}${input}`);
        return;
      }
      case 'tool_call_update': {
        if (update.title) toolTitles.set(update.toolCallId, update.title);
        if (update.status === 'completed' || update.status === 'failed')
          live(`← ${toolTitles.get(update.toolCallId) ?? 'tool'} ${update.status}`);
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
  };

  const app = acp
    .client({ name: 'parley' })
    .onNotification(acp.methods.client.session.update, ({ params }) => onUpdate(params))
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      // After session/cancel every pending permission request is answered `cancelled`.
      if (stopping) return { outcome: { outcome: 'cancelled' } };
      const earlier = toolCalls.get(params.toolCall.toolCallId);
      const question = questionFor(turn.permissions, params, earlier);
      if (!question) {
        const decision = decidePermission(turn.permissions, params, earlier);
        live(decision.says);
        noteRefusal(decision, params.options);
        return { outcome: decision.outcome };
      }
      live(`Parley: waiting for a person to approve ${question.title}`);
      // Stop answers it at once (cancelled); Parley cancels the request itself on the stop too.
      const answer = await Promise.race([askPerson(question), stopped.then(() => STOPPED)]);
      if (stopping) return { outcome: { outcome: 'cancelled' } };
      const decision = answerFromPerson(answer, question, params.options);
      live(decision.says);
      noteRefusal(decision, params.options);
      return { outcome: decision.outcome };
    })
    .onRequest('*', ({ method }) => {
      live(`Parley: the agent asked for ${method}, which Parley does not offer`);
      throw acp.RequestError.methodNotFound(method);
    });
  const connection = app.connect(
    acp.ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
    ),
  );
  const agent = connection.agent;

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    markStopped();
    if (sessionId !== null && prompting !== null) {
      agent.notify(acp.methods.agent.session.cancel, { sessionId }).catch(() => {});
      const settled = prompting.then(
        (response) => (response as acp.PromptResponse).stopReason,
        () => 'error',
      );
      const ended = await Promise.race([settled, exited.then(() => 'exit'), delay(turn.cancelWaitMs)]);
      live(
        ended === 'cancelled'
          ? 'Parley: the agent stopped (cancelled)'
          : `Parley: the agent did not confirm the cancel within ${turn.cancelWaitMs} ms; ending it`,
      );
    }
    await endAgent(0, 500);
    process.exit(143);
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => void stop());

  const fail = async (message: string) => {
    if (stopping) return;
    messages.close();
    emit({ type: 'error', message });
    await endAgent(500, 500);
    process.exit(1);
  };

  try {
    const init = await answer(
      agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        // Parley offers no files or terminals of its own: the agent uses its own tools.
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: 'parley', title: 'Parley', version: '1' },
      }),
    );
    const capabilities = init.agentCapabilities ?? {};
    const mcpServers = [turn.mcpServer];
    let prompt = turn.prompts.fresh;
    let configOptions: acp.SessionConfigOption[] | null | undefined;
    let modes: acp.SessionModeState | null | undefined;

    if (turn.session !== null) {
      const how = capabilities.loadSession ? 'load' : capabilities.sessionCapabilities?.resume ? 'resume' : null;
      if (how === null) {
        emit({
          type: 'fallback',
          reason: 'the agent cannot continue sessions (it offers neither session/load nor session/resume)',
        });
        prompt = turn.prompts.lost;
      } else {
        const params = { sessionId: turn.session, cwd: turn.cwd, mcpServers };
        try {
          replaying = true;
          const response =
            how === 'load'
              ? await answer(agent.request(acp.methods.agent.session.load, params))
              : await answer(agent.request(acp.methods.agent.session.resume, params));
          sessionId = turn.session;
          configOptions = (response as acp.LoadSessionResponse | acp.ResumeSessionResponse | undefined)?.configOptions;
          modes = (response as acp.LoadSessionResponse | acp.ResumeSessionResponse | undefined)?.modes;
          prompt = turn.prompts.continued;
        } catch (error) {
          if (error instanceof AgentGone) throw error;
          emit({ type: 'fallback', reason: `session/${how} failed: ${errorText(error)}` });
          prompt = turn.prompts.lost;
        } finally {
          replaying = false;
        }
      }
    }
    if (sessionId === null) {
      const created = await answer(agent.request(acp.methods.agent.session.new, { cwd: turn.cwd, mcpServers }));
      sessionId = created.sessionId;
      configOptions = created.configOptions;
      modes = created.modes;
    }
    emit({ type: 'session', session: sessionId });

    // Always set, never left to the agent: a current agent may open sessions in a mode
    // where it decides itself what may run, and Parley never hears of it.
    const modeOption = configOptions?.find((o) => o.category === 'mode' || o.id === 'mode');
    const offeredModes =
      modes?.availableModes.map((m) => m.id) ??
      (modeOption?.type === 'select'
        ? modeOption.options.flatMap((o) => ('options' in o ? o.options : [o])).map((o) => o.value)
        : []);
    const currentMode =
      modes?.currentModeId ?? (modeOption?.type === 'select' ? String(modeOption.currentValue) : null);
    const choice = chooseAcpMode(turn.trust, offeredModes, currentMode, turn.mode ?? undefined);
    if (choice.mode !== null && choice.mode !== currentMode) {
      try {
        if (modes) await answer(agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: choice.mode }));
        else
          await answer(
            agent.request(acp.methods.agent.session.setConfigOption, {
              sessionId,
              configId: modeOption!.id,
              value: choice.mode,
            }),
          );
      } catch (error) {
        if (error instanceof AgentGone) throw error;
        // A turn that works for a peer must not run in a mode Parley did not choose.
        return fail(`the agent (\`${name}\`) did not accept the mode “${choice.mode}” (${errorText(error)})`);
      }
    }
    if (choice.says !== null) live(choice.says);

    if (turn.model !== null) {
      const option = configOptions?.find((o) => o.category === 'model' || o.id === 'model');
      if (!option || option.type !== 'select') {
        live(`Parley: the agent offers no choice of model; it uses its own (not ${turn.model})`);
      } else if (option.currentValue !== turn.model) {
        try {
          await answer(
            agent.request(acp.methods.agent.session.setConfigOption, {
              sessionId,
              configId: option.id,
              value: turn.model,
            }),
          );
        } catch (error) {
          if (error instanceof AgentGone) throw error;
          const offered = option.options.flatMap((o) => ('options' in o ? o.options : [o])).map((o) => o.value);
          return fail(
            `the agent (\`${name}\`) did not accept the model “${turn.model}” (${errorText(error)}); it offers: ${offered.join(', ')}`,
          );
        }
      }
    }

    if (stopping) return;
    emit({ type: 'prompted' });
    const request = agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: prompt }],
    });
    prompting = request;
    const response = await answer(request);
    if (stopping) return;
    messages.close();
    closeThought();
    const output = messages.last();
    switch (response.stopReason) {
      case 'end_turn':
        emit({ type: 'result', output });
        break;
      case 'max_tokens':
        emit({ type: 'result', output: `${output}\n\n(The agent stopped here: the model reached its token limit.)` });
        break;
      case 'max_turn_requests':
        emit({
          type: 'result',
          output: `${output}\n\n(The agent stopped here: it reached its limit of steps per turn.)`,
        });
        break;
      case 'refusal':
        return fail(`the agent refused to go on${output ? `: ${output}` : ''}`);
      case 'cancelled':
        // codex-acp's only way to reject ends the turn: that is the refusal, not a failure.
        if (refusal.last !== null) {
          emit({
            type: 'result',
            output: `${output ? `${output}\n\n` : ''}(The agent stopped here: ${refusal.last}, and it ends its turn on a refusal.)`,
          });
          break;
        }
        return fail('the agent cancelled the turn by itself');
    }
    // Let the agent save its session and leave on its own, then make sure it is gone.
    await endAgent(500, 1_000);
    process.exit(0);
  } catch (error) {
    if (stopping) return;
    if (error instanceof AgentGone) {
      const detail = stderrTail.trim().split('\n').slice(-5).join('\n');
      return fail(`${error.message}${detail ? `: ${detail}` : ''}`);
    }
    if (error instanceof acp.RequestError && error.code === AUTH_REQUIRED)
      return fail(
        `the agent (\`${name}\`) is not logged in here (“${errorText(error)}”). Log in to it once in a terminal on this computer, or set its API key in the role’s environment, then send the message again.`,
      );
    if (KEY_REFUSED.test(errorText(error)))
      return fail(
        `the agent (\`${name}\`) could not use its model: the key was refused or it is not logged in (“${errorText(error)}”). Set the right key in the role’s environment, or log in to the agent once in a terminal on this computer, then send the message again.`,
      );
    if (UNREACHABLE.test(errorText(error)))
      return fail(
        `the agent (\`${name}\`) could not reach its model: the model server does not answer (“${errorText(error)}”). Check that the model server is running and reachable from this computer, then send the message again.`,
      );
    return fail(`the agent (\`${name}\`) failed: ${errorText(error)}`);
  }
}

process.stdout.on('error', () => {
  // Parley went away; it ends or re-runs this turn when it is back.
});
const STOPPED: PersonsAnswer = { outcome: 'cancelled', reason: 'the agent was stopped' };

/**
 * Asks Parley for a person's word on a tool call: the role API's `permission` call, with
 * this turn's token, which answers once someone approves or denies it, or once it is
 * cancelled (Stop, the turn's end, nobody answering in time).
 */
async function askPerson(question: PermissionQuestion): Promise<PersonsAnswer> {
  const socketPath = process.env.PARLEY_API;
  const token = process.env.PARLEY_TOKEN;
  if (!socketPath || !token) return { outcome: 'cancelled', reason: 'this turn has no role API to ask through' };
  try {
    return await callRoleApi<PersonsAnswer>({ socketPath, token }, 'permission', question);
  } catch (error) {
    return { outcome: 'cancelled', reason: `Parley could not ask: ${(error as Error).message}` };
  }
}

process.on('unhandledRejection', (error) => {
  emit({ type: 'error', message: `the ACP worker failed: ${errorText(error)}` });
  process.exit(1);
});
void main();
