import { spawn } from 'node:child_process';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { runnerEvent, runnerLaunch, type RunnerPlan } from './session-runner';
import type { TurnRequest } from './types';

/**
 * Runs the session runner on a plan whose CLI is this Node running `script`; its stdout
 * and stderr. `token`: written on the line ahead of the plan, as Parley does.
 */
function runRunner(
  script: string,
  signals?: string,
  token?: { line: string; env?: string },
): Promise<{ stdout: string; stderr: string }> {
  const plan: RunnerPlan = {
    command: process.execPath,
    attempts: [{ args: ['-e', script], stdin: '' }],
    retryWhen: 'never matches this',
    cleanup: [],
    unset: [],
    ...(signals ? { signals } : {}),
  };
  const request = { paths: { node: process.execPath } } as unknown as TurnRequest;
  const env = { PATH: process.env.PATH ?? '', ...(token?.env ? { PARLEY_TOKEN: token.env } : {}) };
  const launch = runnerLaunch(request, plan, os.tmpdir(), env);
  return new Promise((resolve, reject) => {
    const child = spawn(launch.command, launch.args, { env: launch.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => resolve({ stdout, stderr }));
    child.stdin.end(token ? `${token.line}\n${launch.stdin}` : launch.stdin);
  });
}

const plan = (): RunnerPlan => ({ command: 'true', attempts: [], retryWhen: 'x', cleanup: [], unset: [] });

describe('session runner', () => {
  it('reports the CLI’s log lines about its model as signals between its output lines, and passes the rest', async () => {
    // Half a JSON line, then log lines, then the rest of the JSON line.
    const script = `
      const out = (s) => new Promise((r) => process.stdout.write(s, r));
      const err = (s) => new Promise((r) => process.stderr.write(s, r));
      (async () => {
        await out('{"type":"a",');
        await err('INFO event.name="request" status=200\\nplain warning\\nINFO event.name="request" status=200\\n');
        await new Promise((r) => setTimeout(r, 100));
        await out('"n":1}\\n');
        await err('INFO event.name="other"');
      })();`;
    const { stdout, stderr } = await runRunner(script, 'event\\.name="request"');
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe('{"type":"a","n":1}');
    // The same signal twice within a second is reported once.
    expect(lines.slice(1).map((line) => runnerEvent(line))).toEqual([
      { type: 'parley.runner', event: 'signal', text: 'event.name="request"' },
    ]);
    expect(stderr).toBe('plain warning\nINFO event.name="other"');
  });

  it('reads the turn’s token from the line ahead of its plan, and the CLI it runs has it', async () => {
    expect(runnerLaunch({ paths: { node: 'node' } } as unknown as TurnRequest, plan(), '/', {}).readsTokenFirst).toBe(
      true,
    );
    const token = `prt_${'a'.repeat(43)}`;
    const { stdout } = await runRunner(`process.stdout.write(String(process.env.PARLEY_TOKEN))`, undefined, {
      line: token,
    });
    expect(stdout).toBe(token);
    // Started cold, it has the same token in its environment as well.
    const both = await runRunner(`process.stdout.write(String(process.env.PARLEY_TOKEN))`, undefined, {
      line: token,
      env: token,
    });
    expect(both.stdout).toBe(token);
  });

  it('passes stderr through untouched without a signal pattern', async () => {
    const { stderr } = await runRunner(`process.stderr.write('INFO event.name="request"\\npartial')`);
    expect(stderr).toBe('INFO event.name="request"\npartial');
  });
});
