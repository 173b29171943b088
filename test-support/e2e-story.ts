// The assertions of the end-to-end story (test-support/agent-story.ts), shared by the
// tests of every real agent: claude-code, codex and the ACP agents.
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { AgentSettings } from '../shared/domain';
import type { Story, StoryRole } from './agent-story';
import { openTestInstallation } from './installation';
import { offeredTool, requestText, startModelServer, type ModelRequest } from './model-server';
import { groupAlive, processAlive } from '../main/runs/process-tree';
import { conversations, lastMessage, processTree } from './cli-test-kit';

/** Claude Code on the model server: its key and base URL, a home of its own, no traffic elsewhere. */
export function claudeCodeEnv({ server, home, key }: StoryRole): Record<string, string> {
  return {
    HOME: home,
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: key,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}

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
      // A model Codex knows, so it does not warn about missing model metadata (the server plays any).
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
  return { HOME: home, CODEX_HOME: codexHome, PARLEY_TEST_MODEL_KEY: key };
}

export interface StoryExpectations {
  /** The name under which the agent offers Parley's `send` tool to its model. */
  sendTool: string;
}

const has = (text: string) => (request: ModelRequest) => requestText(request).includes(text);

export async function expectStory(story: Story, expected: StoryExpectations): Promise<void> {
  try {
    await story_(story, expected);
  } catch (error) {
    // What each side saw says more than a timeout.
    const seen = await story.diagnose().catch((e: unknown) => `(could not diagnose: ${String(e)})`);
    (error as Error).message += `\n\n${seen}`;
    throw error;
  }
}

async function story_(story: Story, expected: StoryExpectations): Promise<void> {
  const { server, aliceKey, bobKey } = story;
  const question = 'what is the budget?';

  // 1. A person's message; the agent asks bob's researcher through Parley's MCP `send`.
  const asked = await story.say(`ask bob/researcher: ${question}`);
  expect(asked.turns.at(-1)?.status, lastMessage(asked)).toBe('done');
  expect(lastMessage(asked)).toMatch(/^done \(send\): /);
  // The send went through: an agent conversation with bob's researcher, rooted in alice's conversation.
  const threads = await story.alice.owner('threads.list', { root: { kind: 'conversation', id: story.conversationId } });
  expect(threads.map((t) => `${t.connection.name}/${t.peerRole}`)).toEqual(['bob/researcher']);
  // The turn's own request: an agent may make side requests with the prompt in them (a title) that offer no tools.
  const askRequest = story.requestsOf(aliceKey).find((request) => has(question)(request) && request.tools.length > 0)!;
  expect(askRequest.tools).toContain(expected.sendTool);
  const session = asked.conversation.run.session;
  expect(session).toBeTruthy();

  // 2. bob's researcher answers with `reply`; the answer comes back to alice's assistant,
  // which reports it in her conversation.
  const answer = await story.message((body) => body.includes(' says: '), 'the answer reported to alice');
  expect(answer).toBe(`bob/researcher says: answer: ${question}`);
  // bob's agent got the question as alice's agent's words: inside a fence.
  expect(story.requestsOf(bobKey).some(has(` from alice/assistant\n${question}\npeer-text-`))).toBe(true);

  // 3. Stop while the model streams: the turn ends stopped and the agent's process tree is gone.
  await story.alice.owner('conversations.send', { id: story.conversationId, text: 'sleep' });
  const slow = await server.waitFor(
    (r) => r.key === aliceKey && r.reply !== undefined && 'slow' in r.reply,
    'the slow answer',
  );
  const pid = await story.runningPid();
  const tree = processTree(pid);
  expect(tree.length).toBeGreaterThan(1);
  expect(await story.alice.owner('conversations.stop', { id: story.conversationId })).toEqual({ stopped: true });
  const stopped = await story.detail();
  expect(stopped.turns.at(-1)?.status).toBe('stopped');
  expect(groupAlive(pid)).toBe(false);
  // Helpers in process groups of their own (an MCP server) end with the agent, at once or
  // as soon as they notice it is gone.
  for (const process of tree)
    await story.alice.waitFor(() => !processAlive(process.pid), `${process.cmdline.join(' ')} to end`, 10_000);
  await server.waitFor((r) => r === slow && r.aborted === true, 'the slow answer to be cut off');
  expect(stopped.conversation.run.session).toBe(session);

  // 4. The next turn resumes the same session: its request carries the earlier turns.
  const resumed = await story.say('are you still there?');
  expect(lastMessage(resumed)).toBe('echo: are you still there?');
  const resumeRequest = story.requestsOf(aliceKey).findLast(has('are you still there?'))!;
  expect(requestText(resumeRequest)).toContain(question);
  expect(resumed.conversation.run.session).toBe(session);

  // 5. After a restart of alice's installation, the session still resumes.
  await story.restartAlice();
  const after = await story.say('after the restart');
  expect(lastMessage(after)).toBe('echo: after the restart');
  const afterRequest = story.requestsOf(aliceKey).findLast(has('after the restart'))!;
  expect(requestText(afterRequest)).toContain('are you still there?');
  expect(requestText(afterRequest)).toContain(question);
  expect(after.conversation.run.session).toBe(session);
}

/**
 * A loaded machine: alice's `parley mcp` takes 3 s to start. The agent must wait for it
 * (Codex, for one, leaves out an optional MCP server that is not ready after a short grace).
 */
export async function expectSlowMcpServerWaitedFor(story: Story, sendTool: string): Promise<void> {
  const bin = path.join(story.alice.installation.dataDir, 'bin');
  renameSync(path.join(bin, 'parley'), path.join(bin, 'parley-now'));
  writeFileSync(path.join(bin, 'parley'), `#!/bin/sh\nsleep 3\nexec "${path.join(bin, 'parley-now')}" "$@"\n`);
  chmodSync(path.join(bin, 'parley'), 0o755);
  const detail = await story.say('ask bob/researcher: are you there?');
  const offered = story.requestsOf(story.aliceKey).map((request) => offeredTool(request, 'send'));
  expect(offered, await story.diagnose()).toContain(sendTool);
  expect(lastMessage(detail)).toMatch(/^done \(send\): /);
}

/** A key the model refuses (401): the turn fails with what the agent said, in words that say what to do. */
export async function expectRefusedKey(agentFor: (role: StoryRole) => AgentSettings, says: RegExp): Promise<void> {
  const server = await startModelServer({ refuseKeys: ['sk-refused'] });
  const t = await openTestInstallation();
  const home = path.join(t.installation.dataDir, 'agent-home');
  mkdirSync(home);
  try {
    const c = conversations(t);
    const { conversation } = await c.open(agentFor({ server, home, key: 'sk-refused' }));
    const detail = await c.turn(conversation.id, 'hello');
    expect(detail.turns.at(-1)?.status).toBe('failed');
    expect(lastMessage(detail)).toMatch(says);
    expect(server.requests.length).toBeGreaterThan(0);
    expect(server.requests.every((request) => request.reply !== undefined && 'refused' in request.reply)).toBe(true);
  } finally {
    await t.close();
    await server.close();
  }
}
