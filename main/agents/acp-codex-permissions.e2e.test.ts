// codex-acp with the real agent, its model played by the model server on loopback: its
// shell command runs inside the sandbox Parley sets from the turn's trust (codex-acp
// cannot run any command without a `sandbox_mode` on a machine that lacks bubblewrap),
// and a person's Deny, which codex-acp answers by ending its turn, shows as that
// person's denial, not as a failed agent.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { AgentSettings } from '../../shared/domain';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import {
  currentStep,
  lastInput,
  offeredTool,
  startModelServer,
  type ModelScript,
  type ModelServer,
} from '../../test-support/model-server';
import { conversations, lastMessage } from '../../test-support/cli-test-kit';

const command = process.env.PARLEY_TEST_CODEX_ACP;
const skip =
  !command || !existsSync(command) ? `PARLEY_TEST_CODEX_ACP is not set or not there (${command ?? ''})` : null;
if (skip) console.info(`Skipping the shell and permission tests with the real codex-acp: ${skip}`);

// Made only when the tests run: a file whose tests are all skipped runs no afterAll.
const dir = skip === null ? mkdtempSync(path.join(os.tmpdir(), 'parley-codex-acp-permissions-')) : '';
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `make FILE`: run `echo ran > FILE` in Codex's shell, then say what came of it. */
const script: ModelScript = (request) => {
  const step = currentStep(request);
  if (step?.kind === 'tool') return { text: `done: ${step.text.replace(/\s+/g, ' ').slice(0, 200)}` };
  const input = step?.kind === 'prompt' ? lastInput(step.text) : null;
  const make = input && /^(make|escalate) (\S+)$/.exec(input.body);
  if (make) {
    const shell = `echo ran > ${make[2]}`;
    // `escalate`: outside the sandbox, which Codex asks for before it runs the command.
    const escalate =
      make[1] === 'escalate' ? { sandbox_permissions: 'require_escalated', justification: 'Write the file' } : {};
    if (offeredTool(request, 'exec_command')) return { tool: 'exec_command', input: { cmd: shell, ...escalate } };
    if (offeredTool(request, 'shell')) return { tool: 'shell', input: { command: ['bash', '-c', shell], ...escalate } };
    return { text: `no shell tool among ${request.tools.join(', ')}` };
  }
  return { text: 'hello' };
};

/** A codex-acp role whose model is the server's, with its own CODEX_HOME. */
function codexAcp(server: ModelServer, permissions: 'allow' | 'ask'): AgentSettings {
  const home = mkdtempSync(path.join(dir, 'home-'));
  const codexHome = path.join(home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    path.join(codexHome, 'config.toml'),
    [
      'model = "gpt-5.4-mini"',
      'model_provider = "parley_test"',
      '[model_providers.parley_test]',
      'name = "Parley test model server"',
      `base_url = ${JSON.stringify(server.openaiUrl)}`,
      'wire_api = "responses"',
      'env_key = "PARLEY_TEST_MODEL_KEY"',
      '',
    ].join('\n'),
  );
  return {
    adapter: 'acp',
    command: [command!],
    env: { HOME: home, CODEX_HOME: codexHome, PARLEY_TEST_MODEL_KEY: 'sk-test-0000' },
    permissions,
    cwd: home,
  };
}

describe.skipIf(skip !== null)('the real codex-acp running a shell command', () => {
  let t: TestInstallation | undefined;
  let server: ModelServer | undefined;
  afterEach(async () => {
    await t?.close();
    await server?.close();
    t = undefined;
    server = undefined;
  });

  it('runs it in the sandbox Parley set for the owner’s own turn', async () => {
    server = await startModelServer({ script });
    t = await openTestInstallation({ stopGraceMs: 1_000 });
    const c = conversations(t);
    const settings = codexAcp(server, 'allow');
    const { conversation } = await c.open(settings);
    const file = path.join((settings as { cwd: string }).cwd, 'made.txt');
    const ended = await c.turn(conversation.id, `make ${file}`, 120_000);
    expect(ended.turns.at(-1)?.status, lastMessage(ended)).toBe('done');
    console.info(`codex-acp: ${lastMessage(ended)}`);
    expect(lastMessage(ended)).toMatch(/^done:/);
    expect(existsSync(file) && readFileSync(file, 'utf8').trim(), lastMessage(ended)).toBe('ran');
  }, 180_000);

  it('shows a person’s Deny, which ends codex-acp’s turn, as their denial', async () => {
    server = await startModelServer({ script });
    t = await openTestInstallation({ stopGraceMs: 1_000 });
    const c = conversations(t);
    const settings = codexAcp(server, 'ask');
    const { conversation } = await c.open(settings);
    const file = path.join((settings as { cwd: string }).cwd, 'denied.txt');
    const turn = c.turn(conversation.id, `escalate ${file}`, 120_000);
    const request = await t.waitFor(
      async () => (await t!.owner('approvals.list', {})).find((a) => a.kind === 'permission'),
      'the owner to be asked about the shell command',
      90_000,
    );
    expect(JSON.stringify(request)).toContain('echo ran >');
    await t.owner('approvals.decide', { id: request.id, approve: false });
    const ended = await turn;
    expect(ended.turns.at(-1)?.status, lastMessage(ended)).toBe('done');
    expect(lastMessage(ended)).not.toMatch(/The agent failed/);
    expect(lastMessage(ended)).toMatch(/rejected .*it ends its turn on a refusal/);
    expect(existsSync(file)).toBe(false);
  }, 180_000);
});
