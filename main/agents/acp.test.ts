// The acp adapter's protocol handling, against a fake ACP agent on the official SDK's
// agent side (fixtures/fake-acp-agent.mjs): real installations, real worker and agent
// processes, the real `parley mcp`.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSettings } from '../../shared/domain';
import { groupAlive, processAlive, spawnInGroup } from '../runs/process-tree';
import { agentAlive } from '../../test-support/processes';
import { runningTurns } from '../store/queries/runs';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import { acpAdapter, FRESH_SESSION_NOTICE } from './acp';
import { answerFromPerson, decidePermission, isParleyTool, questionFor } from './acp-permissions';
import { conversations, fixtures, lastMessage } from '../../test-support/cli-test-kit';
import type { StreamUpdate, TurnOutcome, TurnRequest } from './types';

const FAKE = path.join(fixtures, 'fake-acp-agent.mjs');

interface Call {
  pid: number;
  method: string;
  params: Record<string, unknown> & { sessionId?: string; prompt?: { text: string }[] };
}

describe('decidePermission', () => {
  const options = [
    { optionId: 'always', name: 'Always', kind: 'allow_always' as const },
    { optionId: 'once', name: 'Allow', kind: 'allow_once' as const },
    { optionId: 'no', name: 'Reject', kind: 'reject_once' as const },
    { optionId: 'never', name: 'Never', kind: 'reject_always' as const },
  ];
  it.each([
    ['allow', 'Write notes.txt', 'once', options],
    ['reject', 'Write notes.txt', 'no', options],
    ['reject', 'mcp__parley__send', 'once', options],
    ['reject', 'parley.report', 'once', options],
    ['allow', 'Run make', 'always', options.filter((o) => o.kind !== 'allow_once')],
    ['reject', 'Run make', 'never', options.filter((o) => o.kind !== 'reject_once')],
  ] as const)('%s, %s → %s', (policy, title, chosen, offered) => {
    const decision = decidePermission(policy, { toolCall: { title }, options: offered });
    expect(decision.outcome).toEqual({ outcome: 'selected', optionId: chosen });
  });

  it('knows a Parley tool by the tool call the agent announced before it asked (codex-acp asks "Approve MCP tool call")', () => {
    const earlier = { title: 'Tool: parley/send', rawInput: { server: 'parley', tool: 'send', arguments: {} } };
    const request = { toolCall: { title: 'Approve MCP tool call' }, options };
    expect(decidePermission('reject', request, earlier).outcome).toEqual({ outcome: 'selected', optionId: 'once' });
    expect(decidePermission('reject', request).outcome).toEqual({ outcome: 'selected', optionId: 'no' });
    const other = { title: 'Tool: github/create_issue', rawInput: { server: 'github', tool: 'create_issue' } };
    expect(decidePermission('reject', request, other).outcome).toEqual({ outcome: 'selected', optionId: 'no' });
  });

  it('cancels when the agent offers nothing of the kind the policy wants', () => {
    const decision = decidePermission('reject', { toolCall: { title: 'Run make' }, options: [options[1]!] });
    expect(decision.outcome).toEqual({ outcome: 'cancelled' });
  });

  it.each([
    ['mcp__parley__send', true],
    ['parley/history', true],
    ['parley: reply', true],
    ['mcp__parleyx__send', false],
    ['Run parley send', false],
    ['mcp__other__send', false],
  ])('knows whether %s is a Parley tool (%s)', (title, expected) => {
    expect(isParleyTool({ title })).toBe(expected);
  });
});

describe('a person’s word on a tool (the role’s permissions “ask”)', () => {
  const options = [
    { optionId: 'always', name: 'Always', kind: 'allow_always' as const },
    { optionId: 'once', name: 'Allow', kind: 'allow_once' as const },
    { optionId: 'no', name: 'Reject', kind: 'reject_once' as const },
  ];
  it.each([
    ['ask', 'Write notes.txt', { title: 'Write notes.txt', toolKind: 'edit', input: '{"path":"notes.txt"}' }],
    ['ask', 'mcp__parley__send', null],
    ['reject', 'Write notes.txt', null],
    ['allow', 'Write notes.txt', null],
  ] as const)('%s, %s: asks %j', (policy, title, question) => {
    const request = { toolCall: { title, kind: 'edit' as const, rawInput: { path: 'notes.txt' } } };
    expect(questionFor(policy, request)).toEqual(question);
  });

  const question = { title: 'Write notes.txt' };
  it.each([
    [
      { outcome: 'approved', by: 'dave' },
      options,
      { outcome: 'selected', optionId: 'once' },
      'dave allowed Write notes.txt',
    ],
    [
      { outcome: 'denied', by: 'dave' },
      options,
      { outcome: 'selected', optionId: 'no' },
      'dave rejected Write notes.txt',
    ],
    [
      { outcome: 'denied', by: 'Parley', reason: 'nobody was asked: 8 already wait' },
      options,
      { outcome: 'selected', optionId: 'no' },
      'Parley rejected Write notes.txt: nobody was asked: 8 already wait',
    ],
    [
      { outcome: 'cancelled', reason: 'Stopped by dave' },
      options,
      { outcome: 'cancelled' },
      'Parley: nobody answered whether to use Write notes.txt (Stopped by dave); cancelled',
    ],
    [
      { outcome: 'denied', by: 'dave' },
      options.slice(0, 2),
      { outcome: 'cancelled' },
      'Parley: dave denied Write notes.txt, but the agent offered no way to reject it; cancelled',
    ],
  ] as const)('%j → %j', (answer, offered, outcome, says) => {
    expect(answerFromPerson(answer, question, offered)).toEqual({ outcome, says });
  });
});

describe('acp adapter', () => {
  let dir: string;
  let t: TestInstallation | undefined;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'parley-acp-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  /** A fake agent with a state folder of its own; `flags` go to FAKE_ACP. */
  function fake(flags: string[] = [], extra: Partial<Extract<AgentSettings, { adapter: 'acp' }>> = {}) {
    const state = mkdtempSync(path.join(dir, 'state-'));
    const settings: AgentSettings = {
      adapter: 'acp',
      command: [process.execPath, FAKE],
      // CLAUDE_CONFIG_DIR: where a real ACP agent keeps its state, which the sandbox lets it write.
      env: { FAKE_ACP_DIR: state, CLAUDE_CONFIG_DIR: state, FAKE_ACP: flags.join(',') },
      ...extra,
    };
    const calls = (method?: string): Call[] => {
      const file = path.join(state, 'log.jsonl');
      if (!existsSync(file)) return [];
      const all = readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Call);
      return method ? all.filter((call) => call.method === method) : all;
    };
    const agentPids = () =>
      readdirSync(state)
        .filter((f) => /^agent-\d+\.pid$/.test(f))
        .map((f) => Number(/\d+/.exec(f)![0]));
    return { settings, state, calls, agentPids };
  }

  async function open(settings: AgentSettings, name = 'assistant', options = {}) {
    t = await openTestInstallation(options);
    const c = conversations(t);
    const { conversation } = await c.open(settings, name);
    return { c, id: conversation.id };
  }

  it('answers with the agent’s message, gives it Parley’s MCP server in session/new, and keeps its session', async () => {
    const agent = fake();
    const { c, id } = await open({ ...agent.settings, instructions: 'Answer in French.' });
    const detail = await c.turn(id, 'hello there');
    expect(lastMessage(detail)).toBe('echo: hello there');
    const [init] = agent.calls('initialize');
    expect(init!.params).toMatchObject({
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    });
    const [created] = agent.calls('session/new');
    expect(created!.params.cwd).toBe(
      path.join(t!.installation.rolesDir, `role-${(await t!.owner('roles.list', {}))[0]!.id}`),
    );
    expect(created!.params.mcpServers).toEqual([
      {
        name: 'parley',
        command: path.join(t!.installation.dataDir, 'bin', 'parley'),
        args: ['mcp'],
        env: [
          { name: 'PARLEY_TOKEN', value: expect.stringMatching(/^prt_/) as string },
          { name: 'PARLEY_API', value: t!.installation.roleApiSocket },
          { name: 'PATH', value: expect.stringContaining(path.join(t!.installation.dataDir, 'bin')) as string },
        ],
      },
    ]);
    const [prompt] = agent.calls('session/prompt');
    const text = prompt!.params.prompt![0]!.text;
    // A new session hears who it is first, then where it is and what arrived.
    expect(text).toMatch(/^You are the agent behind the role "assistant"/);
    expect(text).toContain('[Instructions from the role’s owner, until they say otherwise]\nAnswer in French.');
    expect(text.trim().endsWith('alice: hello there')).toBe(true);
    const [session] = readdirSync(path.join(agent.state, 'sessions'));
    expect(detail.conversation.run.session).toBe(session!.replace(/\.json$/, ''));
    // The agent is gone once the turn is.
    for (const pid of agent.agentPids()) expect(agentAlive(pid, `FAKE_ACP_DIR=${agent.state}`)).toBe(false);
  });

  it('continues the session with session/load next turn, and passes over the history it replays', async () => {
    const agent = fake();
    const { c, id } = await open({ ...agent.settings, instructions: 'Answer in French.' });
    const first = await c.turn(id, 'one');
    const second = await c.turn(id, 'history');
    expect(lastMessage(second)).toBe('history: one');
    const [load] = agent.calls('session/load');
    expect(load!.params.sessionId).toBe(first.conversation.run.session);
    expect(load!.params.mcpServers).toEqual([expect.objectContaining({ name: 'parley', args: ['mcp'] })]);
    expect(agent.calls('session/new')).toHaveLength(1);
    // A continued session is not told again who it is, nor the instructions it already has.
    const prompt = agent.calls('session/prompt')[1]!.params.prompt![0]!.text;
    expect(prompt).not.toContain('You are the agent behind the role');
    expect(prompt).not.toContain('Answer in French.');
    expect(second.conversation.run.session).toBe(first.conversation.run.session);
    // Instructions that changed are told again.
    const [role] = await t!.owner('roles.list', {});
    await t!.owner('roles.update', {
      id: role!.id,
      agent: { ...role!.agent, instructions: 'Answer in Danish.' },
    });
    await c.turn(id, 'three');
    expect(agent.calls('session/prompt')[2]!.params.prompt![0]!.text).toContain(
      '[Instructions from the role’s owner, until they say otherwise]\nAnswer in Danish.',
    );
  });

  it('continues with session/resume when the agent offers that and not session/load', async () => {
    const agent = fake(['no-load', 'resume']);
    const { c, id } = await open(agent.settings);
    const first = await c.turn(id, 'one');
    const second = await c.turn(id, 'history');
    expect(lastMessage(second)).toBe('history: one');
    expect(agent.calls('session/resume')[0]!.params.sessionId).toBe(first.conversation.run.session);
    expect(agent.calls('session/load')).toHaveLength(0);
  });

  it('starts a new session, and says so, when the old one cannot be loaded', async () => {
    const agent = fake();
    const { c, id } = await open(agent.settings);
    const first = await c.turn(id, 'one');
    const lost = first.conversation.run.session!;
    rmSync(path.join(agent.state, 'sessions', `${lost}.json`));
    const second = await c.turn(id, 'history');
    expect(lastMessage(second)).toMatch(
      /^\(Parley could not continue the earlier session — session\/load failed: Resource not found.* — so this answer comes from a fresh session that does not remember earlier turns\.\)\n\nhistory:$/,
    );
    const fresh = second.conversation.run.session!;
    expect(fresh).not.toBe(lost);
    const prompt = agent.calls('session/prompt')[1]!.params.prompt![0]!.text;
    expect(prompt).toContain(FRESH_SESSION_NOTICE);
    expect(prompt).toMatch(/^You are the agent behind the role/);
    // The new session continues from then on.
    const third = await c.turn(id, 'history');
    expect(lastMessage(third)).toBe('history: history');
    expect(third.conversation.run.session).toBe(fresh);
  });

  it('says so when the agent cannot continue sessions at all', async () => {
    const agent = fake(['no-load']);
    const { c, id } = await open(agent.settings);
    await c.turn(id, 'one');
    const second = await c.turn(id, 'two');
    expect(lastMessage(second)).toContain('the agent cannot continue sessions');
    expect(lastMessage(second)).toMatch(/\n\necho: two$/);
    expect(agent.calls('session/new')).toHaveLength(2);
  });

  it('stops with session/cancel: the turn ends stopped, the agent is gone, and the next turn continues the session, told so', async () => {
    const agent = fake(['slow-cancel']);
    const { c, id } = await open(agent.settings, 'assistant', { stopGraceMs: 3_000 });
    await c.start(id, 'work forever');
    const session = await t!.waitFor(async () => (await c.detail(id)).conversation.run.session, 'the session');
    // The agent is streaming when Stop comes.
    await t!.waitFor(() => agent.calls('session/prompt').length > 0, 'the prompt');
    const [turn] = runningTurns(t!.installation.db);
    const [agentPid] = agent.agentPids();
    expect(await t!.owner('conversations.stop', { id })).toEqual({ stopped: true });
    expect(agent.calls('session/cancel')).toEqual([expect.objectContaining({ params: { sessionId: session } })]);
    expect(processAlive(turn!.pid!)).toBe(false);
    expect(agentAlive(agentPid!, `FAKE_ACP_DIR=${agent.state}`)).toBe(false);
    if (!t!.installation.sandbox.available) expect(groupAlive(agentPid!)).toBe(false);
    const stopped = await c.detail(id);
    expect(stopped.turns.at(-1)?.status).toBe('stopped');
    expect(stopped.conversation.run.session).toBe(session);
    // The agent answered the cancel before anything signalled it: Stop reached the worker first.
    const order = agent.calls().map((call) => call.method);
    expect(order).toContain('prompt/cancelled');
    // (The agent may be gone before a SIGTERM reaches it at all: its input closes too.)
    expect(order.slice(0, order.indexOf('prompt/cancelled'))).not.toContain('SIGTERM');
    const next = await c.turn(id, 'history');
    expect(lastMessage(next)).toBe('history: work forever');
    expect(agent.calls('session/load').at(-1)!.params.sessionId).toBe(session);
    expect(agent.calls('session/prompt').at(-1)!.params.prompt![0]!.text).toContain(
      'You were stopped by alice before your previous turn finished.',
    );
  });

  it('ends an agent that ignores session/cancel and SIGTERM itself, rather than leaving it to Parley', async () => {
    const agent = fake(['ignore-cancel']);
    // A grace far longer than the worker's own wait: if the worker did not end the agent, Parley's
    // SIGKILL would come only after a minute, and only for the worker's group, not the agent's.
    const { c, id } = await open(agent.settings, 'assistant', { stopGraceMs: 60_000 });
    await c.start(id, 'work forever');
    await t!.waitFor(() => agent.calls('session/prompt').length > 0, 'the prompt');
    const [agentPid] = agent.agentPids();
    await t!.owner('conversations.stop', { id });
    expect(agent.calls('session/cancel')).toHaveLength(1);
    expect(agentAlive(agentPid!, `FAKE_ACP_DIR=${agent.state}`)).toBe(false);
    if (!t!.installation.sandbox.available) expect(groupAlive(agentPid!)).toBe(false);
    expect((await c.detail(id)).turns.at(-1)?.status).toBe('stopped');
  }, 90_000);

  it('answers permission requests by the role’s policy, and always allows Parley’s own tools', async () => {
    const rejecting = fake();
    const { c, id } = await open(rejecting.settings);
    expect(lastMessage(await c.turn(id, 'permission'))).toBe('permission: no');
    expect(lastMessage(await c.turn(id, 'parley permission'))).toBe('permission: yes');
    await t!.close();
    const allowing = fake([], { permissions: 'allow' });
    const other = await open(allowing.settings);
    expect(lastMessage(await other.c.turn(other.id, 'permission'))).toBe('permission: yes');
  });

  it('asks a person when the role’s permissions are “ask”: approved, denied, and cancelled by Stop', async () => {
    const { c, id } = await open(fake([], { permissions: 'ask' }).settings);
    const waiting = () =>
      t!.waitFor(async () => (await t!.owner('approvals.list', {}))[0], 'the request to wait for a person', 60_000);
    const approvedTurn = c.turn(id, 'permission');
    const first = await waiting();
    expect(first).toMatchObject({ kind: 'permission', title: 'Write notes.txt', detail: { toolKind: 'edit' } });
    await t!.owner('approvals.decide', { id: first.id, approve: true });
    expect(lastMessage(await approvedTurn)).toBe('permission: yes');

    const deniedTurn = c.turn(id, 'permission');
    await t!.owner('approvals.decide', { id: (await waiting()).id, approve: false });
    expect(lastMessage(await deniedTurn)).toBe('permission: no');

    // Parley's own tools are never asked about.
    expect(lastMessage(await c.turn(id, 'parley permission'))).toBe('permission: yes');

    const stoppedTurn = c.turn(id, 'permission');
    const third = await waiting();
    await t!.owner('conversations.stop', { id });
    expect((await stoppedTurn).turns.at(-1)?.status).toBe('stopped');
    const row = t!.installation.db.prepare('SELECT state, reason FROM approvals WHERE id = ?').get(third.id);
    expect(row).toEqual({ state: 'cancelled', reason: 'Stopped by alice' });
    expect(await t!.owner('approvals.list', {})).toEqual([]);
  }, 120_000);

  it('gives the agent a working `parley mcp` through session/new alone', async () => {
    const { c, id } = await open(fake().settings, 'helper');
    expect(lastMessage(await c.turn(id, 'mcp'))).toBe('context: helper in a conversation');
  });

  it('chooses the role’s model through the agent’s model option, and says which it offers when it refuses', async () => {
    const agent = fake(['model'], { model: 'deep' });
    const { c, id } = await open(agent.settings);
    expect(lastMessage(await c.turn(id, 'hi'))).toBe('echo: hi');
    expect(agent.calls('session/set_config_option')[0]!.params).toMatchObject({ configId: 'model', value: 'deep' });
    const roleId = (await t!.owner('roles.list', {}))[0]!.id;
    await t!.owner('roles.update', {
      id: roleId,
      agent: { ...agent.settings, model: 'huge', instructions: 'Answer in Danish.' },
    });
    const refused = await c.turn(id, 'hi again');
    expect(refused.turns.at(-1)?.status).toBe('failed');
    expect(lastMessage(refused)).toMatch(
      /did not accept the model “huge” \(Invalid params.*\); it offers: fast, deep$/,
    );
    // The refused turn never reached the prompt, so the session has not heard the new instructions yet.
    expect(agent.calls('session/prompt')).toHaveLength(1);
    await t!.owner('roles.update', {
      id: roleId,
      agent: { ...agent.settings, model: 'deep', instructions: 'Answer in Danish.' },
    });
    await c.turn(id, 'once more');
    expect(agent.calls('session/prompt')[1]!.params.prompt![0]!.text).toContain('Answer in Danish.');
  });

  it('keeps the role’s environment write-only: names shown, values kept on update and given to the agent', async () => {
    const agent = fake();
    const settings = { ...agent.settings, env: { ...agent.settings.env, FAKE_ACP_SECRET: 's3cret' } };
    const { c, id } = await open(settings);
    const [role] = await t!.owner('roles.list', {});
    expect(role!.agent).toMatchObject({ adapter: 'acp', env: { FAKE_ACP_SECRET: { set: true } } });
    expect(JSON.stringify(role)).not.toContain('s3cret');
    await t!.owner('roles.update', { id: role!.id, agent: { ...role!.agent, model: 'any' } as never });
    expect(lastMessage(await c.turn(id, 'secret'))).toBe('secret: s3cret');
  });

  it('fails the turn with what the agent said when it crashes mid-turn', async () => {
    const { c, id } = await open(fake().settings);
    const detail = await c.turn(id, 'crash');
    expect(detail.turns.at(-1)?.status).toBe('failed');
    expect(lastMessage(detail)).toBe(
      `The agent failed: the agent (\`${process.execPath} ${FAKE}\`) exited with code 3: fake ACP agent: boom`,
    );
  });

  it('says what to do when the agent is not installed, or not logged in', async () => {
    const missing = path.join(dir, 'no', 'agent-acp');
    const { c, id } = await open({ adapter: 'acp', command: [missing, '--acp'] });
    expect(lastMessage(await c.turn(id, 'hi'))).toBe(
      `The agent failed: the agent (\`${missing} --acp\`) could not be started: there is no \`${missing}\` program (is it installed and on PATH?)`,
    );
    await t!.close();
    const other = await open(fake().settings);
    expect(lastMessage(await other.c.turn(other.id, 'refused'))).toMatch(
      /^The agent failed: the agent \(`.*`\) could not use its model: the key was refused or it is not logged in \(“Internal error: Invalid API key · Fix external API key”\)\. Set the right key in the role’s environment, or log in to the agent once in a terminal on this computer, then send the message again\.$/,
    );
    await t!.close();
    const third = await open(fake(['auth']).settings);
    expect(lastMessage(await third.c.turn(third.id, 'hi'))).toMatch(
      /^The agent failed: the agent \(`.*`\) is not logged in here \(“Authentication required.*”\)\. Log in to it once in a terminal on this computer, or set its API key in the role’s environment, then send the message again\.$/,
    );
  });

  it('reports tool calls as live lines and takes the agent’s last message as the output', async () => {
    const agent = fake();
    const launch = acpAdapter.prepare({
      role: { id: 1, name: 'assistant', description: '', agent: agent.settings, createdAt: '' },
      session: null,
      inputs: [{ kind: 'message', from: 'alice', body: 'tools', at: '' }],
      context: {
        kind: 'conversation',
        id: 1,
        role: { id: 1, name: 'assistant' },
        summary: 'You are assistant, in your conversation with alice.',
        root: { kind: 'conversation', id: 1, summary: 'alice’s conversation' },
        reporting: 'Your final answer is your message to alice.',
      },
      peers: [],
      trust: 'own',
      env: { PATH: process.env.PATH ?? '' },
      defaultCwd: dir,
      privateDir: dir,
      paths: { node: process.execPath, scriptedAgent: path.join(process.cwd(), 'dist', 'scripted-agent.cjs') },
    } satisfies TurnRequest);
    const updates: StreamUpdate[] = [];
    const outcome = await new Promise<TurnOutcome>((resolve) => {
      const child = spawnInGroup(launch.command, launch.args, { cwd: launch.cwd, env: launch.env });
      child.stdin!.end(launch.stdin);
      let buffer = '';
      let stderr = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        buffer += chunk;
        for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
          const update = launch.onLine?.(buffer.slice(0, at));
          if (update) updates.push(update);
          buffer = buffer.slice(at + 1);
        }
      });
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.once('close', (code, signal) =>
        resolve(launch.finish({ code, signal, stdout: '', stderr, truncated: false })),
      );
    });
    expect(outcome).toEqual({ ok: true, output: 'Found it.' });
    expect(updates.map((u) => u.live).filter(Boolean)).toEqual([
      'Let me look.',
      '→ Read notes.txt {"path":"notes.txt"}',
      '← Read notes.txt completed',
      'Found it.',
    ]);
    expect(updates.find((u) => u.session)?.session).toMatch(/^[0-9a-f-]{36}$/);
  });

  /** One turn of the worker with `trust`, outside an installation (no role API: nobody can be asked). */
  async function direct(settings: AgentSettings, body: string, trust: TurnRequest['trust']) {
    const launch = acpAdapter.prepare({
      role: { id: 1, name: 'assistant', description: '', agent: settings, createdAt: '' },
      session: null,
      inputs: [{ kind: 'text', from: 'bob/helper', body, at: '' }],
      context: {
        kind: 'thread',
        id: 1,
        role: { id: 1, name: 'assistant' },
        summary: 'You are assistant, in an agent conversation bob/helper started.',
        root: { kind: 'thread', id: 1, summary: 'bob/helper’s question' },
        reporting: 'Your final answer is your reply to bob/helper.',
        trust: { level: trust, peer: 'bob' },
      },
      peers: [],
      trust,
      env: { PATH: process.env.PATH ?? '' },
      defaultCwd: dir,
      privateDir: dir,
      paths: { node: process.execPath, scriptedAgent: path.join(process.cwd(), 'dist', 'scripted-agent.cjs') },
    } satisfies TurnRequest);
    const updates: StreamUpdate[] = [];
    const outcome = await new Promise<TurnOutcome>((resolve) => {
      const child = spawnInGroup(launch.command, launch.args, { cwd: launch.cwd, env: launch.env });
      child.stdin!.end(launch.stdin);
      let buffer = '';
      let stderr = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        buffer += chunk;
        for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
          const update = launch.onLine?.(buffer.slice(0, at));
          if (update) updates.push(update);
          buffer = buffer.slice(at + 1);
        }
      });
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.once('close', (code, signal) =>
        resolve(launch.finish({ code, signal, stdout: '', stderr, truncated: false })),
      );
    });
    return { outcome, live: updates.map((u) => u.live).filter(Boolean) };
  }

  it('sets the session mode itself: an agent that opens in its own “auto” asks Parley, which answers by the role’s policy', async () => {
    const agent = fake(['modes']);
    const { c, id } = await open(agent.settings);
    // Left in its own mode, the agent would have decided this by itself.
    expect(lastMessage(await c.turn(id, 'permission'))).toBe('permission: no');
    expect(agent.calls('session/set_mode').map((call) => call.params.modeId)).toEqual(['default']);
    // A continued session is set again: the mode is Parley's every turn.
    expect(lastMessage(await c.turn(id, 'permission'))).toBe('permission: no');
    expect(agent.calls('session/set_mode').map((call) => call.params.modeId)).toEqual(['default', 'default']);
    await t!.close();
    const chosen = fake(['modes'], { mode: 'acceptEdits' });
    const other = await open(chosen.settings);
    await other.c.turn(other.id, 'hello');
    expect(chosen.calls('session/set_mode').map((call) => call.params.modeId)).toEqual(['acceptEdits']);
  }, 90_000);

  it.each([
    ['modes', 'answer', 'default'],
    ['modes', 'work', 'acceptEdits'],
    ['modes', 'full', 'default'],
    ['codex-modes', 'answer', 'read-only'],
    ['codex-modes', 'work', null],
    ['codex-modes', 'full', null],
  ] as const)(
    'with %s, a turn at %s runs in %s; at answer nobody is asked and the request is denied',
    async (flag, trust, mode) => {
      // A role that allows everything for itself: a peer at `answer` still gets a denial.
      const agent = fake([flag], { permissions: 'allow' });
      const { outcome, live } = await direct(agent.settings, 'permission', trust);
      // codex-acp opens in its workspace mode (`auto`), which is already the one for work and full.
      expect(agent.calls('session/set_mode').map((call) => call.params.modeId)).toEqual(mode ? [mode] : []);
      if (trust === 'answer') {
        expect(outcome).toEqual({ ok: true, output: 'permission: no' });
        expect(live).toContain('Parley rejected Write notes.txt (the role’s permissions are “reject”)');
      } else if (trust === 'full') expect(outcome).toEqual({ ok: true, output: 'permission: yes' });
    },
    60_000,
  );

  it('gives codex-acp a sandbox that follows the trust, and no other agent codex’s options', () => {
    const request = (trust: TurnRequest['trust'], settings: AgentSettings) =>
      JSON.parse(
        acpAdapter.prepare({
          role: { id: 1, name: 'assistant', description: '', agent: settings, createdAt: '' },
          session: null,
          inputs: [],
          context: {
            kind: 'conversation',
            id: 1,
            role: { id: 1, name: 'assistant' },
            summary: '',
            root: { kind: 'conversation', id: 1, summary: '' },
            reporting: '',
          },
          peers: [],
          trust,
          env: {},
          defaultCwd: dir,
          privateDir: dir,
          paths: { node: process.execPath, scriptedAgent: path.join(dir, 'scripted-agent.cjs') },
        }).stdin,
      ) as { args: string[]; permissions: string };
    const codex: AgentSettings = { adapter: 'acp', command: ['/opt/bin/codex-acp'], sandbox: 'danger-full-access' };
    expect(request('answer', codex).args).toEqual(['-c', 'sandbox_mode="read-only"']);
    expect(request('work', codex).args).toEqual(['-c', 'sandbox_mode="workspace-write"']);
    expect(request('full', codex).args).toEqual(['-c', 'sandbox_mode="danger-full-access"']);
    expect(request('own', { ...codex, sandbox: undefined }).args).toEqual(['-c', 'sandbox_mode="workspace-write"']);
    const claude: AgentSettings = { adapter: 'acp', command: ['claude-agent-acp', '--x'], permissions: 'allow' };
    expect(request('answer', claude)).toMatchObject({ args: ['--x'], permissions: 'reject' });
    expect(request('work', claude)).toMatchObject({ args: ['--x'], permissions: 'ask' });
    expect(request('full', claude)).toMatchObject({ args: ['--x'], permissions: 'allow' });
  });

  it('shows a person’s Deny with codex-acp, whose only reject ends the turn, as their denial, not as a failure', async () => {
    const { c, id } = await open(fake(['codex-modes', 'abort-on-reject'], { permissions: 'ask' }).settings);
    const deniedTurn = c.turn(id, 'permission');
    const request = await t!.waitFor(
      async () => (await t!.owner('approvals.list', {}))[0],
      'the request to wait for a person',
      60_000,
    );
    await t!.owner('approvals.decide', { id: request.id, approve: false });
    const detail = await deniedTurn;
    expect(detail.turns.at(-1)?.status).toBe('done');
    expect(lastMessage(detail)).toBe(
      '(The agent stopped here: alice rejected Write notes.txt, and it ends its turn on a refusal.)',
    );
  }, 90_000);
});
