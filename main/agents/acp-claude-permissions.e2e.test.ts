// The role's `permissions` setting decides with the current ACP Claude agent
// (@agentclientprotocol/claude-agent-acp), which opens every session in its own "auto"
// mode, where its own model call decides what may run. Parley sets the mode itself, so
// the agent's request to run a shell command reaches Parley: a person is asked (`ask`),
// or it is refused (`reject`, the default); Parley's own `send` goes ahead either way.
// The real agent, its model played by the model server on loopback, two installations.
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { AgentSettings } from '../../shared/domain';
import { startStory, type Story } from '../../test-support/agent-story';
import { currentStep, lastInput, offeredTool, parleyScript, type ModelScript } from '../../test-support/model-server';
import { claudeCodeEnv } from '../../test-support/e2e-story';

function installedAgent(variable: string): { path: string | null; reason: string } {
  const file = process.env[variable];
  if (!file)
    return { path: null, reason: `${variable} is not set (the path of \`claude-agent-acp\`; .ci/run installs it)` };
  if (!existsSync(file)) return { path: null, reason: `no \`claude-agent-acp\` at ${variable}=${file}` };
  for (let dir = path.dirname(realpathSync(file)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; version: string };
      return { path: file, reason: `${name}@${version}` };
    }
  }
  return { path: file, reason: 'version unknown' };
}

const agent = installedAgent('PARLEY_TEST_CLAUDE_ACP');
const skip = agent.path ? null : agent.reason;
if (skip) console.info(`Skipping the permission tests with the real claude-agent-acp: ${skip}`);

// Made only when the tests run: a file whose tests are all skipped runs no afterAll.
const dir = skip === null ? mkdtempSync(path.join(os.tmpdir(), 'parley-acp-permissions-')) : '';
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * alice's `make FILE`: run `echo ran > FILE` in the shell, then (whatever came of it) ask
 * bob/researcher through Parley's `send`. Everything else as the scripted agent's rules.
 */
const script: ModelScript = (request) => {
  const step = currentStep(request);
  const lastCall = [...request.messages].reverse().find((m) => m.call)?.call;
  if (step?.kind === 'tool' && lastCall?.name === 'Bash') {
    // Claude Code may defer MCP tools until searched for; the call is by its full name.
    const send = offeredTool(request, 'send') ?? 'mcp__parley__send';
    return { tool: send, input: { to: 'bob/researcher', text: 'did the file get made?' } };
  }
  const input = step?.kind === 'prompt' ? lastInput(step.text) : null;
  const make = input && /^make (\S+)$/.exec(input.body);
  if (make && offeredTool(request, 'Bash'))
    return { tool: 'Bash', input: { command: `echo ran > ${make[1]}`, description: 'Write the file' } };
  return parleyScript(request);
};

describe.skipIf(skip !== null)('the role’s permissions with the real claude-agent-acp', () => {
  let story: Story | undefined;
  afterEach(async () => {
    await story?.close();
    story = undefined;
  });

  const settings =
    (permissions: 'ask' | 'reject' | undefined) =>
    (role: Parameters<Parameters<typeof startStory>[0]>[0]): AgentSettings => ({
      adapter: 'acp',
      command: [agent.path!],
      // claude-agent-acp refuses to start a session as root unless told it is in a sandbox.
      env: { ...claudeCodeEnv(role), CLAUDE_CODE_MAX_RETRIES: '0', IS_SANDBOX: '1', ENABLE_TOOL_SEARCH: 'false' },
      ...(permissions ? { permissions } : {}),
    });

  async function expectSendWentAhead(s: Story) {
    // Parley's own tool was never held by the agent's permission decision: bob got the question.
    await s.bob
      .waitFor(
        async () => {
          const [thread] = await s.bob.owner('threads.list', { peerStarted: true });
          if (!thread) return undefined;
          return (await s.bob.owner('threads.get', { id: thread.id })).texts.find(
            (t) => t.body === 'did the file get made?',
          );
        },
        'bob to get alice’s question',
        60_000,
      )
      .catch(async (error: Error) => {
        throw new Error(`${error.message}\n${await s.diagnose()}`);
      });
  }

  it('refuses the shell command of a role whose permissions are the default “reject”, with nobody asked', async () => {
    console.info(`Real claude-agent-acp: ${agent.path} (${agent.reason})`);
    story = await startStory(settings(undefined), { model: { script } });
    const file = path.join(dir, 'reject.txt');
    await story.say(`make ${file}`);
    await expectSendWentAhead(story);
    expect(existsSync(file), await story.diagnose()).toBe(false);
    expect(await story.alice.owner('approvals.list', {})).toEqual([]);
    // The agent asked, and heard no: the model was told the command did not run.
    const afterBash = story
      .requestsOf(story.aliceKey)
      .find(
        (r) => currentStep(r)?.kind === 'tool' && [...r.messages].reverse().find((m) => m.call)?.call?.name === 'Bash',
      );
    expect(afterBash && currentStep(afterBash)?.text).not.toMatch(/^\s*$/);
  }, 240_000);

  it('asks a person before the shell command of a role whose permissions are “ask”; denied, it does not run', async () => {
    story = await startStory(settings('ask'), { model: { script } });
    const file = path.join(dir, 'ask.txt');
    const s = story;
    await s.alice.owner('conversations.send', { id: s.conversationId, text: `make ${file}` });
    const request = await s.alice.waitFor(
      async () => (await s.alice.owner('approvals.list', {})).find((a) => a.kind === 'permission'),
      'alice to be asked about the shell command',
      120_000,
    );
    expect(JSON.stringify(request)).toContain('echo ran >');
    await s.alice.owner('approvals.decide', { id: request.id, approve: false });
    await expectSendWentAhead(s);
    expect(existsSync(file), await s.diagnose()).toBe(false);
  }, 240_000);
});
