// An agent cannot act as its owner: it cannot read the owner's sign-in token (serve.json),
// the installation's key or its database, so it cannot approve its own held texts or
// change what waits for approval. `parley serve` runs for real; the agent is a real
// process that tries, and reports what it got.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { noSandbox } from '../../test-support/system-parts';
import { projectRoot } from '../paths';
import { removeDataDir, startServe, type ServeProcess } from '../../test-support/serve-process';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'parley-own-agent-'));
  writeFileSync(
    path.join(dir, 'act-as-owner.cjs'),
    `
      const fs = require('node:fs');
      const path = require('node:path');
      const WebSocket = require(${JSON.stringify(path.join(projectRoot, 'node_modules', 'ws'))});
      // The data folder is where the role-API socket is; the agent used to start in DATA/work.
      const data = path.dirname(process.env.PARLEY_API);
      const got = {};
      const read = (what, file) => {
        try { return (got[what] = 'read'), fs.readFileSync(file, 'utf8'); } catch (e) { got[what] = e.code; return null; }
      };
      read('relativeServeJson', '../serve.json');
      const serve = read('serveJson', path.join(data, 'serve.json'));
      read('identityKey', path.join(data, 'identity', 'key.pem'));
      read('database', path.join(data, 'parley.db'));
      const done = () => { process.stdout.write(JSON.stringify(got)); process.exit(0); };
      if (!serve) { got.signIn = 'no token'; done(); }
      const info = JSON.parse(serve);
      const ws = new WebSocket(info.api);
      let id = 0;
      const call = (method, params) => new Promise((resolve) => {
        const mine = ++id;
        ws.on('message', (data) => { const m = JSON.parse(data); if (m.id === mine) resolve(m.error ? m.error.data.code : 'ok'); });
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: mine, method, params }));
      });
      ws.on('error', (e) => { got.signIn = e.code || e.message; done(); });
      ws.on('open', async () => {
        got.signIn = await call('session.signIn', { token: info.token });
        got.setPolicy = await call('connections.setPolicy', { id: 1, outgoing: 'send', incoming: 'run' });
        got.decide = await call('approvals.decide', { id: 1, approve: true });
        done();
      });
    `,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let serve: ServeProcess | null = null;
afterEach(async () => {
  await serve?.stop();
  if (serve) removeDataDir(serve.dataDir);
  serve = null;
});

async function attempt(env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  serve = await startServe({ name: 'mia', env });
  const api = await serve.connect();
  const role = await api.call('roles.create', {
    name: 'assistant',
    agent: { adapter: 'command', command: [process.execPath, path.join(dir, 'act-as-owner.cjs')] },
  });
  const conversation = await api.call('conversations.open', { roleId: role.id });
  await api.call('conversations.send', { id: conversation.id, text: 'approve your own texts' });
  const detail = await api.waitFor(
    async () => {
      const detail = await api.call('conversations.get', { id: conversation.id });
      return detail.turns.at(-1)?.status === 'done' && detail.messages.length === 2 ? detail : undefined;
    },
    30_000,
    'the turn to end',
  );
  api.close();
  return JSON.parse(detail.messages.at(-1)!.body) as Record<string, string>;
}

describe('an agent acting as its owner', () => {
  it('without the sandbox, reads the owner’s token and the key, signs in and reaches the owner’s methods', async () => {
    const got = await attempt({ PARLEY_SANDBOX: 'off' });
    expect(got).toMatchObject({ serveJson: 'read', identityKey: 'read', database: 'read', signIn: 'ok' });
    // Signed in as the owner, the agent's calls get past authorization: only the ids are wrong here.
    expect(got.setPolicy).toBe('not_found');
    expect(got.decide).toBe('not_found');
  }, 60_000);

  it.skipIf(noSandbox('an agent acting as its owner, in the sandbox'))(
    'in the sandbox, reads none of it and cannot sign in, and its turn still ends normally',
    async () => {
      // The real sandbox, whatever the suite's PARLEY_SANDBOX says.
      const got = await attempt({ PARLEY_SANDBOX: 'on' });
      expect(got).toEqual({
        relativeServeJson: 'ENOENT',
        serveJson: 'ENOENT',
        identityKey: 'ENOENT',
        database: 'ENOENT',
        signIn: 'no token',
      });
    },
    60_000,
  );
});
