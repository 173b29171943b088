// The acp adapter end to end with real ACP agents — Claude through claude-agent-acp (the
// Claude Agent SDK running Claude Code) and Codex through codex-acp — their models played
// by a model server on loopback: the same story as the claude-code and codex adapters.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startStory, type Story } from '../../test-support/agent-story';
import {
  claudeCodeEnv,
  codexEnv,
  expectRefusedKey,
  expectSlowMcpServerWaitedFor,
  expectStory,
} from '../../test-support/e2e-story';

/**
 * claude-agent-acp refuses to open a session as root unless told it runs in a sandbox, and
 * defers MCP tools behind a search the model server does not play.
 */
const claudeAcpEnv = (role: Parameters<typeof claudeCodeEnv>[0]) => ({
  ...claudeCodeEnv(role),
  IS_SANDBOX: '1',
  ENABLE_TOOL_SEARCH: 'false',
});

const agents = [
  { name: 'claude-agent-acp', variable: 'PARLEY_TEST_CLAUDE_ACP', env: claudeAcpEnv, api: 'anthropic' },
  { name: 'codex-acp', variable: 'PARLEY_TEST_CODEX_ACP', env: codexEnv, api: 'openai' },
] as const;

/** An ACP agent installed by `.ci/run` (they have no --version): its path and its package's version. */
function installedAgent(variable: string, name: string): { path: string | null; reason: string } {
  const file = process.env[variable];
  if (!file) return { path: null, reason: `${variable} is not set (the path of \`${name}\`; .ci/run installs it)` };
  if (!existsSync(file)) return { path: null, reason: `no \`${name}\` at ${variable}=${file}` };
  // node_modules/.bin/NAME → the package it belongs to.
  for (let dir = path.dirname(realpathSync(file)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      const { name: pkg, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; version: string };
      return { path: file, reason: `${pkg}@${version}` };
    }
  }
  return { path: file, reason: 'version unknown' };
}

for (const { name, variable, env, api } of agents) {
  const agent = installedAgent(variable, name);
  const skip = agent.path ? null : agent.reason;
  if (skip) console.info(`Skipping the end-to-end tests with the real ${name}: ${skip}`);

  describe.skipIf(skip !== null)(`acp adapter with the real ${name}, end to end`, () => {
    let story: Story | undefined;
    afterEach(async () => {
      await story?.close();
      story = undefined;
    });

    it('asks a peer, reports its answer, stops mid-stream, and continues its session — also after a restart', async () => {
      console.info(`Real ${name}: ${agent.path} (${agent.reason})`);
      story = await startStory((role) => ({ adapter: 'acp', command: [agent.path!], env: env(role) }));
      await expectStory(story, { sendTool: 'mcp__parley__send' });
      expect(story.server.requests.every((request) => request.api === api)).toBe(true);
    }, 300_000);

    it('waits for Parley’s MCP server when it is slow to start', async () => {
      story = await startStory((role) => ({ adapter: 'acp', command: [agent.path!], env: env(role) }));
      await expectSlowMcpServerWaitedFor(story, 'mcp__parley__send');
    }, 120_000);

    it('fails the turn with a message that says the key was refused', async () => {
      // Claude Code retries a refused key ten times (minutes); CLAUDE_CODE_MAX_RETRIES is how a role says not to.
      const retries: Record<string, string> = name === 'claude-agent-acp' ? { CLAUDE_CODE_MAX_RETRIES: '0' } : {};
      await expectRefusedKey(
        (role) => ({ adapter: 'acp', command: [agent.path!], env: { ...env(role), ...retries } }),
        // claude-agent-acp 0.101 answers a refused key with ACP's "authentication required".
        /^The agent failed: the agent \(`.*`\) (could not use its model: the key was refused or it is not logged in \(“.*(Invalid API key|401 Unauthorized).*”\)|is not logged in here \(“Authentication required”\))\./,
      );
    }, 180_000);
  });
}
