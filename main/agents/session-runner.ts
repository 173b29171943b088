// The agent process of the claude-code and codex adapters: a small Node program that
// runs the CLI, and when the CLI cannot resume the run's session (a turn killed
// mid-way may leave one that was never saved) runs it again on a fresh session. It
// is the leader of the turn's process group, so Stop ends it, the CLI and whatever
// the CLI started with one signal.
//
// It reads its plan as JSON on stdin (never argv: other users can read a command
// line), after a line with the turn's token (as turn-input.ts), passes the CLI's stdout
// and stderr through, and adds lines of its own:
// `{"type":"parley.runner","event":"fallback",…}` before the fresh attempt and
// `{"type":"parley.runner","event":"spawn_error",…}` when the CLI cannot start.
import type { AgentLaunch, TurnRequest } from './types';

export interface RunnerPlan {
  /** The CLI to run. */
  command: string;
  /** The first attempt (resume, when there is a session), then the fresh one to fall back to. */
  attempts: { args: string[]; stdin: string }[];
  /** A failed attempt whose output matches this (case-insensitive) is followed by the next one. */
  retryWhen: string;
  /** Removed when the runner ends or is stopped: the turn's private files. */
  cleanup: string[];
  /** Environment variables the CLI must not inherit from the runner. */
  unset: string[];
  /**
   * Log lines of the CLI's stderr that say what it does with its model: a line matching
   * this (case-sensitive) is not passed through but reported as a `signal` event with the
   * matched text, at most once a second for the same text.
   */
  signals?: string;
}

export type RunnerEvent =
  | { type: 'parley.runner'; event: 'fallback'; reason: string }
  | { type: 'parley.runner'; event: 'spawn_error'; code: string; message: string }
  | { type: 'parley.runner'; event: 'signal'; text: string };

/** Claude Code sessions and Codex threads are UUIDs; anything else was made by another adapter. */
export const SESSION_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The runner itself. It is run with `node -e` from its source text, so it must not
 * use anything from outside its own body: only globals and Node's built-in modules.
 */
export function sessionRunner(): void {
  const { spawn } = process.getBuiltinModule('node:child_process');
  const { rmSync } = process.getBuiltinModule('node:fs');
  const input: Buffer[] = [];
  let plan: RunnerPlan | null = null;

  const emit = (event: Record<string, unknown>) =>
    process.stdout.write(JSON.stringify({ type: 'parley.runner', ...event }) + '\n');
  const cleanup = () => {
    for (const file of plan?.cleanup ?? []) {
      try {
        rmSync(file, { recursive: true, force: true });
      } catch {
        // Best effort: the folder is private and its token dies with the turn.
      }
    }
  };
  // Parley went away (it re-runs or ends this turn when it is back): keep going quietly.
  process.stdout.on('error', () => {});
  const signals = { SIGTERM: 15, SIGINT: 2, SIGHUP: 1 } as const;
  for (const [signal, number] of Object.entries(signals)) {
    process.on(signal, () => {
      // The CLI is in the same process group and got the signal too.
      cleanup();
      process.exit(128 + number);
    });
  }

  // A signal is written between the CLI's stdout lines, never inside one.
  let atLineStart = true;
  let pendingSignal: string | null = null;
  let lastSignal = { text: '', at: 0 };
  const report = (text: string) => {
    const now = Date.now();
    if (text === lastSignal.text && now - lastSignal.at < 1000) return;
    lastSignal = { text, at: now };
    if (atLineStart) emit({ event: 'signal', text });
    else pendingSignal = text;
  };

  const run = (index: number) => {
    const current = plan!;
    const modelLog = current.signals ? new RegExp(current.signals) : null;
    let errorLine = '';
    const attempt = current.attempts[index]!;
    const env = { ...process.env };
    for (const name of current.unset) delete env[name];
    const child = spawn(current.command, attempt.args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    let errors = '';
    let failed = false;
    child.on('error', (error: NodeJS.ErrnoException) => {
      failed = true;
      emit({ event: 'spawn_error', code: error.code ?? '', message: error.message });
      cleanup();
      process.exitCode = 127; // like a shell's "command not found"
    });
    child.stdin.on('error', () => {
      // The CLI may exit without reading its prompt.
    });
    child.stdin.end(attempt.stdin);
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      output = (output + chunk.toString('utf8')).slice(-64 * 1024);
      atLineStart = chunk.length === 0 ? atLineStart : chunk[chunk.length - 1] === 10;
      if (atLineStart && pendingSignal !== null) {
        emit({ event: 'signal', text: pendingSignal });
        pendingSignal = null;
      }
    });
    const passError = (text: string) => {
      process.stderr.write(text);
      errors = (errors + text).slice(-64 * 1024);
    };
    child.stderr.on('data', (chunk: Buffer) => {
      if (!modelLog) {
        passError(chunk.toString('utf8'));
        return;
      }
      errorLine += chunk.toString('utf8');
      let newline: number;
      while ((newline = errorLine.indexOf('\n')) >= 0) {
        const line = errorLine.slice(0, newline + 1);
        errorLine = errorLine.slice(newline + 1);
        const match = modelLog.exec(line);
        if (match) report(match[0]);
        else passError(line);
      }
    });
    child.stderr.on('end', () => {
      if (errorLine) passError(errorLine);
      errorLine = '';
    });
    child.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
      if (failed) return; // never started: 'error' said so
      const retry = new RegExp(current.retryWhen, 'i');
      if (code !== 0 && index + 1 < current.attempts.length && retry.test(errors + '\n' + output)) {
        const line = errors.split('\n').find((l) => retry.test(l)) ?? retry.exec(output)?.[0] ?? '';
        emit({ event: 'fallback', reason: line.trim().replace(/^error:\s*/i, '') });
        run(index + 1);
        return;
      }
      cleanup();
      process.exitCode = code ?? 128 + (signal === 'SIGKILL' ? 9 : 15);
    });
  };

  process.stdin.on('data', (chunk: Buffer) => input.push(chunk));
  process.stdin.on('end', () => {
    // The token line ahead of the plan: started before its turn, the runner had none.
    const text = Buffer.concat(input).toString('utf8');
    const newline = text.startsWith('{') ? -1 : text.indexOf('\n');
    if (newline >= 0) process.env.PARLEY_TOKEN = text.slice(0, newline);
    plan = JSON.parse(text.slice(newline + 1)) as RunnerPlan;
    run(0);
  });
}

const RUNNER_SOURCE = `(${sessionRunner.toString()})()`;

/** How the run manager starts the runner for a plan: Parley's own Node, source on argv, plan on stdin. */
export function runnerLaunch(
  request: TurnRequest,
  plan: RunnerPlan,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Pick<AgentLaunch, 'command' | 'args' | 'cwd' | 'env' | 'stdin' | 'readsTokenFirst'> {
  // Parley may be Electron: it runs as Node for the runner only, not for the CLI.
  const unset = env.ELECTRON_RUN_AS_NODE === undefined ? ['ELECTRON_RUN_AS_NODE'] : [];
  return {
    command: request.paths.node,
    args: ['-e', RUNNER_SOURCE],
    cwd,
    env: { ...env, ELECTRON_RUN_AS_NODE: '1' },
    stdin: JSON.stringify({ ...plan, unset: [...plan.unset, ...unset] }),
    readsTokenFirst: true,
  };
}

/** Parses a runner line; null for anything else. */
export function runnerEvent(line: string): RunnerEvent | null {
  if (!line.startsWith('{"type":"parley.runner"')) return null;
  try {
    return JSON.parse(line) as RunnerEvent;
  } catch {
    return null;
  }
}
