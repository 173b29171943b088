import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../paths';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import { probeModels } from './first-run';

let root: string;
let empty: string;
/** A loopback address where nothing listens. */
let closedUrl: string;

/** A folder holding fake executables with these names. */
function binWith(...names: string[]): string {
  const dir = mkdtempSync(path.join(root, 'bin-'));
  for (const name of names) {
    writeFileSync(path.join(dir, name), '#!/bin/sh\nexit 0\n');
    chmodSync(path.join(dir, name), 0o755);
  }
  return dir;
}

/** An OpenAI-compatible server that lists these models. */
async function modelServer(models: string[]): Promise<{ url: string; close(): Promise<void>; hits: string[] }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    if (req.url !== '/v1/models') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: models.map((id) => ({ id, object: 'model' })) }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  return { url, hits, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'parley-first-run-'));
  empty = path.join(root, 'empty');
  mkdirSync(empty);
  const server = await modelServer([]);
  closedUrl = server.url;
  await server.close();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('first run', () => {
  let t: TestInstallation | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const roles = () => t!.owner('roles.list', {});

  it('makes an `assistant` on Claude Code when `claude` is on PATH', async () => {
    const bin = binWith('claude', 'codex');
    t = await openTestInstallation({ defaultRole: { path: `${empty}:${bin}`, probeUrl: closedUrl } });
    expect(await roles()).toMatchObject([{ name: 'assistant', agent: { adapter: 'claude-code' } }]);
    expect(t.installation.firstRun).toEqual({
      role: 'assistant',
      adapter: 'claude-code',
      found: `found claude at ${bin}/claude`,
      message: `Default role "assistant" uses claude-code (found claude at ${bin}/claude). Change it in Settings → Roles.`,
    });
    // What was found is a note for the checklist: the description is what peers read.
    expect((await roles())[0]!.description).toBe('');
    expect(await t.owner('firstRun.get', {})).toMatchObject({
      role: { name: 'assistant', description: '' },
      detected: { adapter: 'claude-code', found: `found claude at ${bin}/claude` },
    });
  });

  it('makes it on Codex when only `codex` is on PATH', async () => {
    t = await openTestInstallation({ defaultRole: { path: binWith('codex'), probeUrl: closedUrl } });
    expect(await roles()).toMatchObject([{ name: 'assistant', agent: { adapter: 'codex' } }]);
  });

  it('makes it on an ACP agent when there is no claude or codex but one of the known ACP agents is on PATH', async () => {
    const bin = binWith('gemini', 'goose');
    t = await openTestInstallation({ defaultRole: { path: bin, probeUrl: closedUrl } });
    expect(await roles()).toMatchObject([
      { name: 'assistant', agent: { adapter: 'acp', command: ['gemini', '--experimental-acp'] } },
    ]);
    expect(t.installation.firstRun?.found).toBe(
      `found gemini at ${bin}/gemini, an agent that speaks the Agent Client Protocol`,
    );
    await t.close();
    t = await openTestInstallation({ defaultRole: { path: binWith('goose', 'codex-acp'), probeUrl: closedUrl } });
    expect((await roles())[0]!.agent).toEqual({ adapter: 'acp', command: ['codex-acp'] });
  });

  it('makes it on a local OpenAI-compatible server when there is no CLI', async () => {
    const server = await modelServer(['llama3.2:latest', 'qwen3']);
    try {
      t = await openTestInstallation({ defaultRole: { path: empty, probeUrl: server.url, probeTimeoutMs: 15_000 } });
      expect(await roles()).toMatchObject([
        { name: 'assistant', agent: { adapter: 'openai-compatible', baseUrl: server.url, model: 'llama3.2:latest' } },
      ]);
      expect(t.installation.firstRun?.message).toBe(
        `Default role "assistant" uses openai-compatible (found an OpenAI-compatible server at ${server.url} with the model llama3.2:latest). Change it in Settings → Roles.`,
      );
      expect(server.hits).toEqual(['GET /v1/models']);
    } finally {
      await server.close();
    }
  });

  it('falls back to the scripted agent when nothing is there, and that role works', async () => {
    t = await openTestInstallation({ defaultRole: { path: empty, probeUrl: closedUrl } });
    const [role] = await roles();
    expect(role).toMatchObject({ name: 'assistant', agent: { adapter: 'scripted' } });
    expect(t.installation.firstRun?.message).toBe(
      `Default role "assistant" uses scripted (no claude, codex or ACP agent (claude-agent-acp, codex-acp, gemini, goose) on PATH, no OpenAI-compatible server at ${closedUrl}). Change it in Settings → Roles.`,
    );
    const conversation = await t.owner('conversations.open', { roleId: role!.id });
    await t.owner('conversations.send', { id: conversation.id, text: 'hello' });
    const reply = await t.waitFor(async () => {
      const messages = (await t!.owner('conversations.get', { id: conversation.id })).messages;
      return messages.find((m) => m.author.kind === 'role')?.body;
    }, 'the reply');
    expect(reply).toBe('echo: hello');
  });

  it('does not count a server without models', async () => {
    const server = await modelServer([]);
    try {
      t = await openTestInstallation({ defaultRole: { path: empty, probeUrl: server.url, probeTimeoutMs: 15_000 } });
      expect(await roles()).toMatchObject([{ agent: { adapter: 'scripted' } }]);
      expect(t.installation.firstRun?.found).toContain('but it has no models');
    } finally {
      await server.close();
    }
  });

  it('happens on the first run only', async () => {
    const dataDir = mkdtempSync(path.join(root, 'data-'));
    const defaultRole = { path: empty, probeUrl: closedUrl };
    t = await openTestInstallation({ dataDir, defaultRole });
    const [role] = await roles();
    await t.owner('roles.remove', { id: role!.id });
    await t.close();
    t = await openTestInstallation({ dataDir, defaultRole });
    expect(await roles()).toEqual([]);
    expect(t.installation.firstRun).toBeNull();
  });

  it('is skipped with defaultRole: false', async () => {
    t = await openTestInstallation({ defaultRole: false });
    expect(await roles()).toEqual([]);
    expect(t.installation.firstRun).toBeNull();
    expect(await t.owner('firstRun.get', {})).toEqual({
      offered: false,
      dismissed: false,
      role: null,
      detected: null,
      steps: { agent: false, connect: false, ask: false },
    });
  });

  it('never probes beyond this machine', async () => {
    // A documentation address (TEST-NET-1): were it dialled, this would hang until the timeout.
    const started = Date.now();
    expect(await probeModels('http://192.0.2.1:11434/v1', 10_000)).toBeNull();
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('is announced by `parley serve`', async () => {
    const bin = binWith('claude');
    const dataDir = mkdtempSync(path.join(root, 'serve-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${bin}${path.delimiter}${process.env.PATH}`,
      PARLEY_LOG: 'silent',
    };
    delete env.PARLEY_DEFAULT_ROLE;
    const child = spawn(
      process.execPath,
      [path.join(projectRoot, 'bin', 'parley.js'), 'serve', '--data', dataDir, '--name', 'first', '--peer-port', '0'],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      let stdout = '';
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (data: string) => (stderr += data));
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (data: string) => {
          stdout += data;
          const match = /^Default role .*$/m.exec(stdout);
          if (match) resolve(match[0]);
        });
        child.once('exit', (code) => reject(new Error(`parley serve exited with ${code}: ${stderr}`)));
      });
      expect(line).toBe(
        `Default role "assistant" uses claude-code (found claude at ${bin}/claude). Change it in Settings → Roles.`,
      );
    } finally {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    }
  });
});
