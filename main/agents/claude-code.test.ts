import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSettings } from '../../shared/domain';
import { groupAlive } from '../runs/process-tree';
import { agentAlive } from '../../test-support/processes';
import { findRun, runningTurns, setRunSession } from '../store/queries/runs';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import { ClaudeStream, FRESH_SESSION_NOTICE } from './claude-code';
import {
  conversations,
  exited,
  feed,
  installFake,
  invocations,
  lastMessage,
  realCli,
  transcript,
  UUID,
  type FakeInvocation,
} from '../../test-support/cli-test-kit';

const SESSION = '6f1c2b7e-3d4a-4c5b-9e8f-0a1b2c3d4e5f';

describe('ClaudeStream', () => {
  it('reads the session from init, live lines from assistant and tool events, and the output from result', () => {
    const stream = new ClaudeStream(null);
    const updates = feed(stream, transcript('claude-success.jsonl', { SESSION, CWD: '/w', TEXT: 'All done.\nBye.' }));
    expect(updates[0]).toEqual({ session: SESSION, live: 'Claude Code started (claude-sonnet-4-5-20250929)' });
    expect(updates.slice(1).map((u) => u.live)).toEqual([
      'Let me check where I am first.',
      '→ mcp__parley__context {}',
      '← { "token": "run", "role": { "id": 1, "name": "assistant" } }',
      '→ Bash {"command":"ls","description":"List files"}',
      '← README.md notes.txt',
      'All done. Bye.',
    ]);
    expect(stream.finish(exited(0), 'claude', false)).toEqual({
      ok: true,
      output: 'All done.\nBye.',
      session: SESSION,
    });
  });

  it('fails the turn with the message of an error result', () => {
    const stream = new ClaudeStream(SESSION);
    const updates = feed(stream, transcript('claude-error-result.jsonl', { SESSION, CWD: '/w' }));
    expect(updates.map((u) => u.live)).toContain('retrying: the model server is overloaded (529) (2nd try)');
    const outcome = stream.finish(exited(1), 'claude', false);
    expect(outcome).toEqual({
      ok: false,
      error:
        'Claude Code could not reach its model: the model server is overloaded (529) after 2 tries (it said: “API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}”). Check that the model server is running and reachable from this computer, then send the message again.',
    });
  });

  it('answers with the model’s words, not the notices Claude Code adds to its result', () => {
    const notice = 'Warning: your requests go through 127.0.0.1:41234, which does not pass the safety check through.';
    const line = (event: object) => JSON.stringify({ session_id: SESSION, ...event });
    const answer = (result: string, synthetic: boolean) => {
      const stream = new ClaudeStream(SESSION);
      feed(stream, [
        line({ type: 'system', subtype: 'init', model: 'claude-sonnet-4-5' }),
        line({
          type: 'assistant',
          message: { model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'The budget is 40k.' }] },
        }),
        ...(synthetic
          ? [line({ type: 'assistant', message: { model: '<synthetic>', content: [{ type: 'text', text: notice }] } })]
          : []),
        line({ type: 'result', subtype: 'success', is_error: false, result }),
      ]);
      return stream.finish(exited(0), 'claude', false);
    };
    // By the stream's own structure: the result holds the model's last message and more.
    expect(answer(`The budget is 40k.\n\n${notice}`, false)).toEqual({
      ok: true,
      output: 'The budget is 40k.',
      session: SESSION,
    });
    expect(answer(`The budget is 40k.\n\n${notice}`, true)).toEqual({
      ok: true,
      output: 'The budget is 40k.',
      session: SESSION,
    });
    // Where the result is not the model's message at all, only the known notice goes.
    expect(answer(`Summary: the budget is 40k.\n\n${notice}`, false)).toEqual({
      ok: true,
      output: 'Summary: the budget is 40k.',
      session: SESSION,
    });
  });

  it('says what to do when Claude Code is not logged in (the real 2.1 transcript)', () => {
    const stream = new ClaudeStream(null);
    feed(stream, transcript('claude-not-logged-in.jsonl', { SESSION }));
    const outcome = stream.finish(exited(1), 'claude', false);
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.error).toBe(
      'Claude Code is not logged in here (“Not logged in · Please run /login”). Run `claude` once in a terminal on this computer and log in (or set ANTHROPIC_API_KEY in the role’s environment), then send the message again.',
    );
    expect(stream.session).toBe(SESSION);
  });

  it('ends the turn at the first refused key instead of letting Claude Code retry for minutes (the real 2.1 stream)', () => {
    const stream = new ClaudeStream(null);
    const updates = feed(stream, transcript('claude-key-refused.jsonl', { SESSION }));
    const failed = updates.filter((update) => update.fail !== undefined);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toEqual({
      live: 'Claude Code: the API refused the key (401 authentication_failed)',
      fail: 'Claude Code is not logged in here, or its API key was refused (401 authentication_failed). Run `claude` once in a terminal on this computer and log in (or set ANTHROPIC_API_KEY in the role’s environment), then send the message again.',
    });
  });

  it('forgets a failed resume once the runner falls back, and says so in the output', () => {
    const stream = new ClaudeStream(SESSION);
    feed(stream, transcript('claude-resume-failed.jsonl', { SESSION }));
    const fallback = stream.line(
      JSON.stringify({
        type: 'parley.runner',
        event: 'fallback',
        reason: `No conversation found with session ID: ${SESSION}`,
      }),
    );
    expect(fallback?.live).toContain('could not resume the session');
    const fresh = '0a0b0c0d-1111-4222-8333-444455556666';
    feed(stream, transcript('claude-success.jsonl', { SESSION: fresh, CWD: '/w', TEXT: 'Hello again.' }));
    expect(stream.finish(exited(0), 'claude', false)).toEqual({
      ok: true,
      output: `(Parley could not resume the earlier Claude Code session — No conversation found with session ID: ${SESSION} — so this answer comes from a fresh session that does not remember earlier turns.)\n\nHello again.`,
      session: fresh,
    });
  });

  it('says how to install Claude Code when there is no claude program', () => {
    const missing = JSON.stringify({
      type: 'parley.runner',
      event: 'spawn_error',
      code: 'ENOENT',
      message: 'spawn claude ENOENT',
    });
    const stream = new ClaudeStream(null);
    stream.line(missing);
    expect(stream.finish(exited(127), 'claude', false)).toEqual({
      ok: false,
      error:
        'Claude Code is not installed here: there is no `claude` program on PATH. Install it (`npm install -g @anthropic-ai/claude-code`), run `claude` once to log in, or set the full path of `claude` in the role’s command setting.',
    });
  });

  it('reports a process that ended without a result by its error output', () => {
    const stream = new ClaudeStream(null);
    const outcome = stream.finish(exited(1, 'Error: Session ID x is already in use.\n'), 'claude', false);
    expect(outcome).toEqual({ ok: false, error: 'Claude Code failed: Error: Session ID x is already in use.' });
  });
});

describe('claude-code adapter', () => {
  let dir: string;
  let fakeClaude: string;
  let t: TestInstallation;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'parley-claude-'));
    fakeClaude = installFake(dir, 'claude', 'fake-claude.mjs');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(async () => {
    await t?.close();
  });

  /** A fresh state folder for the fake per test: its sessions and its log. */
  function agent(extra: Partial<Extract<AgentSettings, { adapter: 'claude-code' }>> = {}) {
    const state = mkdtempSync(path.join(dir, 'state-'));
    const settings: AgentSettings = {
      adapter: 'claude-code',
      command: fakeClaude,
      // Where the real CLI keeps its state, which the sandbox lets it write.
      env: { FAKE_CLI_DIR: state, CLAUDE_CONFIG_DIR: state },
      ...extra,
    };
    return { settings, state, runs: () => invocations(state) };
  }
  const option = (run: FakeInvocation, name: string) => run.argv[run.argv.indexOf(name) + 1];

  it('says on the conversation’s run while Claude Code retries its model, until the turn ends at the model timeout', async () => {
    t = await openTestInstallation({ stopGraceMs: 500 });
    const c = conversations(t);
    const { conversation } = await c.open(agent({ modelTimeoutSec: 5 }).settings);
    await c.start(conversation.id, 'overloaded forever');
    // What the app reads of the conversation (conversations.get), as the conversation view shows it.
    const retrying = await t.waitFor(
      async () => (await c.detail(conversation.id)).conversation.run.retrying,
      'the run to say it retries',
      30_000,
    );
    expect(retrying).toBe('retrying: the model server is overloaded (529) (2nd try)');
    const ended = await t.waitFor(
      async () => {
        const detail = await c.detail(conversation.id);
        return detail.turns.at(-1)?.status === 'running' ? undefined : detail;
      },
      'the turn to end at the model timeout',
      30_000,
    );
    expect(ended.turns.at(-1)?.status).toBe('failed');
    expect(lastMessage(ended)).toMatch(/Claude Code could not reach its model: the model server is overloaded \(529\)/);
    expect(ended.conversation.run.retrying).toBeUndefined();
  }, 60_000);

  it('answers with the result, keeps the session it chose, and passes its flags, prompt and MCP config', async () => {
    t = await openTestInstallation();
    const c = conversations(t);
    const fake = agent({ model: 'sonnet', permissionMode: 'acceptEdits', instructions: 'Answer in French.' });
    const { conversation } = await c.open(fake.settings);
    const detail = await c.turn(conversation.id, 'hello there');
    expect(lastMessage(detail)).toBe('echo: hello there');
    const [run] = fake.runs();
    const session = option(run!, '--session-id');
    expect(session).toMatch(UUID);
    expect(detail.conversation.run.session).toBe(session);
    expect(run!.argv.slice(0, 4)).toEqual(['-p', '--output-format', 'stream-json', '--verbose']);
    expect(option(run!, '--permission-mode')).toBe('acceptEdits');
    expect(option(run!, '--model')).toBe('sonnet');
    expect(option(run!, '--allowedTools')).toBe('mcp__parley');
    expect(run!.argv).not.toContain('--resume');
    // The standing text and the owner's instructions: in a private file of the data folder, not on the command line.
    expect(run!.argv.join(' ')).not.toContain('Answer in French.');
    expect(run!.argv).not.toContain('--append-system-prompt');
    expect(run!.systemPrompt).toContain('Instructions from the role’s owner:\nAnswer in French.');
    expect(run!.systemPromptMode).toBe('600');
    // In the turn's own private folder, in the data folder's `turns`.
    expect(path.dirname(path.dirname(path.dirname(run!.systemPromptFile as string)))).toBe(
      path.join(t.installation.dataDir, 'turns'),
    );
    expect(existsSync(run!.systemPromptFile as string)).toBe(false);
    // MCP first: the tools, never a shell command that would need approval.
    expect(run!.systemPrompt).toContain('You act in Parley through the tools of the MCP server "parley"');
    expect(run!.systemPrompt).not.toContain('parley report');
    // The prompt: the run's context and root, then the inputs.
    expect(run!.prompt).toContain('You are assistant, in your conversation with alice.');
    expect(run!.prompt).toContain('`report` posts a message to alice right away.');
    expect(run!.prompt.trim().endsWith('alice: hello there')).toBe(true);
    expect(run!.cwd).toBe(path.join(t.installation.rolesDir, `role-${(await t.owner('roles.list', {}))[0]!.id}`));
    // The MCP config: `parley mcp` with the turn's token, private, and gone after the turn.
    expect(run!.mcpConfig).toEqual({
      mcpServers: {
        parley: {
          type: 'stdio',
          command: path.join(t.installation.dataDir, 'bin', 'parley'),
          args: ['mcp'],
          env: {
            PARLEY_TOKEN: expect.stringMatching(/^prt_/) as string,
            PARLEY_API: t.installation.roleApiSocket,
            PATH: expect.stringContaining(path.join(t.installation.dataDir, 'bin')) as string,
          },
          alwaysLoad: true,
        },
      },
    });
    expect(run!.mcpConfigMode).toBe('600');
    expect(run!.mcpConfigDirMode).toBe('700');
    expect(existsSync(run!.mcpConfigFile as string)).toBe(false);
    // Parley runs the runner as Node; Claude Code does not inherit that.
    expect(run!.electronRunAsNode).toBeNull();
  });

  it('ends a turn whose key is refused at once, and says what to do', async () => {
    t = await openTestInstallation({ stopGraceMs: 300 });
    const c = conversations(t);
    const fake = agent();
    const { conversation } = await c.open(fake.settings);
    const detail = await c.turn(conversation.id, 'key refused');
    expect(detail.turns.at(-1)?.status).toBe('failed');
    expect(lastMessage(detail)).toBe(
      'The agent failed: Claude Code is not logged in here, or its API key was refused (401 authentication_failed). Run `claude` once in a terminal on this computer and log in (or set ANTHROPIC_API_KEY in the role’s environment), then send the message again.',
    );
    expect(agentAlive(fake.runs()[0]!.pid, `FAKE_CLI_DIR=${fake.state}`)).toBe(false);
  });

  it('shows a task’s body once in its first turn', async () => {
    t = await openTestInstallation();
    const fake = agent();
    const role = await t.owner('roles.create', { name: 'assistant', agent: fake.settings });
    const task = await t.owner('tasks.create', {
      roleId: role.id,
      title: 'Quarterly numbers',
      body: 'Collect the Q3 figures from the finance sheet.',
    });
    await t.waitFor(
      async () => (await t.owner('tasks.get', { id: task.id })).task.run.lastTurn?.status === 'done',
      'the turn',
    );
    const prompt = fake.runs()[0]!.prompt;
    expect(prompt.split('Collect the Q3 figures from the finance sheet.')).toHaveLength(2);
    expect(prompt).toContain('Task #1 "Quarterly numbers" (open).');
  });

  it('resumes its session on the next turn, in the role’s working folder', async () => {
    t = await openTestInstallation();
    const c = conversations(t);
    const fake = agent({ cwd: dir });
    const { conversation } = await c.open(fake.settings);
    await c.turn(conversation.id, 'one');
    const detail = await c.turn(conversation.id, 'two');
    expect(lastMessage(detail)).toBe('echo: two');
    const [first, second] = fake.runs();
    const session = option(first!, '--session-id');
    expect(option(second!, '--resume')).toBe(session);
    expect(second!.argv).not.toContain('--session-id');
    expect(detail.conversation.run.session).toBe(session);
    expect(fake.runs()).toHaveLength(2);
    expect(second!.cwd).toBe(dir);
  });

  it('says so when the role’s working folder does not exist', async () => {
    t = await openTestInstallation();
    const c = conversations(t);
    const { conversation } = await c.open(agent({ cwd: path.join(dir, 'gone') }).settings);
    const detail = await c.turn(conversation.id, 'hi');
    expect(lastMessage(detail)).toMatch(/^The agent failed: the role’s working folder .*gone does not exist/);
  });

  it('ends the whole tree on Stop, and falls back to a fresh session when the stopped one cannot be resumed', async () => {
    t = await openTestInstallation({ stopGraceMs: 300 });
    const c = conversations(t);
    const fake = agent();
    const { conversation } = await c.open(fake.settings);
    await c.start(conversation.id, 'work forever');
    // Claude Code announced its session, then worked with a child that ignores SIGTERM.
    const [runner, cli, child, shellCommand] = await t.waitFor(() => {
      try {
        const pids = readFileSync(path.join(fake.state, 'pids'), 'utf8').split(' ').map(Number);
        return pids.length === 4 ? pids : undefined;
      } catch {
        return undefined;
      }
    }, 'the fake claude and its child');
    const session = await t.waitFor(
      async () => (await c.detail(conversation.id)).conversation.run.session,
      'the session',
    );
    expect(session).toBe(option(fake.runs()[0]!, '--session-id'));
    const [turn] = runningTurns(t.installation.db);
    // In the sandbox the turn's process is the sandbox's, which starts the runner.
    if (!t.installation.sandbox.available) expect(turn!.pid).toBe(runner);
    expect(await t.owner('conversations.stop', { id: conversation.id })).toEqual({ stopped: true });
    // Its shell command left the group in a session of its own; it is gone too.
    for (const pid of [runner!, cli!, child!, shellCommand!])
      expect(agentAlive(pid, `FAKE_CLI_DIR=${fake.state}`)).toBe(false);
    if (!t.installation.sandbox.available) expect(groupAlive(runner!)).toBe(false);
    expect((await c.detail(conversation.id)).conversation.run.session).toBe(session);
    // The stopped session was never saved: resuming it fails, and the runner starts a fresh one.
    const detail = await c.turn(conversation.id, 'are you there?');
    const [, resume, fresh] = fake.runs();
    expect(option(resume!, '--resume')).toBe(session);
    const newSession = option(fresh!, '--session-id');
    expect(newSession).toMatch(UUID);
    expect(newSession).not.toBe(session);
    expect(fresh!.prompt).toContain(FRESH_SESSION_NOTICE);
    expect(fresh!.prompt).toContain('You were stopped by alice before your previous turn finished.');
    expect(lastMessage(detail)).toBe(
      `(Parley could not resume the earlier Claude Code session — No conversation found with session ID: ${session} — so this answer comes from a fresh session that does not remember earlier turns.)\n\necho: are you there?`,
    );
    expect(detail.turns.map((turn) => turn.status)).toEqual(['stopped', 'done']);
    expect(detail.conversation.run.session).toBe(newSession);
    // And the fresh session resumes normally from then on.
    await c.turn(conversation.id, 'and now?');
    expect(option(fake.runs()[3]!, '--resume')).toBe(newSession);
  });

  it('says in the conversation that Claude Code is not logged in, and what to do', async () => {
    t = await openTestInstallation();
    const c = conversations(t);
    const { conversation } = await c.open(agent().settings);
    const detail = await c.turn(conversation.id, 'login');
    expect(detail.turns.at(-1)?.status).toBe('failed');
    expect(lastMessage(detail)).toBe(
      'The agent failed: Claude Code is not logged in here (“Not logged in · Please run /login”). Run `claude` once in a terminal on this computer and log in (or set ANTHROPIC_API_KEY in the role’s environment), then send the message again.',
    );
  });

  it('says in the conversation when the claude program does not exist', async () => {
    t = await openTestInstallation();
    const c = conversations(t);
    const { conversation } = await c.open({ adapter: 'claude-code', command: path.join(dir, 'no', 'claude') });
    const detail = await c.turn(conversation.id, 'hi');
    expect(detail.turns.at(-1)?.status).toBe('failed');
    expect(lastMessage(detail)).toBe(
      `The agent failed: Claude Code was not found at \`${path.join(dir, 'no', 'claude')}\` (the role’s command setting). Check the path, or clear the setting to use \`claude\` from PATH.`,
    );
  });

  it('gives Claude Code a working `parley mcp` through --mcp-config alone', async () => {
    t = await openTestInstallation();
    const c = conversations(t);
    const { conversation } = await c.open(agent().settings, 'helper');
    const detail = await c.turn(conversation.id, 'mcp');
    expect(lastMessage(detail)).toBe('context: run token of helper in a conversation');
  });
});

const claude = realCli('PARLEY_TEST_CLAUDE', 'claude');
// Parley gives Claude Code only a minimal environment and a fresh HOME here, so it cannot log in
// even on a machine where it is logged in or ANTHROPIC_API_KEY is set.
const skipReal = claude.path ? null : claude.reason;
/** A real CLI starts in seconds, and twice that on a loaded machine. */
const REAL_TURN_MS = 90_000;
if (skipReal) console.info(`Skipping the tests against the real Claude Code: ${skipReal}`);

describe.skipIf(skipReal !== null)('claude-code adapter with the real Claude Code (not logged in)', () => {
  let t: TestInstallation;
  let home: string;
  beforeAll(() => {
    console.info(`Real Claude Code: ${claude.path} (${claude.reason})`);
    home = mkdtempSync(path.join(os.tmpdir(), 'parley-real-claude-'));
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  afterEach(async () => {
    await t?.close();
  });

  it('documents every flag Parley passes in its --help', () => {
    const help = execFileSync(claude.path!, ['--help'], { encoding: 'utf8', timeout: 60_000 });
    for (const flag of [
      '--print',
      '--output-format',
      'stream-json',
      '--verbose',
      '--mcp-config',
      '--allowedTools',
      '--append-system-prompt',
      '--permission-mode',
      '--model',
      '--session-id',
      '--resume',
    ])
      expect(help, flag).toContain(flag);
    for (const mode of ['default', 'acceptEdits', 'bypassPermissions', 'plan']) expect(help).toContain(`"${mode}"`);
  });

  it('accepts Parley’s flags, starts the session Parley chose, and falls back when a session cannot be resumed', async () => {
    t = await openTestInstallation();
    const c = conversations(t);
    const { conversation } = await c.open({
      adapter: 'claude-code',
      command: claude.path!,
      model: 'sonnet',
      permissionMode: 'acceptEdits',
      instructions: 'Be brief.',
      env: { HOME: home },
    });
    const first = await c.turn(conversation.id, 'hello', REAL_TURN_MS);
    // Every flag was accepted (an unknown one ends Claude Code before it starts a session),
    // its stream-json was read (the session came from the init event), and it cannot log in here.
    expect(lastMessage(first)).toMatch(/^The agent failed: Claude Code is not logged in here \(“Not logged in/);
    const session = first.conversation.run.session;
    expect(session).toMatch(UUID);
    // A session that was never saved cannot be resumed: Parley starts a fresh one.
    const run = findRun(t.installation.db, { kind: 'conversation', id: conversation.id })!;
    const lost = '00000000-1111-4222-8333-444444444444';
    setRunSession(t.installation.db, run.id, lost);
    const second = await c.turn(conversation.id, 'again', REAL_TURN_MS);
    expect(lastMessage(second)).toMatch(/^The agent failed: Claude Code is not logged in here/);
    expect(lastMessage(second)).toContain('(after the earlier session could not be resumed)');
    const fresh = second.conversation.run.session;
    expect(fresh).toMatch(UUID);
    expect([lost, session]).not.toContain(fresh);
  }, 120_000);

  it('fails at the first refused key instead of retrying for minutes', async () => {
    // An Anthropic API on loopback that refuses every key.
    let requests = 0;
    const api = http.createServer((req, res) => {
      requests++;
      req.resume();
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }));
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    try {
      t = await openTestInstallation({ stopGraceMs: 500 });
      const c = conversations(t);
      const { conversation } = await c.open({
        adapter: 'claude-code',
        command: claude.path!,
        env: {
          HOME: home,
          ANTHROPIC_API_KEY: 'sk-ant-refused-0000',
          ANTHROPIC_BASE_URL: `http://127.0.0.1:${(api.address() as { port: number }).port}`,
        },
      });
      const detail = await c.turn(conversation.id, 'hello', REAL_TURN_MS);
      expect(lastMessage(detail)).toMatch(
        /^The agent failed: Claude Code is not logged in here, or its API key was refused \(401 authentication_failed\)/,
      );
      // Claude Code retries a refused key ten times over about three minutes; Parley ends it at the
      // first retry (a request or two more may go out while it ends on a loaded machine).
      expect(requests).toBeLessThanOrEqual(5);
    } finally {
      api.closeAllConnections();
      await new Promise<void>((resolve) => api.close(() => resolve()));
    }
  }, 120_000);
});
