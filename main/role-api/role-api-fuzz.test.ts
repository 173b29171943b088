// Fuzzes the role API socket of a real `parley serve`: random bytes, random HTTP
// requests, and random bodies for every command with a real role token, a made-up
// token and none. Bounded in count; then a valid call is answered and the database
// passes integrity_check.
import http from 'node:http';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fuzz } from '../../test-support/fuzz';
import { rawExchange } from '../../test-support/raw-http';
import { removeDataDir, startServe, type ServeProcess } from '../../test-support/serve-process';
import { callRoleApi } from './client';
import { roleApiRequests } from './protocol';

function post(socketPath: string, target: string, headers: Record<string, string>, body: Buffer | string) {
  return new Promise<number | null>((resolve) => {
    const req = http.request({ socketPath, path: target, method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? null));
      res.on('error', () => resolve(null));
    });
    req.on('error', () => resolve(null));
    req.end(body);
  });
}

describe('the role API socket under fuzzing', () => {
  let server: ServeProcess;
  let roleToken: string;
  const fuzz = new Fuzz();
  const seed = () => `seed ${fuzz.seed} (PARLEY_FUZZ_SEED=${fuzz.seed} repeats it)`;

  beforeAll(async () => {
    server = await startServe({ name: 'alice' });
    const owner = await server.connect();
    const role = await owner.call('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    roleToken = (await owner.call('roles.token', { id: role.id })).token;
  });

  afterAll(async () => {
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  async function expectAnswers() {
    expect(server.alive(), `parley serve ended, ${seed()}:\n${server.stderr()}`).toBe(true);
    const context = await callRoleApi<{ token: string }>(
      { socketPath: server.info.roleApi, token: roleToken },
      'context',
      {},
    );
    expect(context.token).toBe('role');
  }

  it('takes 300 blobs of random bytes and 500 random HTTP requests', async () => {
    const socketPath = server.info.roleApi;
    const inputs = [
      ...Array.from({ length: 300 }, () => fuzz.bytes(2000)),
      ...Array.from({ length: 500 }, () => fuzz.httpRequest('localhost')),
    ];
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        for (let input = inputs.pop(); input; input = inputs.pop())
          await rawExchange(0, input, { socketPath, idleMs: 200 });
      }),
    );
    await expectAnswers();
  }, 180_000);

  it('answers 2,000 random bodies for every command with an error or a result, whatever the token', async () => {
    const commands = Object.keys(roleApiRequests);
    const statuses = new Set<number | null>();
    for (let i = 0; i < 2000; i++) {
      const token = fuzz.pick([roleToken, roleToken, 'prt_made-up', '', Buffer.from(fuzz.text(20)).toString('base64')]);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (token) headers.authorization = fuzz.chance(0.9) ? `Bearer ${token}` : token;
      const body = fuzz.chance(0.8) ? JSON.stringify(fuzz.junk()) : fuzz.bytes(300);
      const target = fuzz.chance(0.9)
        ? `/v1/${fuzz.pick(commands)}`
        : `/${[...fuzz.bytes(12)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')}`;
      statuses.add(await post(server.info.roleApi, target, headers, body));
    }
    // Every request got an HTTP answer (nothing hung up on it).
    expect(statuses.has(null), seed()).toBe(false);
    await expectAnswers();
  }, 180_000);

  it('refuses a body over the cap with an answer that says so', async () => {
    const status = await post(
      server.info.roleApi,
      '/v1/report',
      { authorization: `Bearer ${roleToken}`, 'content-type': 'application/json' },
      JSON.stringify({ text: 'x'.repeat(600 * 1024) }),
    );
    expect(status).toBe(400);
    await expectAnswers();
  });

  it('keeps a sound database', async () => {
    await expectAnswers();
    await server.stop();
    const db = new Database(path.join(server.dataDir, 'parley.db'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true }), seed()).toBe('ok');
    } finally {
      db.close();
    }
  });
});
