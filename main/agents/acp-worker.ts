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
//
// The agent's process is acp-agent-child.ts, its session acp-open-session.ts, what its
// updates say acp-session-updates.ts, a person's word on a tool call acp-ask-person.ts,
// and why a turn failed acp-failures.ts.
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import type { AcpTurn } from './acp';
import { delay, startAgentChild } from './acp-agent-child';
import { askPerson, STOPPED } from './acp-ask-person';
import { errorText, failureOf } from './acp-failures';
import { openSession } from './acp-open-session';
import { emit, live } from './acp-output';
import { answerFromPerson, decidePermission, questionFor } from './acp-permissions';
import { SessionUpdates } from './acp-session-updates';
import { readTurn } from './turn-input';

async function main(): Promise<void> {
  const turn = await readTurn<AcpTurn>();
  const child = startAgentChild(turn);

  let sessionId: string | null = null;
  /** While a session is loaded the agent replays its history: none of that is this turn's. */
  let replaying = false;
  let stopping = false;
  let markStopped: () => void = () => {};
  /** Settles once a stop begins: a request waiting for a person is answered `cancelled` then. */
  const stopped = new Promise<void>((resolve) => (markStopped = resolve));
  let prompting: Promise<unknown> | null = null;
  const updates = new SessionUpdates();
  const { messages, toolCalls } = updates;
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
  const onUpdate = (notification: acp.SessionNotification) => {
    if (replaying || prompting === null || notification.sessionId !== sessionId) return;
    updates.take(notification.update);
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
      const ended = await Promise.race([settled, child.exited.then(() => 'exit'), delay(turn.cancelWaitMs)]);
      live(
        ended === 'cancelled'
          ? 'Parley: the agent stopped (cancelled)'
          : `Parley: the agent did not confirm the cancel within ${turn.cancelWaitMs} ms; ending it`,
      );
    }
    await child.end(0, 500);
    process.exit(143);
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => void stop());

  const fail = async (message: string) => {
    if (stopping) return;
    messages.close();
    emit({ type: 'error', message });
    await child.end(500, 500);
    process.exit(1);
  };

  try {
    const init = await child.answer(
      agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        // Parley offers no files or terminals of its own: the agent uses its own tools.
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: 'parley', title: 'Parley', version: '1' },
      }),
    );
    const session = await openSession(agent, child, turn, init.agentCapabilities ?? {}, (on) => (replaying = on));
    if ('failed' in session) return fail(session.failed);
    sessionId = session.sessionId;
    const prompt = session.prompt;

    if (stopping) return;
    emit({ type: 'prompted' });
    const request = agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: prompt }],
    });
    prompting = request;
    const response = await child.answer(request);
    if (stopping) return;
    messages.close();
    updates.closeThought();
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
    await child.end(500, 1_000);
    process.exit(0);
  } catch (error) {
    if (stopping) return;
    return fail(failureOf(error, turn.label, child.stderrTail()));
  }
}

process.stdout.on('error', () => {
  // Parley went away; it ends or re-runs this turn when it is back.
});
process.on('unhandledRejection', (error) => {
  emit({ type: 'error', message: `the ACP worker failed: ${errorText(error)}` });
  process.exit(1);
});
void main();
