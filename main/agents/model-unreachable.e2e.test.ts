// Agents that cannot reach their model fail fast and say so, with the real Claude Code
// and the real Codex (each the pinned version and the newest): a model server on a port
// nothing listens on, one that accepts connections and never answers, and one that
// answers every request with an error. The turn shows "retrying: …" while the CLI
// retries, ends failed with a plain sentence within the role's model timeout, and does
// not hold its place among the running turns past it.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSettings } from '../../shared/domain';
import { startModelServer } from '../../test-support/model-server';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import { conversations, lastMessage, realCli } from '../../test-support/cli-test-kit';

type Mode = 'refused' | 'silent' | 'failing';

/** A model server that does not work, in one of three ways; `url` is its Anthropic base URL. */
async function brokenServer(mode: Mode): Promise<{ url: string; close(): Promise<void> }> {
  if (mode === 'refused') {
    // A port that was free a moment ago: nothing listens on it.
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as net.AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    return { url: `http://127.0.0.1:${port}`, close: async () => {} };
  }
  const sockets = new Set<net.Socket>();
  const server =
    mode === 'silent'
      ? net.createServer((socket) => {
          // Accepted, read, never answered.
          sockets.add(socket);
          socket.on('error', () => {});
          socket.resume();
        })
      : http.createServer((req, res) => {
          req.resume();
          // Overloaded, in the Anthropic API's own error shape (Codex reads any 5xx the same way).
          res.writeHead(529, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
        });
  server.on('connection', (socket: net.Socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const clis = [
  { name: 'Claude Code (pinned)', adapter: 'claude-code', cli: realCli('PARLEY_TEST_CLAUDE', 'claude') },
  { name: 'Claude Code (newest)', adapter: 'claude-code', cli: realCli('PARLEY_TEST_CLAUDE_NEWEST', 'claude') },
  { name: 'Codex (pinned)', adapter: 'codex', cli: realCli('PARLEY_TEST_CODEX', 'codex') },
  { name: 'Codex (newest)', adapter: 'codex', cli: realCli('PARLEY_TEST_CODEX_NEWEST', 'codex') },
] as const;
for (const { name, cli } of clis)
  if (!cli.path) console.info(`Skipping the unreachable-model tests with ${name}: ${cli.reason}`);

let home: string;
beforeAll(() => {
  home = mkdtempSync(path.join(os.tmpdir(), 'parley-unreachable-'));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** The role's agent settings for a CLI whose model is at `url`. */
function agentFor(adapter: 'claude-code' | 'codex', command: string, url: string, extra: object): AgentSettings {
  const roleHome = mkdtempSync(path.join(home, 'home-'));
  if (adapter === 'claude-code')
    return {
      adapter,
      command,
      env: {
        HOME: roleHome,
        ANTHROPIC_BASE_URL: url,
        ANTHROPIC_API_KEY: 'sk-ant-test-0000',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      },
      ...extra,
    };
  const codexHome = path.join(roleHome, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    path.join(codexHome, 'config.toml'),
    [
      'model = "gpt-5.4-mini"',
      'model_provider = "parley_test"',
      '[model_providers.parley_test]',
      'name = "Parley test model server"',
      `base_url = ${JSON.stringify(`${url}/v1`)}`,
      'wire_api = "responses"',
      'env_key = "PARLEY_TEST_MODEL_KEY"',
      '',
    ].join('\n'),
  );
  return {
    adapter,
    command,
    env: { HOME: roleHome, CODEX_HOME: codexHome, PARLEY_TEST_MODEL_KEY: 'sk-test-0000' },
    ...extra,
  };
}

for (const { name, adapter, cli } of clis) {
  describe.skipIf(!cli.path)(`${name} whose model cannot be reached`, () => {
    let t: TestInstallation | undefined;
    let server: { url: string; close(): Promise<void> } | undefined;
    afterEach(async () => {
      await t?.close();
      await server?.close();
      t = undefined;
      server = undefined;
    });

    for (const mode of ['refused', 'silent', 'failing', 'key refused'] as const) {
      it(`ends the turn failed, saying why, within the model timeout (${mode})`, async () => {
        console.info(`${name}: ${cli.path} (${cli.reason})`);
        server = mode === 'key refused' ? await refusingServer() : await brokenServer(mode);
        t = await openTestInstallation({ stopGraceMs: 1_000 });
        const c = conversations(t);
        const limitSec = 15;
        const { conversation } = await c.open(agentFor(adapter, cli.path!, server.url, { modelTimeoutSec: limitSec }));
        const started = Date.now();
        await c.start(conversation.id, 'hello');
        // While the CLI retries, the run says so, in what the app shows of the conversation.
        // Codex waits on a silent server's answer without a limit of its own: it has nothing to retry;
        // a refused key is not worth retrying.
        if (!(adapter === 'codex' && mode === 'silent') && mode !== 'key refused') {
          const retried = await t.waitFor(
            async () => (await c.detail(conversation.id)).conversation.run.retrying ?? undefined,
            'a retrying line',
            limitSec * 1000,
          );
          expect(retried).toMatch(/^retrying: the model server (does not answer|is overloaded|fails)/);
        }
        const ended = await t.waitFor(
          async () => {
            const detail = await c.detail(conversation.id);
            return detail.turns.at(-1)?.status !== 'running' ? detail : undefined;
          },
          'the turn to end',
          (limitSec + 30) * 1000,
        );
        const took = (Date.now() - started) / 1000;
        console.info(`${name}, ${mode}: failed after ${took.toFixed(1)} s: ${lastMessage(ended)}`);
        expect(ended.turns.at(-1)?.status).toBe('failed');
        expect(lastMessage(ended)).toMatch(
          mode === 'key refused'
            ? /not logged in here, or its (API )?key was refused/
            : /could not reach its model: the model server/,
        );
        // The timeout and what it takes the CLI to end (a loaded machine adds seconds).
        expect(took).toBeLessThan(limitSec + 15);
      }, 120_000);
    }

    it('does not cut an answer that streams for longer than the model timeout', async () => {
      const model = await startModelServer({ script: () => ({ slow: 'word' }), slowChunkMs: 500, slowLimitMs: 12_000 });
      server = { url: model.url, close: () => model.close() };
      t = await openTestInstallation({ stopGraceMs: 1_000 });
      const c = conversations(t);
      const { conversation } = await c.open(agentFor(adapter, cli.path!, model.url, { modelTimeoutSec: 5 }));
      const ended = await c.turn(conversation.id, 'hello', 90_000);
      expect(ended.turns.at(-1)?.status, lastMessage(ended)).toBe('done');
      expect(lastMessage(ended)).toMatch(/^word \(0\) word \(1\)/);
    }, 120_000);

    it('does not let four stalled turns keep a fifth role’s turn from starting past the model timeout', async () => {
      // A server that accepts and never answers: the wait no CLI bounds by itself.
      server = await brokenServer('silent');
      t = await openTestInstallation({ maxConcurrentTurns: 4, stopGraceMs: 1_000 });
      const c = conversations(t);
      const limitSec = 10;
      const stalled: Awaited<ReturnType<typeof c.open>>[] = [];
      for (let i = 1; i <= 4; i++)
        stalled.push(
          await c.open(agentFor(adapter, cli.path!, server.url, { modelTimeoutSec: limitSec }), `stalled${i}`),
        );
      const other = await c.open({ adapter: 'scripted' }, 'other');
      for (const { conversation } of stalled) await c.start(conversation.id, 'hello');
      await t.waitFor(
        async () => {
          const details = await Promise.all(stalled.map(({ conversation }) => c.detail(conversation.id)));
          return details.every((detail) => detail.turns.at(-1)?.status === 'running') || undefined;
        },
        'the four stalled turns to run',
        30_000,
      );
      const started = Date.now();
      // Every place for a running turn is taken: the fifth role's turn waits, then runs.
      const answered = await c.turn(other.conversation.id, 'are you there?', (limitSec + 40) * 1000);
      const waited = (Date.now() - started) / 1000;
      console.info(`${name}: the fifth role answered after ${waited.toFixed(1)} s`);
      expect(lastMessage(answered)).toBe('echo: are you there?');
      // It waited for a place (a stalled turn's end), and not much past the timeout.
      expect(waited).toBeGreaterThan(limitSec / 2);
      expect(waited).toBeLessThan(limitSec + 20);
      for (const { conversation } of stalled) {
        // Each ends at its own timeout, counted from its own request.
        const failed = await t.waitFor(
          async () => {
            const detail = await c.detail(conversation.id);
            return detail.turns.at(-1)?.status !== 'running' ? detail : undefined;
          },
          'a stalled turn to end',
          20_000,
        );
        expect(failed.turns.at(-1)?.status).toBe('failed');
        expect(lastMessage(failed)).toMatch(/could not reach its model: the model server does not answer/);
      }
    }, 150_000);
  });
}

/** The ACP agents, installed where PARLEY_TEST_CLAUDE_ACP and PARLEY_TEST_CODEX_ACP say. */
const acpAgents = [
  {
    name: 'claude-agent-acp',
    variable: 'PARLEY_TEST_CLAUDE_ACP',
    env: (roleHome: string, url: string): Record<string, string> => ({
      HOME: roleHome,
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_API_KEY: 'sk-ant-wrong-0000',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    }),
  },
  {
    name: 'codex-acp',
    variable: 'PARLEY_TEST_CODEX_ACP',
    env: (roleHome: string, url: string): Record<string, string> =>
      (agentFor('codex', 'codex', url, {}) as { env: Record<string, string> }).env,
  },
] as const;

for (const acp of acpAgents) {
  const command = process.env[acp.variable];
  const skipAcp =
    !command || !existsSync(command) ? `${acp.variable} is not set or not there (${command ?? ''})` : null;
  if (skipAcp) console.info(`Skipping the unreachable-model tests with ${acp.name}: ${skipAcp}`);

  describe.skipIf(skipAcp !== null)(`${acp.name} whose model cannot be reached`, () => {
    for (const mode of ['refused', 'silent', 'key refused'] as const) {
      it(`ends the turn failed, saying why, within the model timeout (${mode})`, async () => {
        // A key the server refuses: Claude Code under the ACP agent retried it for minutes.
        const server = mode === 'key refused' ? await refusingServer() : await brokenServer(mode);
        const t = await openTestInstallation({ stopGraceMs: 1_000 });
        try {
          const c = conversations(t);
          const limitSec = 15;
          const roleHome = mkdtempSync(path.join(home, 'acp-'));
          const { conversation } = await c.open({
            adapter: 'acp',
            command: [command!],
            env: acp.env(roleHome, server.url),
            modelTimeoutSec: limitSec,
          });
          const started = Date.now();
          const ended = await c.turn(conversation.id, 'hello', (limitSec + 60) * 1000);
          const took = (Date.now() - started) / 1000;
          console.info(`${acp.name}, ${mode}: failed after ${took.toFixed(1)} s: ${lastMessage(ended)}`);
          expect(ended.turns.at(-1)?.status).toBe('failed');
          expect(lastMessage(ended)).toMatch(/could not (reach|use) its model|is not logged in here|key was refused/);
          expect(took).toBeLessThan(limitSec + 20);
        } finally {
          await t.close();
          await server.close();
        }
      }, 150_000);
    }
  });
}

/** A model server that refuses every key (401). */
async function refusingServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(401, { 'content-type': 'application/json' });
    // The Anthropic API's shape; the OpenAI API's `error.message` reads the same.
    res.end(JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe.skipIf(!clis[0].cli.path)('the default model timeout', () => {
  it('ends a turn against a server that never answers within 60 s', async () => {
    const server = await brokenServer('silent');
    const t = await openTestInstallation({ stopGraceMs: 1_000 });
    try {
      const c = conversations(t);
      const { conversation } = await c.open(agentFor('claude-code', clis[0].cli.path!, server.url, {}));
      const started = Date.now();
      const ended = await c.turn(conversation.id, 'hello', 120_000);
      const took = (Date.now() - started) / 1000;
      console.info(`Claude Code, silent server, default timeout: failed after ${took.toFixed(1)} s`);
      expect(ended.turns.at(-1)?.status).toBe('failed');
      expect(lastMessage(ended)).toMatch(/could not reach its model: the model server does not answer/);
      expect(took).toBeLessThan(70);
    } finally {
      await t.close();
      await server.close();
    }
  }, 150_000);
});
