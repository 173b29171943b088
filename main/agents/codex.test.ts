import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSettings, Role } from '../../shared/domain';
import { endGroup, groupAlive, processAlive } from '../runs/process-tree';
import { agentAlive } from '../../test-support/processes';
import { findRun, runningTurns, setRunSession } from '../store/queries/runs';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import {
  conversations,
  exited,
  feed,
  installFake,
  invocations,
  lastMessage,
  processTree,
  realCli,
  transcript,
  UUID,
  type FakeInvocation,
} from '../../test-support/cli-test-kit';
import {
  CODEX_MODEL_LOG,
  CodexStream,
  codexLogFilter,
  codexOptions,
  codexRetryOptions,
  customProvider,
  FRESH_THREAD_NOTICE,
} from './codex';
import { runnerEvent } from './session-runner';
import type { TurnRequest } from './types';

const THREAD = '019a22b5-1ed1-7532-b5a6-ced8f1338d28';

describe('CodexStream', () => {
  it('reads the thread ID from thread.started, live lines from items, and the output from the agent message', () => {
    const stream = new CodexStream(null);
    const updates = feed(
      stream,
      transcript('codex-success.jsonl', { SESSION: THREAD, CWD: '/w', TEXT: 'Done:\nnotes updated.' }),
    );
    expect(updates[0]).toEqual({ session: THREAD, live: 'Codex started' });
    // Updates that only tell the model's state (waiting on it, heard from it) carry no line.
    expect(updates.slice(1).flatMap((u) => (u.live === undefined ? [] : [u.live]))).toEqual([
      'thinking: **Checking where I am** I should ask Parley for the context first.',
      '→ parley.context {}',
      '← parley.context completed',
      '$ /bin/bash -lc ls',
      '$ /bin/bash -lc ls → completed (exit 0)',
      'changed update /w/notes.txt',
      'Done: notes updated.',
    ]);
    expect(stream.finish(exited(0), 'codex', false)).toEqual({
      ok: true,
      output: 'Done:\nnotes updated.',
      session: THREAD,
    });
  });

  it('says what to do when Codex cannot log in (turn.failed with a 401)', () => {
    const stream = new CodexStream(null);
    const updates = feed(stream, transcript('codex-login-failed.jsonl', { SESSION: THREAD }));
    expect(updates.map((u) => u.live)).toContain('retrying: the model server refuses the request (401) (2nd try)');
    expect(stream.finish(exited(1), 'codex', false)).toEqual({
      ok: false,
      error:
        'Codex is not logged in here, or its key was refused (“exceeded retry limit, last status: 401 Unauthorized, request id: 9a5793386e39fede-SIN”). Run `codex login` once in a terminal on this computer (or set OPENAI_API_KEY in the role’s environment), then send the message again.',
    });
    expect(stream.session).toBe(THREAD);
  });

  it('reports a process that ended without finishing the turn by its error line', () => {
    const stream = new CodexStream(null);
    const stderr =
      'WARNING: proceeding\nError: unexpected argument --frobnicate found\n\nUsage: codex exec [OPTIONS]\n';
    expect(stream.finish(exited(2, stderr), 'codex', false)).toEqual({
      ok: false,
      error: 'Codex failed: unexpected argument --frobnicate found',
    });
  });

  it('says how to install Codex when there is no codex program', () => {
    const stream = new CodexStream(null);
    stream.line(
      JSON.stringify({ type: 'parley.runner', event: 'spawn_error', code: 'ENOENT', message: 'spawn codex ENOENT' }),
    );
    expect(stream.finish(exited(127), 'codex', false)).toEqual({
      ok: false,
      error:
        'Codex is not installed here: there is no `codex` program on PATH. Install it (`npm install -g @openai/codex`), run `codex login` once, or set the full path of `codex` in the role’s command setting.',
    });
  });
});

describe('Codex’s model log', () => {
  // Lines as Codex 0.171 writes them with RUST_LOG=error,codex_otel.log_only=info (cut short).
  const at = '2026-12-03T06:21:46.541Z  INFO codex_otel.log_only: ';
  const logLines = {
    starts: `${at}event.name="codex.conversation_starts" provider_name=Parley test`,
    prompt: `${at}event.name="codex.user_prompt" prompt_length=6 prompt=[REDACTED]`,
    ok: `${at}event.name="codex.api_request" duration_ms=14 http.response.status_code=200 attempt=0`,
    overloaded: `${at}event.name="codex.api_request" duration_ms=3 http.response.status_code=529 attempt=1`,
    sse: `${at}event.name="codex.sse_event" event.kind=response.output_text.delta duration_ms=500`,
    other: `${at}event.name="codex.turn_ttft" duration_ms=38`,
  };
  const signal = (line: string) => {
    const match = new RegExp(CODEX_MODEL_LOG).exec(line);
    return match && JSON.stringify({ type: 'parley.runner', event: 'signal', text: match[0] });
  };
  const tool = (type: 'item.started' | 'item.completed') =>
    JSON.stringify({ type, item: { id: 'i', type: 'command_execution', command: 'ls', status: 'completed' } });

  it('picks out the lines about the model, and not the rest', () => {
    expect(signal(logLines.other)).toBeNull();
    expect(runnerEvent(signal(logLines.ok)!)).toMatchObject({
      text: 'event.name="codex.api_request" duration_ms=14 http.response.status_code=200',
    });
    expect(runnerEvent(signal(logLines.sse)!)).toMatchObject({ text: 'event.name="codex.sse_event"' });
  });

  it.each([
    ['the prompt is sent', [logLines.starts, logLines.prompt], 'waiting'],
    ['an error status (its retry follows)', [logLines.prompt, logLines.overloaded], undefined],
    ['a response', [logLines.prompt, logLines.ok], 'answered'],
    ['a stream event', [logLines.prompt, logLines.sse], 'answered'],
  ] as const)('reads %s', (_what, lines, expected) => {
    const stream = new CodexStream(null);
    const updates = lines.map((line) => stream.line(signal(line)!));
    expect(updates.at(-1)?.model).toBe(expected);
  });

  it('waits on the model after a tool, once Codex reports its requests; without that log, a tool is an answer', () => {
    const reporting = new CodexStream(null);
    reporting.line(signal(logLines.starts)!);
    expect(reporting.line(tool('item.started'))?.model).toBe('answered');
    expect(reporting.line(tool('item.completed'))?.model).toBe('waiting');
    const quiet = new CodexStream(null);
    expect(quiet.line(tool('item.completed'))?.model).toBe('answered');
  });

  it('keeps the role’s own RUST_LOG', () => {
    expect(codexLogFilter(undefined)).toBe('error,codex_otel.log_only=info');
    expect(codexLogFilter('codex_core=debug')).toBe('codex_core=debug,codex_otel.log_only=info');
  });
});

describe('Codex’s own retry settings', () => {
  it.each([
    ['a custom provider', 'model_provider = "local"\n[model_providers.local]\nname = "x"\n', 'local'],
    ['a quoted table name', 'model_provider = \'my-llm\' # mine\n[model_providers."my-llm"]\n', 'my-llm'],
    ['the built-in provider', 'model = "gpt-5"\n', null],
    ['a provider it does not define', 'model_provider = "openai"\n', null],
    ['model_provider only inside a profile', '[profiles.x]\nmodel_provider = "local"\n[model_providers.local]\n', null],
  ])('finds the provider to tune in %s', (_what, config, expected) => {
    expect(customProvider(config)).toBe(expected);
  });

  it('sets a third of the model timeout per try for the provider config.toml selects', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-codex-retry-'));
    try {
      writeFileSync(path.join(dir, 'config.toml'), 'model_provider = "local"\n[model_providers.local]\nname = "x"\n');
      expect(codexRetryOptions({ CODEX_HOME: dir }, 60)).toEqual([
        '-c',
        'model_providers.local.stream_idle_timeout_ms=20000',
        '-c',
        'model_providers.local.stream_max_retries=2',
      ]);
      expect(codexRetryOptions({ CODEX_HOME: path.join(dir, 'none') }, 60)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('codex adapter', () => {
  let dir: string;
  let fakeCodex: string;
  let t: TestInstallation;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'parley-codex-'));
    fakeCodex = installFake(dir, 'codex', 'fake-codex.mjs');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(async () => {
    await t?.close();
  });

  function agent(extra: Partial<Extract<AgentSettings, { adapter: 'codex' }>> = {}) {
    const state = mkdtempSync(path.join(dir, 'state-'));
    // CODEX_HOME: where the real CLI keeps its state, which the sandbox lets it write.
    const settings: AgentSettings = {
      adapter: 'codex',
      command: fakeCodex,
      env: { FAKE_CLI_DIR: state, CODEX_HOME: state },
      ...extra,
    };
    return { settings, state, runs: () => invocations(state) };
  }
  const overrides = (run: FakeInvocation) => run.overrides as Record<string, unknown>;

  it('answers with the agent message, keeps the thread ID, and passes its flags, prompt and MCP server', async () => {
    t = await openTestInstallation();
    const c = conversations(t);
    const fake = agent({ model: 'gpt-5-codex', sandbox: 'workspace-write', instructions: 'Answer in French.' });
    const { conversation } = await c.open(fake.settings);
    const detail = await c.turn(conversation.id, 'hello there');
    expect(lastMessage(detail)).toBe('echo: hello there');
    const [run] = fake.runs();
    expect(run!.argv[0]).toBe('exec');
    expect(run!.resuming).toBe(false);
    expect(run!.flags).toEqual(['--json', '--skip-git-repo-check', '--model', 'gpt-5-codex']);
    expect(run!.positionals).toEqual(['-']);
    expect(overrides(run!)).toEqual({
      sandbox_mode: 'workspace-write',
      developer_instructions: expect.stringContaining(
        'You act in Parley through the tools of the MCP server "parley"',
      ) as string,
      // Its shell commands find `parley` with the turn's token, and no other secret (FAKE_CLI_DIR is none).
      allow_login_shell: false,
      'shell_environment_policy.ignore_default_excludes': true,
      'shell_environment_policy.exclude': [],
      'mcp_servers.parley.command': path.join(t.installation.dataDir, 'bin', 'parley'),
      'mcp_servers.parley.args': ['mcp'],
      'mcp_servers.parley.env_vars': ['PARLEY_TOKEN', 'PARLEY_API'],
      'mcp_servers.parley.default_tools_approval_mode': 'approve',
      'mcp_servers.parley.required': true,
    });
    // The token reaches the MCP server through the environment, never the command line, and
    // neither do the owner's instructions: they are in the prompt on stdin.
    expect(run!.argv.join(' ')).not.toMatch(/prt_/);
    expect(run!.argv.join(' ')).not.toContain('Answer in French.');
    expect(run!.prompt).toContain('[Instructions from the role’s owner, until they say otherwise]\nAnswer in French.');
    expect(overrides(run!).developer_instructions).toContain('on your shell’s PATH as `parley`');
    expect(run!.prompt).toContain('You are assistant, in your conversation with alice.');
    expect(run!.prompt.trim().endsWith('alice: hello there')).toBe(true);
    expect(detail.conversation.run.session).toMatch(UUID);
  });

  it('gives the owner’s instructions again only when they changed, and keeps secrets from its shell', async () => {
    t = await openTestInstallation();
    const c = conversations(t);
    const fake = agent({ instructions: 'Be brief.' });
    fake.settings.env = { ...fake.settings.env, OPENAI_API_KEY: 'sk-test', GITHUB_TOKEN: 'ghp-test' };
    const { role, conversation } = await c.open(fake.settings);
    await c.turn(conversation.id, 'one');
    await c.turn(conversation.id, 'two');
    await t.owner('roles.update', { id: role.id, agent: { ...fake.settings, instructions: 'Be thorough.' } });
    await c.turn(conversation.id, 'three');
    const prompts = fake.runs().map((run) => run.prompt);
    expect(prompts[0]).toContain('Be brief.');
    expect(prompts[1]).not.toContain('[Instructions from the role’s owner');
    expect(prompts[2]).toContain('[Instructions from the role’s owner, until they say otherwise]\nBe thorough.');
    expect(overrides(fake.runs()[0]!)['shell_environment_policy.exclude']).toEqual(['GITHUB_TOKEN', 'OPENAI_API_KEY']);
  });

  it('resumes its thread on the next turn', async () => {
    t = await openTestInstallation();
    const c = conversations(t);
    const fake = agent();
    const { conversation } = await c.open(fake.settings);
    const first = await c.turn(conversation.id, 'one');
    const thread = first.conversation.run.session;
    const detail = await c.turn(conversation.id, 'two');
    expect(lastMessage(detail)).toBe('echo: two');
    const second = fake.runs()[1]!;
    expect(second.argv.slice(0, 2)).toEqual(['exec', 'resume']);
    expect(second.positionals).toEqual([thread, '-']);
    expect(overrides(second)['mcp_servers.parley.env_vars']).toEqual(['PARLEY_TOKEN', 'PARLEY_API']);
    expect(detail.conversation.run.session).toBe(thread);
  });

  it('ends the whole tree on Stop, and falls back to a fresh thread when the stopped one cannot be resumed', async () => {
    t = await openTestInstallation({ stopGraceMs: 300 });
    const c = conversations(t);
    const fake = agent();
    const { conversation } = await c.open(fake.settings);
    await c.start(conversation.id, 'work forever');
    const [runner, cli, child, shellCommand] = await t.waitFor(() => {
      try {
        const pids = readFileSync(path.join(fake.state, 'pids'), 'utf8').split(' ').map(Number);
        return pids.length === 4 ? pids : undefined;
      } catch {
        return undefined;
      }
    }, 'the fake codex and its child');
    const thread = await t.waitFor(
      async () => (await c.detail(conversation.id)).conversation.run.session,
      'the thread',
    );
    // In the sandbox the turn's process is the sandbox's, which starts the runner.
    if (!t.installation.sandbox.available) expect(runningTurns(t.installation.db)[0]!.pid).toBe(runner);
    expect(await t.owner('conversations.stop', { id: conversation.id })).toEqual({ stopped: true });
    // Its shell command left the group in a session of its own; it is gone too.
    for (const pid of [runner!, cli!, child!, shellCommand!])
      expect(agentAlive(pid, `FAKE_CLI_DIR=${fake.state}`)).toBe(false);
    if (!t.installation.sandbox.available) expect(groupAlive(runner!)).toBe(false);
    const detail = await c.turn(conversation.id, 'are you there?');
    const [, resume, fresh] = fake.runs();
    expect(resume!.positionals).toEqual([thread, '-']);
    expect(fresh!.resuming).toBe(false);
    expect(fresh!.prompt).toContain(FRESH_THREAD_NOTICE);
    expect(lastMessage(detail)).toBe(
      `(Parley could not resume the earlier Codex thread — thread/resume: thread/resume failed: no rollout found for thread id ${thread} (code -32600) — so this answer comes from a fresh thread that does not remember earlier turns.)\n\necho: are you there?`,
    );
    expect(detail.conversation.run.session).toMatch(UUID);
    expect(detail.conversation.run.session).not.toBe(thread);
  });

  it('says in the conversation that Codex is not logged in, and what to do', async () => {
    t = await openTestInstallation();
    const c = conversations(t);
    const { conversation } = await c.open(agent().settings);
    const detail = await c.turn(conversation.id, 'login');
    expect(lastMessage(detail)).toMatch(
      /^The agent failed: Codex is not logged in here, or its key was refused \(“exceeded retry limit, last status: 401 Unauthorized/,
    );
    expect(lastMessage(detail)).toContain('Run `codex login` once in a terminal on this computer');
  });

  it('says in the conversation when the codex program does not exist', async () => {
    t = await openTestInstallation();
    const c = conversations(t);
    const missing = path.join(dir, 'no', 'codex');
    const { conversation } = await c.open({ adapter: 'codex', command: missing });
    const detail = await c.turn(conversation.id, 'hi');
    expect(lastMessage(detail)).toBe(
      `The agent failed: Codex was not found at \`${missing}\` (the role’s command setting). Check the path, or clear the setting to use \`codex\` from PATH.`,
    );
  });

  it('gives Codex a working `parley mcp` through its -c overrides and the environment it inherits', async () => {
    t = await openTestInstallation();
    const c = conversations(t);
    const { conversation } = await c.open(agent().settings, 'helper');
    const detail = await c.turn(conversation.id, 'mcp');
    expect(lastMessage(detail)).toBe('context: run token of helper in a conversation');
  });
});

const codex = realCli('PARLEY_TEST_CODEX', 'codex');
// Codex gets only a minimal environment and a fresh HOME here, so it cannot log in even on a
// machine where it is logged in or OPENAI_API_KEY is set.
const skipReal = codex.path ? null : codex.reason;
if (skipReal) console.info(`Skipping the tests against the real Codex: ${skipReal}`);

describe.skipIf(skipReal !== null)('codex adapter with the real Codex (not logged in)', () => {
  let t: TestInstallation;
  let home: string;
  beforeAll(() => {
    console.info(`Real Codex: ${codex.path} (${codex.reason})`);
    home = mkdtempSync(path.join(os.tmpdir(), 'parley-real-codex-'));
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  afterEach(async () => {
    await t?.close();
  });
  const env = () => ({ PATH: process.env.PATH ?? '', HOME: home });

  it('documents the flags Parley passes in its --help', () => {
    const exec = execFileSync(codex.path!, ['exec', '--help'], { encoding: 'utf8', env: env(), timeout: 60_000 });
    const resume = execFileSync(codex.path!, ['exec', 'resume', '--help'], {
      encoding: 'utf8',
      env: env(),
      timeout: 60_000,
    });
    for (const help of [exec, resume])
      for (const flag of ['--json', '--skip-git-repo-check', '--config', '--model', '--strict-config'])
        expect(help, flag).toContain(flag);
  });

  it('knows every -c key Parley sets (--strict-config rejects unknown ones)', async () => {
    const role: Role = {
      id: 1,
      name: 'assistant',
      description: '',
      agent: { adapter: 'codex', model: 'gpt-5-codex', sandbox: 'workspace-write', instructions: 'Be brief.' },
      createdAt: '',
    };
    // A custom model provider, so that Codex's own retry settings for it are among the keys.
    const codexHome = mkdtempSync(path.join(home, 'strict-'));
    writeFileSync(
      path.join(codexHome, 'config.toml'),
      'model_provider = "local"\n[model_providers.local]\nname = "local"\nbase_url = "http://127.0.0.1:9/v1"\nwire_api = "responses"\n',
    );
    const request = {
      role,
      peers: [],
      trust: 'own',
      env: { PATH: `/nonexistent${path.delimiter}${process.env.PATH}`, OPENAI_API_KEY: 'x', CODEX_HOME: codexHome },
    } as unknown as TurnRequest;
    const options = codexOptions(request);
    expect(options).toContain('model_providers.local.stream_idle_timeout_ms=20000');
    const args = ['exec', '--strict-config', ...options, '-'];
    const child = spawn(codex.path!, args, {
      env: { ...env(), CODEX_HOME: codexHome },
      cwd: home,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.end('hello\n');
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const first = await new Promise<string>((resolve) => {
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('\n')) resolve(stdout.split('\n')[0]!);
      });
      child.once('close', () => resolve(stdout));
    });
    await endGroup(child.pid!, 1000);
    expect(stderr).not.toMatch(/unknown configuration field|error loading config/i);
    // Codex took the config and went on to start its required MCP server (here a `parley` that does not exist).
    if (!/^\{"type":"thread\.started"/.test(first))
      expect(stderr).toContain('required MCP servers failed to initialize: parley');
  }, 60_000);

  it('runs `parley` from its shell commands: the turn’s PATH and token reach them, other secrets do not', async () => {
    // A Responses API on loopback whose model runs one shell command, then answers "done".
    const command = 'parley report "from the shell of Codex"; echo "key: ${PARLEY_TEST_MODEL_KEY:-hidden}"';
    const outputs: string[] = [];
    const api = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        if (!req.url?.endsWith('/responses')) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const send = (event: { type: string } & Record<string, unknown>) =>
          res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
        send({ type: 'response.created', response: { id: 'resp' } });
        const body = JSON.parse(raw) as { input: { type: string; output?: unknown }[]; tools?: { name?: string }[] };
        const result = body.input.find((item) => item.type.endsWith('call_output'));
        if (result) {
          outputs.push(JSON.stringify(result.output));
          send({
            type: 'response.output_item.done',
            item: { type: 'message', role: 'assistant', id: 'msg', content: [{ type: 'output_text', text: 'done' }] },
          });
        } else if ((body.tools ?? []).some((tool) => tool.name === 'exec_command')) {
          const item = { type: 'function_call', id: 'fc', call_id: 'call', name: 'exec_command' };
          send({ type: 'response.output_item.done', item: { ...item, arguments: JSON.stringify({ cmd: command }) } });
        } else {
          // Code mode: the shell is a tool of the `exec` JavaScript tool.
          const input = `const r = await tools.exec_command({ cmd: ${JSON.stringify(command)} }); text(typeof r === 'string' ? r : JSON.stringify(r));`;
          send({
            type: 'response.output_item.done',
            item: { type: 'custom_tool_call', id: 'ct', call_id: 'call', name: 'exec', input },
          });
        }
        send({
          type: 'response.completed',
          response: { id: 'resp', usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } },
        });
        res.end();
      });
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const codexHome = mkdtempSync(path.join(home, 'codex-home-'));
    writeFileSync(
      path.join(codexHome, 'config.toml'),
      [
        'model_provider = "parleytest"',
        'model = "test-model"',
        '[model_providers.parleytest]',
        'name = "parleytest"',
        `base_url = "http://127.0.0.1:${(api.address() as { port: number }).port}/v1"`,
        'wire_api = "responses"',
        'env_key = "PARLEY_TEST_MODEL_KEY"',
      ].join('\n'),
    );
    try {
      t = await openTestInstallation();
      const c = conversations(t);
      const { conversation } = await c.open({
        adapter: 'codex',
        command: codex.path!,
        sandbox: 'danger-full-access',
        env: { HOME: home, CODEX_HOME: codexHome, PARLEY_TEST_MODEL_KEY: 'sk-test-model-key' },
      });
      await t.owner('conversations.send', { id: conversation.id, text: 'run it' });
      const done = await t.waitFor(
        async () => {
          const d = await c.detail(conversation.id);
          return d.turns.at(-1)?.status !== 'running' && d.messages.some((m) => m.body === 'done') ? d : undefined;
        },
        'Codex to answer',
        90_000,
      );
      const bodies = done.messages.filter((m) => m.author.kind === 'role').map((m) => m.body);
      expect(bodies).toEqual(['from the shell of Codex', 'done']);
      expect(outputs.join('\n')).toContain('key: hidden');
    } finally {
      api.closeAllConnections();
      await new Promise<void>((resolve) => api.close(() => resolve()));
    }
  }, 120_000);

  it('runs `parley mcp` with the turn’s token, ends its whole tree on Stop, and falls back when a thread cannot be resumed', async () => {
    t = await openTestInstallation({ stopGraceMs: 1000 });
    const c = conversations(t);
    const { conversation } = await c.open({
      adapter: 'codex',
      command: codex.path!,
      sandbox: 'read-only',
      env: { HOME: home },
    });
    await c.start(conversation.id, 'hello');
    const [turn] = runningTurns(t.installation.db);
    // Codex starts its MCP servers first: `parley mcp`, with the token from env_vars.
    const mcp = await t.waitFor(
      () =>
        processTree(turn!.pid!).find(
          (p) => p.cmdline.some((arg) => arg.endsWith(path.join('dist', 'cli.cjs'))) && p.cmdline.at(-1) === 'mcp',
        ),
      'Codex to start `parley mcp`',
      30_000,
    );
    expect(mcp.environ).toContainEqual(expect.stringMatching(/^PARLEY_TOKEN=prt_/));
    expect(mcp.environ).toContain(`PARLEY_API=${t.installation.roleApiSocket}`);
    const thread = await t.waitFor(
      async () => (await c.detail(conversation.id)).conversation.run.session,
      'the thread',
    );
    expect(thread).toMatch(UUID);
    // It cannot log in here; Stop ends Codex. Codex gives its MCP servers process groups
    // of their own; `parley mcp` ends when Codex is gone and its stdin closes.
    expect(mcp.pgid).not.toBe(turn!.pid);
    await t.owner('conversations.stop', { id: conversation.id });
    expect(groupAlive(turn!.pid!)).toBe(false);
    await t.waitFor(() => !processAlive(mcp.pid), '`parley mcp` to end with Codex', 5_000);
    // A thread that was never saved cannot be resumed: Parley starts a fresh one.
    const run = findRun(t.installation.db, { kind: 'conversation', id: conversation.id })!;
    const lost = '00000000-1111-4222-8333-444444444444';
    setRunSession(t.installation.db, run.id, lost);
    await c.start(conversation.id, 'again');
    const fresh = await t.waitFor(
      async () => {
        const session = (await c.detail(conversation.id)).conversation.run.session;
        return session !== lost && session;
      },
      'a fresh thread',
      30_000,
    );
    expect(fresh).toMatch(UUID);
    expect(fresh).not.toBe(thread);
    const live = t.installation.runs.liveOutput(run.id);
    expect(live.some((line) => line.includes(`no rollout found for thread id ${lost}`))).toBe(true);
    await t.owner('conversations.stop', { id: conversation.id });
  }, 120_000);
});
