// The claude-code adapter end to end with the real Claude Code, its model played by a
// model server on loopback: two installations, a question to a peer through Parley's
// MCP tools, the answer back in the person's conversation, Stop mid-stream, the session
// resumed on the next turn and after a restart.
import { afterEach, describe, it } from 'vitest';
import { startStory, type Story } from '../../test-support/agent-story';
import { realCli } from '../../test-support/cli-test-kit';
import { claudeCodeEnv, expectSlowMcpServerWaitedFor, expectStory } from '../../test-support/e2e-story';

const claude = realCli('PARLEY_TEST_CLAUDE', 'claude');
const skip = claude.path ? null : claude.reason;
if (skip) console.info(`Skipping the end-to-end tests with the real Claude Code: ${skip}`);

describe.skipIf(skip !== null)('claude-code adapter with the real Claude Code, end to end', () => {
  let story: Story | undefined;
  afterEach(async () => {
    await story?.close();
    story = undefined;
  });

  it('asks a peer, reports its answer, stops mid-stream, and resumes its session — also after a restart', async () => {
    console.info(`Real Claude Code: ${claude.path} (${claude.reason})`);
    story = await startStory((role) => ({ adapter: 'claude-code', command: claude.path!, env: claudeCodeEnv(role) }));
    await expectStory(story, { sendTool: 'mcp__parley__send' });
  }, 300_000);

  it('waits for Parley’s MCP server when it is slow to start', async () => {
    story = await startStory((role) => ({ adapter: 'claude-code', command: claude.path!, env: claudeCodeEnv(role) }));
    await expectSlowMcpServerWaitedFor(story, 'mcp__parley__send');
  }, 120_000);
});
