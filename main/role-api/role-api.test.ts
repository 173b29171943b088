import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distPaths } from '../paths';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import { exitCodes } from './protocol';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real `parley` CLI the way an agent would. */
function parley(args: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [distPaths.cli, ...args],
      { env: { PATH: process.env.PATH, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
}

describe('role API and the parley CLI', () => {
  let t: TestInstallation;
  let out: string;
  let roleId: number;
  let conversationId: number;

  beforeAll(async () => {
    t = await openTestInstallation();
    out = mkdtempSync(path.join(os.tmpdir(), 'parley-cli-'));
    // An agent that runs a shell line given as the message, with the real `parley` on its PATH.
    const role = await t.owner('roles.create', {
      name: 'worker',
      agent: { adapter: 'command', command: ['sh', '-c', 'read line; eval "${line#*: }"'], env: { OUT: out } },
    });
    roleId = role.id;
    conversationId = (await t.owner('conversations.open', { roleId })).id;
  });
  afterAll(async () => {
    await t.close();
    rmSync(out, { recursive: true, force: true });
  });

  /** Sends a shell line to the agent and waits for its turn to end; returns the conversation. */
  async function agentRuns(line: string) {
    const before = (await t.owner('conversations.get', { id: conversationId })).turns.length;
    await t.owner('conversations.send', { id: conversationId, text: line });
    return t.waitFor(async () => {
      const detail = await t.owner('conversations.get', { id: conversationId });
      const last = detail.turns.at(-1);
      return detail.turns.length > before && last?.status !== 'running' ? detail : undefined;
    }, 'the agent turn');
  }

  const lastRoleMessage = async () =>
    (await t.owner('conversations.get', { id: conversationId })).messages.filter((m) => m.author.kind === 'role').at(-1)
      ?.body;

  it('tells a run its context and root as JSON', async () => {
    await agentRuns('parley context');
    const context = JSON.parse((await lastRoleMessage())!) as { context: { reporting: string } };
    expect(context).toMatchObject({
      token: 'run',
      role: { id: roleId, name: 'worker' },
      context: {
        kind: 'conversation',
        id: conversationId,
        person: { name: 'alice' },
        root: { kind: 'conversation', id: conversationId, summary: 'your conversation with alice' },
      },
    });
    expect(context.context.reporting).toContain('`report`');
  });

  it('reports to the person’s conversation right away, before the turn ends', async () => {
    const detail = await agentRuns('parley report "halfway there" > /dev/null; echo finished');
    const bodies = detail.messages.filter((m) => m.author.kind === 'role').map((m) => m.body);
    expect(bodies.slice(-2)).toEqual(['halfway there', 'finished']);
  });

  it('reports to the task log on a task', async () => {
    const task = await t.owner('tasks.create', { roleId, title: 'check', body: 'ignored' });
    await t.waitFor(async () => (await t.owner('tasks.get', { id: task.id })).task.run.state === 'idle', 'the brief');
    await t.owner('tasks.comment', { id: task.id, text: 'parley report "task progress" > /dev/null; echo ok' });
    const log = await t.waitFor(async () => {
      const entries = (await t.owner('tasks.get', { id: task.id })).log;
      return entries.some((e) => e.kind === 'output' && e.body === 'ok') ? entries : undefined;
    }, 'the task report');
    expect(log.map((e) => [e.kind, e.body]).slice(-3)).toEqual([
      ['comment', 'parley report "task progress" > /dev/null; echo ok'],
      ['report', 'task progress'],
      ['output', 'ok'],
    ]);
  });

  it('refuses send, reply and history with their own messages and exit codes', async () => {
    await agentRuns('parley send --to bob/researcher "what is new?"; echo "exit $?"');
    expect(await lastRoleMessage()).toBe(`exit ${exitCodes.not_found}`);
    await agentRuns('parley send --to bob/researcher hi 2>&1; true');
    expect(await lastRoleMessage()).toBe(
      'parley: no connection named "bob"; this installation is not connected to any peer yet',
    );
    await agentRuns('parley reply "an answer" 2>&1; echo "exit $?"');
    expect(await lastRoleMessage()).toMatch(/works only in an agent conversation[\s\S]*exit 2$/);
    await agentRuns('parley history bob/researcher 2>&1; echo "exit $?"');
    expect(await lastRoleMessage()).toBe(
      `parley: no connection named "bob"; this installation is not connected to any peer yet\nexit ${exitCodes.not_found}`,
    );
  });

  it('rejects malformed arguments before calling Parley, with usage', async () => {
    await agentRuns('parley send --to nobody "hi" 2>&1 | head -1; echo "exit $?"');
    expect(await lastRoleMessage()).toMatch(/--to "nobody" must look like PEER\/ROLE/);
    for (const args of [
      ['send', 'hi'],
      ['report'],
      ['history'],
      ['context', 'extra'],
      ['frobnicate'],
      ['send', '--bogus', 'x'],
    ]) {
      const result = await parley(args, { PARLEY_TOKEN: 'x', PARLEY_API: '/nonexistent' });
      expect(result.code, args.join(' ')).toBe(exitCodes.usage);
      expect(result.stderr).toMatch(/^parley: /);
      expect(result.stderr).toContain('Usage: parley');
    }
  });

  it('lets a role token read but refuses every send: it has no topic', async () => {
    const { token } = await t.owner('roles.token', { id: roleId });
    const env = { PARLEY_TOKEN: token, PARLEY_API: t.installation.roleApiSocket };
    const context = await parley(['context'], env);
    expect(context.code).toBe(0);
    expect(JSON.parse(context.stdout)).toEqual({
      token: 'role',
      role: { id: roleId, name: 'worker' },
      run: null,
      context: null,
      peers: [],
    });
    for (const args of [
      ['send', '--to', 'bob/researcher', 'hi'],
      ['reply', 'hi'],
      ['report', 'hi'],
    ]) {
      const result = await parley(args, env);
      expect(result.code, args[0]).toBe(exitCodes.no_topic);
      expect(result.stderr).toBe(
        'parley: a role token without a run has no topic: only an agent working in a run can send (use a run token, given to agents in PARLEY_TOKEN)\n',
      );
    }
    const history = await parley(['history', 'bob/researcher'], env);
    expect(history.code).toBe(exitCodes.not_found);
  });

  it('accepts a run token only while its turn works', async () => {
    await agentRuns('echo "$PARLEY_TOKEN"');
    const spent = (await lastRoleMessage())!;
    expect(spent).toMatch(/^prt_/);
    const result = await parley(['context'], { PARLEY_TOKEN: spent, PARLEY_API: t.installation.roleApiSocket });
    expect(result.code).toBe(exitCodes.unauthenticated);
    expect(result.stderr).toContain('a run token works only while its turn runs');
  });

  it('says what is missing when run outside an agent turn', async () => {
    const result = await parley(['context'], {});
    expect(result.code).toBe(exitCodes.unauthenticated);
    expect(result.stderr).toContain('PARLEY_TOKEN and PARLEY_API are not set');
    const unreachable = await parley(['context'], { PARLEY_TOKEN: 'x', PARLEY_API: path.join(out, 'missing.sock') });
    expect(unreachable.code).toBe(exitCodes.connect);
    expect(unreachable.stderr).toContain('cannot reach Parley');
  });

  it('keeps no token in the clear: only hashes are stored', async () => {
    const { token } = await t.owner('roles.token', { id: roleId });
    t.installation.db.pragma('wal_checkpoint(TRUNCATE)');
    const bytes = readFileSync(path.join(t.installation.dataDir, 'parley.db'));
    expect(bytes.includes(Buffer.from(token))).toBe(false);
    expect(bytes.includes(Buffer.from(token.slice(4)))).toBe(false);
  });
});
