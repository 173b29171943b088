// What an agent's CLI adds of its own never reaches a peer: between two installations on
// loopback, alice's scripted agent asks bob's researcher, a real Claude agent whose
// model (played by the model server) answers in plain words, and the reply guard sends
// that answer back. claude-agent-acp adds a gateway warning naming the model server's
// address to such an answer; the answer alice receives is the model's words alone.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSettings } from '../../shared/domain';
import type { TestInstallation } from '../../test-support/installation';
import { startModelServer, type ModelServer } from '../../test-support/model-server';
import { openPeer, pair } from '../../test-support/network';
import { realCli } from '../../test-support/cli-test-kit';

const ANSWER = 'The budget is 40k.';

const acp = process.env.PARLEY_TEST_CLAUDE_ACP;
const agents = [
  {
    name: 'claude-agent-acp',
    path: acp && existsSync(acp) ? acp : null,
    reason: `PARLEY_TEST_CLAUDE_ACP is not set or not there (${acp ?? ''})`,
    settings: (command: string, env: Record<string, string>): AgentSettings => ({
      adapter: 'acp',
      command: [command],
      env,
    }),
  },
  ...(['PARLEY_TEST_CLAUDE', 'PARLEY_TEST_CLAUDE_NEWEST'] as const).map((variable) => {
    const cli = realCli(variable, 'claude');
    return {
      name: `Claude Code (${variable})`,
      path: cli.path,
      reason: cli.reason,
      settings: (command: string, env: Record<string, string>): AgentSettings => ({
        adapter: 'claude-code',
        command,
        env,
      }),
    };
  }),
];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'parley-cli-notices-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

for (const agent of agents) {
  if (!agent.path) console.info(`Skipping the CLI-notice test with ${agent.name}: ${agent.reason}`);
  describe.skipIf(!agent.path)(`${agent.name} answering a peer`, () => {
    const open: TestInstallation[] = [];
    let server: ModelServer | undefined;
    afterEach(async () => {
      for (const t of open.splice(0)) await t.close();
      await server?.close();
    });

    it('sends the peer the model’s words, without what the CLI added', async () => {
      server = await startModelServer({ script: () => ({ text: ANSWER }) });
      const alice = await openPeer('alice');
      const bob = await openPeer('bob');
      open.push(alice, bob);
      const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
      const env = {
        HOME: mkdtempSync(path.join(dir, 'home-')),
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: 'sk-ant-test-0000',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      };
      await bob.owner('roles.create', { name: 'researcher', agent: agent.settings(agent.path!, env) });
      await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
      const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: what is the budget?' });
      const answer = await alice.waitFor(
        async () =>
          (await alice.owner('conversations.get', { id: conversation.id })).messages
            .map((m) => m.body)
            .find((body) => body.includes('says:')),
        'the answer from bob',
        120_000,
      );
      expect(answer).toBe(`bob/researcher says: ${ANSWER}`);
      // What went over the wire, as bob's side recorded it.
      const [thread] = await bob.owner('threads.list', { peerStarted: true });
      const sent = (await bob.owner('threads.get', { id: thread!.id })).texts.filter((t) => t.direction === 'out');
      expect(sent.map((t) => t.body)).toEqual([ANSWER]);
      expect(JSON.stringify(sent)).not.toMatch(/Warning|127\.0\.0\.1|gateway/i);
    }, 180_000);
  });
}
