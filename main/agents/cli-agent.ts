// What the Claude Code and Codex adapters share: a turn's program, folder and
// environment from the role's settings, and around their CLI's JSON stream the session
// runner's own events (the CLI could not be started; the session could not be resumed
// and a fresh one was started), lines that are not JSON, the live-line preview, and the
// message for a CLI that is missing. Each adapter reads its own events.
import { requireFolder } from './command';
import { agentEnv } from './environment';
import { runnerEvent } from './session-runner';
import type { StreamUpdate, TurnRequest } from './types';

/** A CLI agent's turn: the program (the role's command, else `program` on PATH), its folder and environment. */
export function cliTurn(
  request: TurnRequest,
  agent: { command?: string; cwd?: string; env?: Record<string, string> },
  program: string,
): { command: string; cwd: string; env: Record<string, string> } {
  const cwd = agent.cwd ?? request.defaultCwd;
  requireFolder(cwd, agent.cwd ? 'the role’s working folder' : 'the installation’s work folder');
  // The inherited minimum, the role's env, then the turn's PARLEY_* and PATH (docs/agents.md).
  return { command: agent.command ?? program, cwd, env: agentEnv(agent.env, request.env) };
}

/** A line for people watching the run: one line, not too long. */
export function preview(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The CLI an adapter runs, as its messages name it. */
export interface CliProduct {
  /** "Claude Code" */
  name: string;
  /** What the CLI calls a resumable conversation: "session", "thread". */
  sessionWord: string;
  /** The program looked up on PATH when the role sets no command. */
  program: string;
  /** How to install it and log in, for the message when it is missing. */
  install: string;
}

/** Reads one turn's output of a CLI agent; subclasses read the CLI's own events. */
export abstract class CliStream<Event extends object> {
  session: string | null;
  /** Set when the runner fell back to a fresh session: why. */
  fellBack: string | null = null;
  spawnError: { code: string; message: string } | null = null;

  constructor(
    session: string | null,
    protected readonly product: CliProduct,
  ) {
    this.session = session;
  }

  line(line: string): StreamUpdate | undefined {
    const runner = runnerEvent(line);
    if (runner) {
      if (runner.event === 'spawn_error') {
        this.spawnError = runner;
        return undefined;
      }
      if (runner.event === 'signal') return this.logSignal(runner.text);
      // What the failed attempt said is not this turn's result.
      this.forgetAttempt();
      this.fellBack = runner.reason || `the ${this.product.sessionWord} was not found`;
      return {
        live: `Parley: could not resume the ${this.product.sessionWord} (${this.fellBack}); starting a fresh one`,
      };
    }
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      return line.trim() ? { live: preview(line) } : undefined;
    }
    if (!event || typeof event !== 'object') return undefined;
    return this.event(event as Event);
  }

  /** A log line of the CLI that the runner reported (RunnerPlan.signals); none by default. */
  protected logSignal(_text: string): StreamUpdate | undefined {
    return undefined;
  }

  /** Drops what a failed resume attempt reported before the runner started afresh. */
  protected abstract forgetAttempt(): void;

  /** One JSON event of the CLI. */
  protected abstract event(event: Event): StreamUpdate | undefined;

  /** Why the CLI could not be started, in words that say what to do; null when it started. */
  protected notStarted(command: string, commandIsSetting: boolean): string | null {
    const error = this.spawnError;
    if (!error) return null;
    const { name, program, install } = this.product;
    if (error.code !== 'ENOENT') return `could not start ${name} (\`${command}\`): ${error.message}`;
    return commandIsSetting
      ? `${name} was not found at \`${command}\` (the role’s command setting). Check the path, or clear the setting to use \`${program}\` from PATH.`
      : `${name} is not installed here: there is no \`${program}\` program on PATH. ${install}, or set the full path of \`${program}\` in the role’s command setting.`;
  }
}
