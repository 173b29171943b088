// What an agent reaches on the network, per trust level, with the real sandbox
// (bubblewrap) around a real agent process. The agent is a small program that goes
// through the sandbox's proxy as every agent CLI does (HTTP_PROXY), tries the addresses
// its input names and answers with what each came to. On loopback sit the app API (a
// real UI server), the peer listener, a port the test opened and the "model endpoint".
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { describeWithSandbox } from '../../test-support/system-parts';
import type { AgentSettings, TurnTrust } from '../../shared/domain';
import { startUiServer, type UiServer } from '../http/ui-server';
import { distPaths } from '../paths';
import { openPeer } from '../../test-support/network';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'parley-network-'));
  // "reach HOST:PORT" through the proxy (CONNECT, as HTTPS clients do), "get URL" as plain
  // HTTP through it; "wait NAME" asks the model endpoint's /NAME and waits for its answer.
  writeFileSync(
    path.join(dir, 'reacher.cjs'),
    `
      const http = require('node:http');
      const proxy = new URL(process.env.HTTP_PROXY || 'http://127.0.0.1:9');
      const auth = 'Basic ' + Buffer.from(decodeURIComponent(proxy.username) + ':' + decodeURIComponent(proxy.password)).toString('base64');
      const via = { host: proxy.hostname, port: Number(proxy.port), headers: { 'proxy-authorization': auth } };
      const reach = (target) => new Promise((resolve) => {
        const req = http.request({ ...via, method: 'CONNECT', path: target });
        req.on('connect', (res, socket) => { socket.destroy(); resolve(String(res.statusCode)); });
        req.on('response', (res) => resolve(String(res.statusCode)));
        req.on('error', (error) => resolve(error.code || 'error'));
        req.end();
      });
      const get = (url) => new Promise((resolve) => {
        const req = http.request({ ...via, method: 'GET', path: url, headers: { ...via.headers, host: new URL(url).host } });
        req.on('response', (res) => { let body = ''; res.on('data', (d) => (body += d)); res.on('end', () => resolve(res.statusCode + ' ' + body)); });
        req.on('error', (error) => resolve(error.code || 'error'));
        req.end();
      });
      let input = '';
      process.stdin.on('data', (d) => (input += d));
      process.stdin.on('end', async () => {
        const results = [];
        for (const [, verb, what] of input.matchAll(/(reach|get|wait) (\\S+)/g)) {
          if (verb === 'reach') results.push(what + ': ' + (await reach(what)));
          else if (verb === 'get') results.push(what + ': ' + (await get(what)));
          else await get(process.env.MODEL_BASE_URL + '/' + what);
        }
        process.stdout.write(results.join('; '));
      });
    `,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A loopback HTTP server; `hold` names paths answered only once `count` requests for them wait. */
async function listen(answer: string, hold: { count: number } = { count: 1 }): Promise<number> {
  const waiting = new Map<string, http.ServerResponse[]>();
  const server = http.createServer((req, res) => {
    const held = waiting.get(req.url!) ?? [];
    waiting.set(req.url!, held);
    held.push(res);
    if (held.length >= hold.count) for (const each of held.splice(0)) each.end(answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

async function setUp(trustOfRole: Record<string, TurnTrust>, modelHold = 1) {
  const model = await listen('model says hi', { count: modelHold });
  const other = await listen('another service');
  const bob = await openPeer('bob', {
    // The real sandbox, whatever the suite's PARLEY_SANDBOX says; each role runs at its level.
    sandbox: { mode: 'on' },
    trustOf: (run) => trustOfRole[names.get(run.role_id)!] ?? 'answer',
  });
  cleanups.push(() => bob.close());
  const ui: UiServer = await startUiServer(bob.installation, { host: '127.0.0.1', port: 0, root: distPaths.renderer });
  cleanups.push(() => ui.close(1001, 'test over'));
  const names = new Map<number, string>();
  const agent = (): AgentSettings => ({
    adapter: 'command',
    command: [process.execPath, path.join(dir, 'reacher.cjs')],
    env: { MODEL_BASE_URL: `http://127.0.0.1:${model}/v1` },
  });
  for (const name of Object.keys(trustOfRole)) {
    const role = await bob.owner('roles.create', { name, agent: agent() });
    names.set(role.id, name);
  }
  const peerPort = Number(/:(\d+)$/.exec(bob.installation.peerAddress!)![1]);
  const run = async (roleName: string, text: string) => {
    const role = (await bob.owner('roles.list', {})).find((r) => r.name === roleName)!;
    const conversation = await bob.owner('conversations.open', { roleId: role.id });
    await bob.owner('conversations.send', { id: conversation.id, text });
    return bob.waitFor(
      async () => {
        const detail = await bob.owner('conversations.get', { id: conversation.id });
        const turn = detail.turns.at(-1);
        if (turn?.status === 'failed') throw new Error(`the turn failed: ${turn.reason}`);
        return turn?.status === 'done' ? detail.messages.find((m) => m.author.kind === 'role')?.body : undefined;
      },
      `${roleName}'s answer`,
      60_000,
    );
  };
  return { bob, model, other, api: ui.port, peer: peerPort, run };
}

const answers = (entries: Array<[string, string]>) => entries.map(([what, result]) => `${what}: ${result}`).join('; ');

describeWithSandbox('at level answer, an agent reaches its model endpoint and nothing else on this machine', () => {
  it('is refused the app API, the peer listener and another loopback port, and still answers', async () => {
    const { bob, model, other, api, peer, run } = await setUp({ researcher: 'answer' });
    expect(bob.installation.sandbox.available).toBe(true);
    const tries = [
      `127.0.0.1:${api}`,
      `127.0.0.1:${peer}`,
      `127.0.0.1:${other}`,
      `localhost:${other}`,
      `127.0.0.1:${model}`,
    ];
    const text = [...tries.map((t) => `reach ${t}`), `get http://127.0.0.1:${model}/v1/models`].join(' ');
    expect(await run('researcher', text)).toBe(
      answers([
        [`127.0.0.1:${api}`, '403'],
        [`127.0.0.1:${peer}`, '403'],
        [`127.0.0.1:${other}`, '403'],
        [`localhost:${other}`, '403'],
        [`127.0.0.1:${model}`, '200'],
        [`http://127.0.0.1:${model}/v1/models`, '200 model says hi'],
      ]),
    );
  }, 90_000);
});

describeWithSandbox('every level at once', () => {
  it('gives each turn its own level’s network while turns at other levels run beside it', async () => {
    // The model endpoint answers /one and /two only once all three turns ask: all three are running.
    const { model, other, api, run } = await setUp({ researcher: 'answer', builder: 'work', helper: 'own' }, 3);
    const tries = [`127.0.0.1:${api}`, `127.0.0.1:${other}`, 'no-such-host.invalid:443', `127.0.0.1:${model}`];
    const text = ['wait one', ...tries.map((t) => `reach ${t}`), 'wait two'].join(' ');
    const [researcher, builder, helper] = await Promise.all([
      run('researcher', text),
      run('builder', text),
      run('helper', text),
    ]);
    const refused = (what: string) => [what, '403'] as [string, string];
    // answer: the model endpoint's port, nothing else.
    expect(researcher).toBe(
      answers([
        refused(`127.0.0.1:${api}`),
        refused(`127.0.0.1:${other}`),
        refused('no-such-host.invalid:443'),
        [`127.0.0.1:${model}`, '200'],
      ]),
    );
    // work: beyond this machine (a name is let through, and then has no address), of this machine only the model.
    expect(builder).toBe(
      answers([
        refused(`127.0.0.1:${api}`),
        refused(`127.0.0.1:${other}`),
        ['no-such-host.invalid:443', '502'],
        [`127.0.0.1:${model}`, '200'],
      ]),
    );
    // own: this machine's loopback too, as for its owner.
    expect(helper).toBe(
      answers([
        [`127.0.0.1:${api}`, '200'],
        [`127.0.0.1:${other}`, '200'],
        ['no-such-host.invalid:443', '502'],
        [`127.0.0.1:${model}`, '200'],
      ]),
    );
  }, 120_000);
});
