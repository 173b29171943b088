// The command adapter: any program, run without a shell. It reads the turn on stdin
// (as text, or as JSON with `input: "json"`) and its stdout is the turn's output.
import type { AgentAdapter, AgentLaunch } from './types';
import { inputsAsText } from './types';

export const commandAdapter: AgentAdapter = {
  prepare(request): AgentLaunch {
    const agent = request.role.agent;
    if (agent.adapter !== 'command') throw new Error('command adapter given another adapter’s settings');
    const [command, ...args] = agent.command as [string, ...string[]];
    const stdin =
      agent.input === 'json'
        ? JSON.stringify({
            session: request.session,
            role: request.role.name,
            context: request.context,
            inputs: request.inputs,
          })
        : inputsAsText(request.inputs) + '\n';
    return {
      command,
      args,
      cwd: agent.cwd ?? request.defaultCwd,
      env: { ...process.env, ...agent.env, ...request.env },
      stdin,
      onLine: (line) => ({ live: line }),
      finish(result) {
        if (result.code === 0) {
          const output = result.stdout.trim() + (result.truncated ? '\n\n[output cut: too long]' : '');
          return { ok: true, output };
        }
        const detail = result.stderr.trim().split('\n').slice(-5).join('\n');
        const how = result.signal ? `was ended by ${result.signal}` : `exited with code ${result.code}`;
        return { ok: false, error: `\`${command}\` ${how}${detail ? `: ${detail}` : ''}` };
      },
    };
  },
};
