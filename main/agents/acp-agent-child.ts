// The ACP agent as the worker's child, in a process group of its own: started, watched
// until it exits (with the tail of its stderr for a failure), and ended so that its group
// never outlives the worker.
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import type { AcpTurn } from './acp';

export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The agent went away before it answered. */
export class AgentGone extends Error {}

export interface AgentChild {
  stdin: Writable;
  stdout: Readable;
  /** Resolves once the agent exited, or could not be started. */
  exited: Promise<void>;
  /** How it exited, in words; null while it runs. */
  exitedWith(): string | null;
  /** The last of what it wrote on stderr. */
  stderrTail(): string;
  /** Ends the agent: its input closed, then SIGTERM, then SIGKILL for what is left of its group. */
  end(politeMs: number, graceMs: number): Promise<void>;
  /** A request's answer, or AgentGone when the agent exits first. */
  answer<T>(request: Promise<T>): Promise<T>;
}

export function startAgentChild(turn: AcpTurn): AgentChild {
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
  const end = async (politeMs: number, graceMs: number) => {
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

  return {
    stdin: child.stdin,
    stdout: child.stdout,
    exited,
    exitedWith: () => exitedWith,
    stderrTail: () => stderrTail,
    end,
    answer,
  };
}
