// The codex adapter end to end with the real Codex, its model played by a model server
// on loopback (a custom model provider speaking the Responses API): two installations, a
// question to a peer through Parley's MCP tools, the answer back in the person's
// conversation, Stop mid-stream, the thread resumed on the next turn and after a restart.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startStory, type Story, type StoryRole } from '../testing/agent-story';
import { realCli } from './cli-test-kit';
import { expectStory } from './e2e-story';

const codex = realCli('PARLEY_TEST_CODEX', 'codex');
const skip = codex.path ? null : codex.reason;
if (skip) console.info(`Skipping the end-to-end tests with the real Codex: ${skip}`);

/**
 * Codex on the model server: a CODEX_HOME whose config.toml makes the model server the
 * model provider (what a person does for a local or company endpoint), and its key.
 */
export function codexEnv({ server, home, key }: StoryRole): Record<string, string> {
  const codexHome = path.join(home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    path.join(codexHome, 'config.toml'),
    [
      'model = "parley-test-model"',
      'model_provider = "parley_test"',
      '[model_providers.parley_test]',
      'name = "Parley test model server"',
      `base_url = ${JSON.stringify(server.openaiUrl)}`,
      'wire_api = "responses"',
      'env_key = "PARLEY_TEST_MODEL_KEY"',
      '',
    ].join('\n'),
  );
  return { HOME: home, CODEX_HOME: codexHome, PARLEY_TEST_MODEL_KEY: key };
}

describe.skipIf(skip !== null)('codex adapter with the real Codex, end to end', () => {
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
});
