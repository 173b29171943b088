// No single request ends `parley serve`, and none needs to be signed in to try: each
// input here once ended the process. After each, the owner's open socket still gets
// answers, which it would not if the process had died.
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { distPaths } from './paths';
import type { ApiClient } from '../test-support/api-client';
import { connectTcp, rawExchange, RawWebSocket, statusOf, wsFrame } from '../test-support/raw-http';
import { removeDataDir, startServe, type ServeProcess } from '../test-support/serve-process';

describe('parley serve takes any request without ending', () => {
  let server: ServeProcess | undefined;
  let owner: ApiClient;
  let port: number;
  let host: string;
  const dataDirs: string[] = [];

  // One server for all the cases; should a case end it, the next case gets a new one,
  // so each case shows its own outcome.
  beforeEach(async () => {
    if (server && (await answers(server))) return;
    await server?.stop();
    server = await startServe({ name: 'alice' });
    dataDirs.push(server.dataDir);
    owner = await server.connect();
    port = Number(new URL(server.info.ui).port);
    host = `127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await server?.stop();
    for (const dir of dataDirs) removeDataDir(dir);
  });

  async function answers(running: ServeProcess): Promise<boolean> {
    if (!running.alive()) return false;
    try {
      await owner.call('session.whoami', {});
      return true;
    } catch {
      return false;
    }
  }

  async function expectAlive() {
    expect(server!.alive(), `parley serve ended:\n${server!.stderr()}`).toBe(true);
    const { person } = await owner.call('session.whoami', {});
    expect(person.kind).toBe('owner');
  }

  const get = (target: string, headers: Record<string, string> = {}) =>
    rawExchange(
      port,
      `GET ${target} HTTP/1.1\r\n${Object.entries({ Host: host, Connection: 'close', ...headers })
        .map(([k, v]) => `${k}: ${v}`)
        .join('\r\n')}\r\n\r\n`,
    );

  it.each(['/%', '/%E0%A4%A', '/%ZZ', '/a%00b'])('answers GET %s with 400', async (target) => {
    expect(statusOf(await get(target))).toBe(400);
    await expectAlive();
  });

  it('serves only files inside the UI folder, not a sibling whose name starts the same', async () => {
    const sibling = `${distPaths.renderer}-secret-${randomBytes(4).toString('hex')}.txt`;
    writeFileSync(sibling, 'not for the web');
    try {
      const response = await get(`/..%2F${path.basename(sibling)}`);
      expect(response).not.toContain('not for the web');
      expect([400, 403, 404]).toContain(statusOf(response));
    } finally {
      rmSync(sibling, { force: true });
    }
    await expectAlive();
  });

  it('refuses a Host it does not serve (DNS rebinding), for pages and for the API socket', async () => {
    expect(statusOf(await get('/', { Host: 'evil.example' }))).toBe(421);
    expect(statusOf(await get('/', { Host: `evil.example:${port}` }))).toBe(421);
    expect(statusOf(await get('/', { Host: `127.0.0.1:${port + 1}` }))).toBe(421);
    const socket = await connectTcp(port);
    const { status } = await RawWebSocket.open(socket, '/api', `rebound.example:${port}`);
    expect(status).toBe(421);
    // The addresses it does serve still work.
    expect(statusOf(await get('/'))).toBe(200);
    expect(statusOf(await get('/', { Host: `localhost:${port}` }))).toBe(200);
    await expectAlive();
  });

  it.each([
    ['null', 'null'],
    ['unparsable', 'http://['],
    ['another site', 'http://evil.example'],
    ['another port', `http://127.0.0.1:${1}`],
  ])('refuses a WebSocket upgrade with an Origin that is %s with 403', async (_what, origin) => {
    const socket = await connectTcp(port);
    const { status } = await RawWebSocket.open(socket, '/api', host, { Origin: origin });
    expect(status).toBe(403);
    await expectAlive();
  });

  it('accepts an upgrade with its own page as Origin', async () => {
    const socket = await connectTcp(port);
    const { ws, status } = await RawWebSocket.open(socket, '/api', host, { Origin: `http://${host}` });
    expect(status).toBe(101);
    ws!.destroy();
  });

  async function rawApiSocket(): Promise<RawWebSocket> {
    const socket = await connectTcp(port);
    const { ws } = await RawWebSocket.open(socket, '/api', host);
    return ws!;
  }

  it.each([
    ['null', 'null', -32600],
    ['a number', '42', -32600],
    ['an array', '[]', -32600],
    ['a string', '"hello"', -32600],
    ['an object without method', '{"jsonrpc":"2.0","id":1}', -32600],
    ['an id that is an object', '{"jsonrpc":"2.0","id":{},"method":"session.whoami"}', -32600],
    ['not JSON', '{"jsonrpc":', -32700],
    ['an unknown method', '{"jsonrpc":"2.0","id":1,"method":"constructor"}', -32601],
    ['an inherited method name', '{"jsonrpc":"2.0","id":1,"method":"__proto__"}', -32601],
  ])('answers the message %s with a JSON-RPC error and keeps the socket', async (_what, message, code) => {
    const ws = await rawApiSocket();
    ws.send(wsFrame({ opcode: 1, payload: message }));
    const answer = JSON.parse((await ws.nextText())!) as { error: { code: number } };
    expect(answer.error.code).toBe(code);
    // The socket still takes calls.
    const from = ws.frames.length;
    ws.send(wsFrame({ opcode: 1, payload: '{"jsonrpc":"2.0","id":7,"method":"session.whoami","params":{}}' }));
    const next = JSON.parse((await ws.nextText(from))!) as { id: number; error: { data: { code: string } } };
    expect(next).toMatchObject({ id: 7, error: { data: { code: 'unauthenticated' } } });
    ws.destroy();
    await expectAlive();
  });

  it('closes a socket whose message is over the size cap with 1009', async () => {
    const ws = new WebSocket(server!.info.api);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const code = new Promise<number>((resolve) => ws.once('close', (c) => resolve(c)));
    ws.on('error', () => {});
    ws.send('x'.repeat(1024 * 1024 + 1));
    expect(await code).toBe(1009);
    await expectAlive();
  });

  it.each([
    ['a text frame with invalid UTF-8', { opcode: 1, payload: Buffer.from([0x7b, 0xc3, 0x28, 0x7d]) }, 1007],
    ['a frame with a reserved opcode', { opcode: 3, payload: 'x' }, 1002],
    ['a control frame with a reserved opcode', { opcode: 0xb, payload: '' }, 1002],
    ['a frame with reserved bits set', { opcode: 1, payload: '{}', rsv: 4 }, 1002],
    ['an unmasked frame', { opcode: 1, payload: '{}', mask: false }, 1002],
    ['a fragmented ping', { opcode: 9, payload: '', fin: false }, 1002],
    ['a continuation with nothing to continue', { opcode: 0, payload: 'x' }, 1002],
    ['a frame announcing 2^53 bytes', { opcode: 2, payload: '', declaredLength: 2 ** 53 }, 1009],
  ])('closes a socket that sends %s with a protocol close code', async (_what, frame, code) => {
    const ws = await rawApiSocket();
    ws.send(wsFrame(frame));
    expect(await ws.closeCode()).toBe(code);
    await expectAlive();
  });
});
