// The scripted adapter: runs Parley's deterministic rule agent (scripted-agent.ts)
// as a real child process. Used by the demo and the tests.
import type { AgentAdapter, AgentLaunch, TurnRequest } from './types';

/** What the scripted agent reads on stdin. */
export interface ScriptedTurn {
  session: string | null;
  role: string;
  context: TurnRequest['context'];
  inputs: TurnRequest['inputs'];
}

/** One JSON object per stdout line. */
export type ScriptedEvent = { type: 'session'; session: string } | { type: 'result'; output: string };

export const scriptedAdapter: AgentAdapter = {
  prepare(request): AgentLaunch {
    let session: string | null = request.session;
    let output: string | null = null;
    const turn: ScriptedTurn = {
      session: request.session,
      role: request.role.name,
      context: request.context,
      inputs: request.inputs,
    };
    return {
      command: request.paths.node,
      args: [request.paths.scriptedAgent],
      cwd: request.defaultCwd,
      env: { ...process.env, ...request.env, ELECTRON_RUN_AS_NODE: '1' },
      stdin: JSON.stringify(turn),
      readsTokenFirst: true,
      onLine(line) {
        let event: ScriptedEvent;
        try {
          event = JSON.parse(line) as ScriptedEvent;
        } catch {
          return { live: line };
        }
        if (event.type === 'session') {
          session = event.session;
          return { session };
        }
        if (event.type === 'result') output = event.output;
        return undefined;
      },
      finish(result) {
        if (result.code === 0 && output !== null) return { ok: true, output, session };
        const detail = result.stderr.trim().split('\n').slice(-5).join('\n');
        return {
          ok: false,
          error: `the scripted agent exited with ${result.signal ?? `code ${result.code}`}${detail ? `: ${detail}` : ''}`,
        };
      },
    };
  },
};
