// The role API client speaks its one request of HTTP/1.1 itself (client.ts says why);
// here it talks to real `node:http` servers on a Unix socket that answer the ways an
// HTTP server may: by length, chunked, large, not JSON, not at all.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callRoleApi, ConnectError, readHttpAnswer } from './client';
import { RoleApiError } from './errors';

describe('the role API client', () => {
  let dir: string;
  let server: http.Server;
  let socketPath: string;
  const seen: Array<{ url: string; authorization: string; body: string }> = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'parley-client-'));
    socketPath = path.join(dir, 'api.sock');
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        seen.push({ url: req.url ?? '', authorization: req.headers.authorization ?? '', body });
        const { how } = JSON.parse(body) as { how: string };
        const json = (value: unknown) => JSON.stringify(value);
        switch (how) {
          case 'length': {
            const text = json({ ok: true, result: { echo: JSON.parse(body) as unknown } });
            res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
            res.end(text);
            return;
          }
          case 'chunked':
            res.writeHead(200, { 'content-type': 'application/json' });
            res.write('{"ok":true,');
            setImmediate(() => res.end('"result":"in pieces"}'));
            return;
          case 'large':
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(json({ ok: true, result: 'x'.repeat(3_000_000) }));
            return;
          case 'slow':
            setTimeout(() => res.end(json({ ok: true, result: 'late' })), 300);
            return;
          case 'refused':
            res.writeHead(400, { 'content-type': 'application/json' });
            res.end(json({ ok: false, error: { code: 'paused', message: 'the connection is paused' } }));
            return;
          case 'html':
            res.writeHead(502, { 'content-type': 'text/html' });
            res.end('<h1>bad gateway</h1>');
            return;
          case 'hang-up':
            req.socket.destroy();
            return;
          case 'keep-open': {
            // A whole answer, and the connection left open (closed by the client or the test's end).
            const text = json({ ok: true, result: 'whole' });
            req.socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
            return;
          }
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const call = (how: string, extra: object = {}) =>
    callRoleApi({ socketPath, token: 'prt_abc' }, 'report', { how, ...extra });

  it('posts the command with its token and body, and reads an answer by its length', async () => {
    const text = 'naïve ✓ '.repeat(1000);
    await expect(call('length', { text })).resolves.toEqual({ echo: { how: 'length', text } });
    expect(seen.at(-1)).toMatchObject({ url: '/v1/report', authorization: 'Bearer prt_abc' });
  });

  it('reads chunked and large answers, and waits for a slow one', async () => {
    await expect(call('chunked')).resolves.toBe('in pieces');
    await expect(call('large')).resolves.toHaveLength(3_000_000);
    await expect(call('slow')).resolves.toBe('late');
  });

  it('takes an answer that arrived whole at once, without waiting for the server to close', async () => {
    await expect(call('keep-open')).resolves.toBe('whole');
  });

  it('turns a refusal into a RoleApiError with its code and message', async () => {
    const error = await call('refused').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RoleApiError);
    expect(error).toMatchObject({ code: 'paused', message: 'the connection is paused' });
  });

  it('says so when Parley answers with something that is not JSON', async () => {
    await expect(call('html')).rejects.toMatchObject({
      code: 'internal',
      message: 'Parley answered with something that is not JSON (HTTP 502)',
    });
  });

  it('cannot reach a Parley that hangs up or is not there', async () => {
    const hungUp = await call('hang-up').catch((e: unknown) => e);
    expect(hungUp).toBeInstanceOf(ConnectError);
    expect((hungUp as Error).message).toMatch(/^cannot reach Parley at .*api\.sock: /);
    const missing = await callRoleApi({ socketPath: path.join(dir, 'none.sock'), token: 't' }, 'context', {}).catch(
      (e: unknown) => e,
    );
    expect(missing).toBeInstanceOf(ConnectError);
    expect((missing as Error).message).toBe(`cannot reach Parley at ${path.join(dir, 'none.sock')}: ENOENT`);
  });

  it('refuses a token that would break the request, without sending it', async () => {
    const before = seen.length;
    for (const token of ['prt_a\r\nX-Evil: 1', 'two words', '']) {
      await expect(callRoleApi({ socketPath, token }, 'context', {})).rejects.toMatchObject({
        code: 'unauthenticated',
      });
    }
    expect(seen.length).toBe(before);
  });
});

describe('reading an HTTP answer', () => {
  const answer = (text: string, closed = true) => {
    const read = readHttpAnswer(Buffer.from(text, 'latin1'), closed);
    return read && { status: read.status, body: read.body.toString('latin1') };
  };

  it.each([
    ['by length', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}', { status: 200, body: '{}' }],
    ['to the end', 'HTTP/1.1 404 Not Found\r\n\r\nabc', { status: 404, body: 'abc' }],
    [
      'chunked',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n',
      { status: 200, body: 'abcde' },
    ],
    ['HTTP/1.0 without a reason', 'HTTP/1.0 500\r\ncontent-length: 1\r\n\r\nx', { status: 500, body: 'x' }],
  ])('%s', (_name, text, expected) => {
    expect(answer(text)).toEqual(expected);
  });

  it('has a whole answer by its length or its last chunk before the connection closes, and not before', () => {
    expect(answer('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}', false)).toEqual({ status: 200, body: '{}' });
    expect(answer('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{', false)).toBeNull();
    expect(answer('HTTP/1.1 200 OK\r\nContent-Len', false)).toBeNull();
    expect(answer('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n', false)).toBeNull();
    expect(answer('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n', false)).toEqual({
      status: 200,
      body: 'ab',
    });
    // Without a length, only the end of the connection ends the body.
    expect(answer('HTTP/1.1 200 OK\r\n\r\nabc', false)).toBeNull();
  });

  it.each([
    ['no head', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n'],
    ['not HTTP', 'SSH-2.0-OpenSSH\r\n\r\n'],
    ['a short body', 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}'],
    ['a bad length', 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n{}'],
    ['a cut chunk', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab'],
    ['no last chunk', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n'],
  ])('refuses %s once the connection closed', (_name, text) => {
    expect(() => answer(text)).toThrow();
  });
});
