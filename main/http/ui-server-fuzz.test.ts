// Fuzzes the UI and app API port of a real `parley serve`: random bytes, random HTTP
// requests, random WebSocket frames and random JSON-RPC from signed-in and anonymous
// sockets. Bounded in count; then the process must still answer a valid call and its
// database must pass integrity_check.
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { ApiClient } from '../../test-support/api-client';
import { Fuzz, inParallel } from '../../test-support/fuzz';
import { connectTcp, rawExchange, RawWebSocket } from '../../test-support/raw-http';
import { removeDataDir, startServe, type ServeProcess } from '../../test-support/serve-process';

describe('the UI and app API port under fuzzing', () => {
  let server: ServeProcess;
  let owner: ApiClient;
  let port: number;
  let host: string;
  const fuzz = new Fuzz();

  beforeAll(async () => {
    server = await startServe({ name: 'alice' });
    owner = await server.connect();
    await owner.call('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    port = Number(new URL(server.info.ui).port);
    host = `127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  const seed = () => `seed ${fuzz.seed} (PARLEY_FUZZ_SEED=${fuzz.seed} repeats it)`;

  async function expectAnswers() {
    expect(server.alive(), `parley serve ended, ${seed()}:\n${server.stderr()}`).toBe(true);
    expect((await owner.call('session.whoami', {})).person.kind).toBe('owner');
  }

  it('takes 300 blobs of random bytes', async () => {
    await inParallel(300, 20, (i) =>
      rawExchange(port, i % 10 === 0 ? Buffer.alloc(0) : fuzz.bytes(2000), { idleMs: 300 }),
    );
    await expectAnswers();
  }, 120_000);

  it('takes 600 random HTTP requests', async () => {
    await inParallel(600, 20, () => rawExchange(port, fuzz.httpRequest(host), { idleMs: 300 }));
    await expectAnswers();
  }, 120_000);

  it('takes 300 WebSockets sending random frames', async () => {
    await inParallel(300, 20, async () => {
      const { ws } = await RawWebSocket.open(await connectTcp(port), '/api', host);
      if (!ws) return;
      for (let i = 1 + fuzz.int(5); i > 0; i--) ws.send(fuzz.wsFrame());
      // The server answers, closes, or waits for more; none of which may take it down.
      await Promise.race([ws.closeCode(), new Promise((resolve) => setTimeout(resolve, 300))]);
      ws.destroy();
    });
    await expectAnswers();
  }, 120_000);

  it('takes 3,000 random JSON-RPC messages, signed in and not', async () => {
    // Anonymous: raw messages, each answered with an error (a message cut short is not JSON).
    const anonymous = new WebSocket(server.info.api);
    await new Promise((resolve, reject) => anonymous.once('open', resolve).once('error', reject));
    let replies = 0;
    anonymous.on('message', () => replies++);
    for (let i = 0; i < 1500; i++) anonymous.send(fuzz.rpcMessage(i));
    // Signed in as the owner: real methods with params of any shape, each answered.
    const signedIn = await server.connect();
    let answered = 0;
    for (let i = 0; i < 1500; i++) {
      const { method, params } = fuzz.rpcCall();
      await signedIn.raw(method, params).then(
        () => answered++,
        () => answered++,
      );
    }
    expect(answered).toBe(1500);
    await owner.waitFor(() => Promise.resolve(replies === 1500), 30_000, 'every anonymous message answered');
    anonymous.close();
    await expectAnswers();
  }, 180_000);

  it('still serves the page and keeps a sound database', async () => {
    await expectAnswers();
    const page = await rawExchange(port, `GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    expect(page).toMatch(/^HTTP\/1\.1 200/);
    await server.stop();
    const db = new Database(path.join(server.dataDir, 'parley.db'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true }), seed()).toBe('ok');
      expect(db.pragma('foreign_key_check')).toEqual([]);
    } finally {
      db.close();
    }
  }, 60_000);
});
