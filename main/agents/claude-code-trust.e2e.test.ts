// Claude Code's own mode follows the trust of the peer its run works for, with the real
// Claude Code against the model server on loopback and two installations: at `answer`
// (a new connection's level) the shell command a peer's text leads to does not run and
// nobody is asked; at `work` it waits for a person, and runs once they approve.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startStory, type Story } from '../../test-support/agent-story';
import { currentStep, lastInput, offeredTool, parleyScript, type ModelScript } from '../../test-support/model-server';
import { realCli } from '../../test-support/cli-test-kit';
import { claudeCodeEnv } from '../../test-support/e2e-story';

const claude = realCli('PARLEY_TEST_CLAUDE', 'claude');
const skip = claude.path ? null : claude.reason;
if (skip) console.info(`Skipping the trust tests with the real Claude Code: ${skip}`);

// Made only when the tests run: a file whose tests are all skipped runs no afterAll.
const dir = skip === null ? mkdtempSync(path.join(os.tmpdir(), 'parley-claude-trust-')) : '';
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A peer's `make FILE` → `echo ran > FILE` in the shell; everything else as the scripted agent's rules. */
const script: ModelScript = (request) => {
  const step = currentStep(request);
  const input = step?.kind === 'prompt' ? lastInput(step.text) : null;
  const make = input && input.from.includes('/') && /^make (\S+)$/.exec(input.body);
  if (make && offeredTool(request, 'Bash'))
    return { tool: 'Bash', input: { command: `echo ran > ${make[1]}`, description: 'Write the file' } };
  return parleyScript(request);
};

describe.skipIf(skip !== null)('Claude Code’s mode by the peer’s trust', () => {
  let story: Story | undefined;
  afterEach(async () => {
    await story?.close();
    story = undefined;
  });

  it('refuses the shell at “answer” with nobody asked, and asks a person at “work”', async () => {
    console.info(`Real Claude Code: ${claude.path} (${claude.reason})`);
    story = await startStory((role) => ({ adapter: 'claude-code', command: claude.path!, env: claudeCodeEnv(role) }), {
      model: { script },
    });
    const s = story;
    const bobsTurnsEnded = (count: number) =>
      s.bob.waitFor(
        async () => {
          const [thread] = await s.bob.owner('threads.list', { peerStarted: true });
          if (!thread) return undefined;
          const detail = await s.bob.owner('threads.get', { id: thread.id });
          return detail.turns.filter((turn) => turn.status !== 'running').length >= count ? detail : undefined;
        },
        `bob’s ${count} turns to end`,
        120_000,
      );

    const refused = path.join(dir, 'answer.txt');
    await s.alice.owner('conversations.send', { id: s.conversationId, text: `ask bob/researcher: make ${refused}` });
    const first = await bobsTurnsEnded(1);
    expect(existsSync(refused), await s.diagnose()).toBe(false);
    expect(await s.bob.owner('approvals.list', {})).toEqual([]);
    expect(first.turns.at(-1)?.status).toBe('done');

    const [connection] = await s.bob.owner('connections.list', {});
    await s.bob.owner('connections.setTrust', { id: connection!.id, level: 'work' });
    const allowed = path.join(dir, 'work.txt');
    await s.alice.owner('conversations.send', { id: s.conversationId, text: `ask bob/researcher: make ${allowed}` });
    const request = await s.bob.waitFor(
      async () => (await s.bob.owner('approvals.list', {})).find((a) => a.kind === 'permission'),
      'bob to be asked about the shell command',
      120_000,
    );
    expect(JSON.stringify(request)).toContain(`echo ran > ${allowed}`);
    expect(existsSync(allowed)).toBe(false);
    await s.bob.owner('approvals.decide', { id: request.id, approve: true });
    await bobsTurnsEnded(2);
    expect(existsSync(allowed), await s.diagnose()).toBe(true);
  }, 300_000);
});
