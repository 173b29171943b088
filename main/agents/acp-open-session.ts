// The ACP session a turn prompts in: the run's session loaded (or resumed) when the
// agent can, else a new one with Parley's MCP server; then the mode Parley chooses for the
// turn's trust, and the role's model. Says which prompt suits what came of the session.
import * as acp from '@agentclientprotocol/sdk';
import type { AcpTurn } from './acp';
import { AgentGone, type AgentChild } from './acp-agent-child';
import { errorText } from './acp-failures';
import { emit, live } from './acp-output';
import { chooseAcpMode } from './trust-modes';

export type OpenedSession = { sessionId: string; prompt: string } | { failed: string };

const failed = (message: string): OpenedSession => ({ failed: message });

/**
 * Opens the turn's session on an initialized agent. `replaying` is told while a loaded
 * session replays its history, none of which is this turn's. Rejects with AgentGone when
 * the agent exits, or with the error of a new session the agent would not open.
 */
export async function openSession(
  agent: acp.ClientConnection['agent'],
  child: AgentChild,
  turn: AcpTurn,
  capabilities: acp.AgentCapabilities,
  replaying: (on: boolean) => void,
): Promise<OpenedSession> {
  const name = turn.label;
  let sessionId: string | null = null;
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
        replaying(true);
        const response =
          how === 'load'
            ? await child.answer(agent.request(acp.methods.agent.session.load, params))
            : await child.answer(agent.request(acp.methods.agent.session.resume, params));
        sessionId = turn.session;
        configOptions = (response as acp.LoadSessionResponse | acp.ResumeSessionResponse | undefined)?.configOptions;
        modes = (response as acp.LoadSessionResponse | acp.ResumeSessionResponse | undefined)?.modes;
        prompt = turn.prompts.continued;
      } catch (error) {
        if (error instanceof AgentGone) throw error;
        emit({ type: 'fallback', reason: `session/${how} failed: ${errorText(error)}` });
        prompt = turn.prompts.lost;
      } finally {
        replaying(false);
      }
    }
  }
  if (sessionId === null) {
    const created = await child.answer(agent.request(acp.methods.agent.session.new, { cwd: turn.cwd, mcpServers }));
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
  const currentMode = modes?.currentModeId ?? (modeOption?.type === 'select' ? String(modeOption.currentValue) : null);
  const choice = chooseAcpMode(turn.trust, offeredModes, currentMode, turn.mode ?? undefined);
  if (choice.mode !== null && choice.mode !== currentMode) {
    try {
      if (modes)
        await child.answer(agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: choice.mode }));
      else
        await child.answer(
          agent.request(acp.methods.agent.session.setConfigOption, {
            sessionId,
            configId: modeOption!.id,
            value: choice.mode,
          }),
        );
    } catch (error) {
      if (error instanceof AgentGone) throw error;
      // A turn that works for a peer must not run in a mode Parley did not choose.
      return failed(`the agent (\`${name}\`) did not accept the mode “${choice.mode}” (${errorText(error)})`);
    }
  }
  if (choice.says !== null) live(choice.says);

  if (turn.model !== null) {
    const option = configOptions?.find((o) => o.category === 'model' || o.id === 'model');
    if (!option || option.type !== 'select') {
      live(`Parley: the agent offers no choice of model; it uses its own (not ${turn.model})`);
    } else if (option.currentValue !== turn.model) {
      try {
        await child.answer(
          agent.request(acp.methods.agent.session.setConfigOption, {
            sessionId,
            configId: option.id,
            value: turn.model,
          }),
        );
      } catch (error) {
        if (error instanceof AgentGone) throw error;
        const offered = option.options.flatMap((o) => ('options' in o ? o.options : [o])).map((o) => o.value);
        return failed(
          `the agent (\`${name}\`) did not accept the model “${turn.model}” (${errorText(error)}); it offers: ${offered.join(', ')}`,
        );
      }
    }
  }
  return { sessionId, prompt };
}
