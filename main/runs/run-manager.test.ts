import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSettings, Task } from '../../shared/domain';
import { runningTurns } from '../store/queries/runs';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import { noticesTakenBy } from '../../test-support/notices';

import { agentAlive } from '../../test-support/processes';

let fixtures: string;

/** Small agent programs, written once per test file. */
const scripts = {
  // Ignores SIGTERM, and so does the child it starts: only SIGKILL ends this tree.
  stubborn: `
    const { spawn } = require('node:child_process');
    process.on('SIGTERM', () => {});
    const child = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { stdio: 'ignore' });
    require('node:fs').writeFileSync(process.env.PIDS_FILE, process.pid + ' ' + child.pid);
    setInterval(() => {}, 1000);
  `,
  // Reads the turn as text and answers with how many lines it got and what they were.
  count: `
    let input = '';
    process.stdin.on('data', (d) => (input += d));
    process.stdin.on('end', () => {
      const lines = input.trim().split('\\n').filter(Boolean);
      process.stdout.write('got ' + lines.length + ': ' + lines.join(' | '));
    });
  `,
  fail: `process.stderr.write('model quota exceeded\\n'); process.exit(3);`,
  json: `
    let input = '';
    process.stdin.on('data', (d) => (input += d));
    process.stdin.on('end', () => {
      const turn = JSON.parse(input);
      process.stdout.write(turn.context.kind + ' for ' + turn.context.person.name + ': ' + turn.inputs.map((i) => i.body).join(','));
    });
  `,
};

beforeAll(() => {
  fixtures = mkdtempSync(path.join(os.tmpdir(), 'parley-agents-'));
  for (const [name, body] of Object.entries(scripts)) writeFileSync(path.join(fixtures, `${name}.cjs`), body);
});
afterAll(() => rmSync(fixtures, { recursive: true, force: true }));

const command = (
  script: keyof typeof scripts,
  extra: Partial<Extract<AgentSettings, { adapter: 'command' }>> = {},
): AgentSettings => ({
  adapter: 'command',
  command: [process.execPath, path.join(fixtures, `${script}.cjs`)],
  ...extra,
});

describe('RunManager', () => {
  let t: TestInstallation;
  afterEach(async () => {
    await t?.close();
  });

  async function conversationWith(agent: AgentSettings, name = 'assistant') {
    const role = await t.owner('roles.create', { name, agent });
    return t.owner('conversations.open', { roleId: role.id });
  }

  const roleMessages = async (id: number) =>
    (await t.owner('conversations.get', { id })).messages.filter((m) => m.author.kind === 'role').map((m) => m.body);

  const runState = async (id: number) => (await t.owner('conversations.get', { id })).conversation.run;

  it('batches inputs that arrive while a turn works into one next turn', async () => {
    t = await openTestInstallation();
    const conversation = await conversationWith({ adapter: 'scripted' });
    await t.owner('conversations.send', { id: conversation.id, text: 'sleep 0.5' });
    await t.waitFor(async () => (await runState(conversation.id)).state === 'running', 'the first turn');
    await t.owner('conversations.send', { id: conversation.id, text: 'one' });
    await t.owner('conversations.send', { id: conversation.id, text: 'two' });
    const replies = await t.waitFor(async () => {
      const bodies = await roleMessages(conversation.id);
      return bodies.length === 2 ? bodies : undefined;
    }, 'two replies');
    expect(replies).toEqual(['slept 0.5', 'echo: one\necho: two']);
    const detail = await t.owner('conversations.get', { id: conversation.id });
    expect(detail.turns.map((turn) => turn.status)).toEqual(['done', 'done']);
  });

  it('ends the whole tree of an agent that ignores SIGTERM, with SIGKILL after the grace period', async () => {
    t = await openTestInstallation({ stopGraceMs: 300 });
    const pidsFile = path.join(fixtures, 'pids.txt');
    rmSync(pidsFile, { force: true });
    // It writes its pids in its own folder: in the sandbox it writes nowhere else.
    const conversation = await conversationWith(command('stubborn', { cwd: fixtures, env: { PIDS_FILE: pidsFile } }));
    await t.owner('conversations.send', { id: conversation.id, text: 'work forever' });
    const [leader, child] = await t.waitFor(() => {
      try {
        const pids = readFileSync(pidsFile, 'utf8').split(' ').map(Number);
        return pids.length === 2 ? pids : undefined;
      } catch {
        return undefined;
      }
    }, 'the agent and its child');
    expect(agentAlive(leader!, `PIDS_FILE=${pidsFile}`)).toBe(true);
    const started = Date.now();
    expect(await t.owner('conversations.stop', { id: conversation.id })).toEqual({ stopped: true });
    // In the sandbox the agent's pid namespace ends with its first process, SIGTERM-proof child and all.
    if (!t.installation.sandbox.available) expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(agentAlive(leader!, `PIDS_FILE=${pidsFile}`)).toBe(false);
    expect(agentAlive(child!, `PIDS_FILE=${pidsFile}`)).toBe(false);
    const detail = await t.owner('conversations.get', { id: conversation.id });
    expect(detail.turns.at(-1)).toMatchObject({ status: 'stopped', reason: 'Stopped by alice' });
    expect(detail.messages.at(-1)).toMatchObject({ author: { kind: 'system' }, body: 'Stopped by alice.' });
  });

  it('keeps the session across a stop, counts the stopped input as handled and restarts nothing by itself', async () => {
    t = await openTestInstallation();
    const conversation = await conversationWith({ adapter: 'scripted' });
    await t.owner('conversations.send', { id: conversation.id, text: 'first' });
    await t.waitFor(async () => (await roleMessages(conversation.id)).length === 1, 'the first reply');
    const session = (await runState(conversation.id)).session;
    expect(session).toMatch(/^scripted-/);
    await t.owner('conversations.send', { id: conversation.id, text: 'sleep 30' });
    await t.waitFor(async () => (await runState(conversation.id)).state === 'running', 'the sleeping turn');
    await t.owner('conversations.stop', { id: conversation.id });
    const after = await runState(conversation.id);
    expect(after).toMatchObject({ state: 'idle', pending: 0, session });
    expect(runningTurns(t.installation.db)).toEqual([]);
    const handled = t.installation.db.prepare("SELECT state FROM inputs WHERE body = 'sleep 30'").get();
    expect(handled).toEqual({ state: 'handled' });
    // The next message continues the same session, told about the stop.
    await t.owner('conversations.send', { id: conversation.id, text: 'again' });
    const replies = await t.waitFor(async () => {
      const bodies = await roleMessages(conversation.id);
      return bodies.length === 2 ? bodies : undefined;
    }, 'the reply after the stop');
    // The stop is Parley's to say (it did, in the chat); the agent was told, and its reply is its own.
    expect(replies[1]).toBe('echo: again');
    const lastTurn = (await t.owner('conversations.get', { id: conversation.id })).turns.at(-1)!;
    expect(noticesTakenBy(t.installation.db, lastTurn.id)).toEqual([
      'You were stopped by alice before your previous turn finished. What you were given in it was dropped and will not be retried.',
    ]);
    expect((await runState(conversation.id)).session).toBe(session);
    const turns = (await t.owner('conversations.get', { id: conversation.id })).turns;
    expect(turns.map((turn) => turn.status)).toEqual(['done', 'stopped', 'done']);
  });

  it('says there was nothing to stop when the agent is idle', async () => {
    t = await openTestInstallation();
    const conversation = await conversationWith({ adapter: 'scripted' });
    expect(await t.owner('conversations.stop', { id: conversation.id })).toEqual({ stopped: false });
  });

  it('runs at most maxConcurrentTurns agents at once; the rest wait in the order their work arrived', async () => {
    t = await openTestInstallation({ maxConcurrentTurns: 2 });
    const role = await t.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const tasks: Task[] = [];
    for (let i = 1; i <= 4; i++)
      tasks.push(await t.owner('tasks.create', { roleId: role.id, title: `task ${i}`, body: 'sleep 30' }));
    const state = async (id: number) => (await t.owner('tasks.get', { id })).task.run.state;
    await t.waitFor(
      async () => (await Promise.all(tasks.map((task) => state(task.id)))).every((s) => s === 'idle'),
      'the brief turns',
    );
    for (const task of tasks) await t.owner('tasks.comment', { id: task.id, text: 'sleep 30' });
    await t.waitFor(() => runningTurns(t.installation.db).length === 2, 'two running turns');
    expect(await Promise.all(tasks.map((task) => state(task.id)))).toEqual(['running', 'running', 'queued', 'queued']);
    await t.owner('tasks.stop', { id: tasks[1]!.id });
    await t.waitFor(async () => (await state(tasks[2]!.id)) === 'running', 'the third task to start');
    expect(await Promise.all(tasks.map((task) => state(task.id)))).toEqual(['running', 'idle', 'running', 'queued']);
    expect(runningTurns(t.installation.db)).toHaveLength(2);
    // Stopping a queued run drops its waiting work, and it never starts.
    expect(await t.owner('tasks.stop', { id: tasks[3]!.id })).toEqual({ stopped: true });
    expect(await state(tasks[3]!.id)).toBe('idle');
    await t.owner('tasks.stop', { id: tasks[0]!.id });
    await t.owner('tasks.stop', { id: tasks[2]!.id });
    expect(runningTurns(t.installation.db)).toEqual([]);
    expect(await state(tasks[3]!.id)).toBe('idle');
  });

  it('stops a turn that runs past its time limit, like a person would', async () => {
    t = await openTestInstallation();
    const conversation = await conversationWith({ adapter: 'scripted', turnTimeoutSec: 1 });
    await t.owner('conversations.send', { id: conversation.id, text: 'sleep 30' });
    const turn = await t.waitFor(
      async () => {
        const last = (await t.owner('conversations.get', { id: conversation.id })).turns.at(-1);
        return last?.status === 'stopped' ? last : undefined;
      },
      'the time limit',
      10_000,
    );
    expect(turn.reason).toBe('Stopped by the time limit (1 s)');
    expect(runningTurns(t.installation.db)).toEqual([]);
  });

  it('gives a command agent its inputs on stdin and posts its stdout as the reply', async () => {
    t = await openTestInstallation();
    const conversation = await conversationWith(command('count'));
    await t.owner('conversations.send', { id: conversation.id, text: 'hello there' });
    const replies = await t.waitFor(async () => {
      const bodies = await roleMessages(conversation.id);
      return bodies.length ? bodies : undefined;
    }, 'the reply');
    expect(replies).toEqual(['got 1: alice: hello there']);
  });

  it('gives a command agent the whole turn as JSON when asked to', async () => {
    t = await openTestInstallation();
    const conversation = await conversationWith(command('json', { input: 'json' }));
    await t.owner('conversations.send', { id: conversation.id, text: 'hi' });
    const replies = await t.waitFor(async () => {
      const bodies = await roleMessages(conversation.id);
      return bodies.length ? bodies : undefined;
    }, 'the reply');
    expect(replies).toEqual(['conversation for alice: hi']);
  });

  it('shows a failed agent’s exit code and error output in the conversation, and does not retry', async () => {
    t = await openTestInstallation();
    const conversation = await conversationWith(command('fail'));
    await t.owner('conversations.send', { id: conversation.id, text: 'hi' });
    const detail = await t.waitFor(async () => {
      const d = await t.owner('conversations.get', { id: conversation.id });
      return d.turns.at(-1)?.status === 'failed' ? d : undefined;
    }, 'the failure');
    expect(detail.messages.at(-1)?.body).toMatch(
      /^The agent failed: `.*node.*` exited with code 3: model quota exceeded$/,
    );
    expect(detail.conversation.run).toMatchObject({ state: 'idle', pending: 0 });
  });

  it('says clearly when the agent’s program does not exist', async () => {
    t = await openTestInstallation();
    const conversation = await conversationWith({ adapter: 'command', command: ['/nonexistent/agent-cli', '--flag'] });
    await t.owner('conversations.send', { id: conversation.id, text: 'hi' });
    const detail = await t.waitFor(async () => {
      const d = await t.owner('conversations.get', { id: conversation.id });
      return d.turns.at(-1)?.status === 'failed' ? d : undefined;
    }, 'the failure');
    expect(detail.messages.at(-1)?.body).toContain('could not start `/nonexistent/agent-cli`: no such program');
  });

  it('delivers a task’s output to its log, and stops the agents of a task and its subtasks when it is deleted', async () => {
    t = await openTestInstallation();
    const role = await t.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const parent = await t.owner('tasks.create', { roleId: role.id, title: 'report' });
    const log = await t.waitFor(async () => {
      const entries = (await t.owner('tasks.get', { id: parent.id })).log;
      return entries.length ? entries : undefined;
    }, 'the task output');
    expect(log).toMatchObject([
      { kind: 'output', author: { kind: 'role', name: 'assistant' }, body: 'echo: New task: report' },
    ]);
    const child = await t.owner('tasks.create', { roleId: role.id, title: 'sources', parentId: parent.id });
    await t.waitFor(
      async () => (await t.owner('tasks.get', { id: child.id })).task.run.state === 'idle',
      'the subtask brief',
    );
    await t.owner('tasks.comment', { id: child.id, text: 'sleep 30' });
    await t.waitFor(() => runningTurns(t.installation.db).length === 1, 'the subtask agent');
    await t.owner('tasks.delete', { id: parent.id });
    expect(runningTurns(t.installation.db)).toEqual([]);
    expect(await t.owner('tasks.list', {})).toEqual([]);
    expect(t.installation.db.prepare('SELECT count(*) AS n FROM runs').get()).toEqual({ n: 0 });
  });
});
