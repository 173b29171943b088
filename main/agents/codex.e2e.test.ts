// The codex adapter end to end with the real Codex, its model played by a model server
// on loopback (a custom model provider speaking the Responses API): two installations, a
// question to a peer through Parley's MCP tools, the answer back in the person's
// conversation, Stop mid-stream, the thread resumed on the next turn and after a restart.
import { afterEach, describe, expect, it } from 'vitest';
import { startStory, type Story } from '../../test-support/agent-story';
import { realCli } from '../../test-support/cli-test-kit';
import { codexEnv, expectSlowMcpServerWaitedFor, expectStory } from '../../test-support/e2e-story';

// The pinned Codex and the newest (.ci/run installs both).
for (const variable of ['PARLEY_TEST_CODEX', 'PARLEY_TEST_CODEX_NEWEST'] as const) {
  const codex = realCli(variable, 'codex');
  const skip = codex.path ? null : codex.reason;
  if (skip) console.info(`Skipping the end-to-end tests with the real Codex (${variable}): ${skip}`);

  describe.skipIf(skip !== null)(`codex adapter with the real Codex (${variable}), end to end`, () => {
    let story: Story | undefined;
    afterEach(async () => {
      await story?.close();
      story = undefined;
    });

    it('asks a peer, reports its answer, stops mid-stream, and resumes its thread — also after a restart', async () => {
      console.info(`Real Codex: ${codex.path} (${codex.reason})`);
      story = await startStory((role) => ({ adapter: 'codex', command: codex.path!, env: codexEnv(role) }));
      await expectStory(story, { sendTool: 'mcp__parley__send' });
      expect(story.server.requests.every((request) => request.api === 'openai')).toBe(true);
    }, 300_000);

    it('waits for Parley’s MCP server when it is slow to start, rather than starting without Parley’s tools', async () => {
      story = await startStory((role) => ({ adapter: 'codex', command: codex.path!, env: codexEnv(role) }));
      await expectSlowMcpServerWaitedFor(story, 'mcp__parley__send');
    }, 120_000);
  });
}
