import { describe, expect, it } from 'vitest';
import { parseRequest, upgradeRefusal } from './ws-transport';

const parse = (text: string, binary = false) => parseRequest(Buffer.from(text), binary);

describe('the app API socket', () => {
  it.each([
    ['null', -32600],
    ['42', -32600],
    ['"x"', -32600],
    ['[]', -32600],
    ['[{"jsonrpc":"2.0","id":1,"method":"session.whoami"}]', -32600],
    ['{}', -32600],
    ['{"jsonrpc":"1.0","id":1,"method":"session.whoami"}', -32600],
    ['{"jsonrpc":"2.0","id":1,"method":7}', -32600],
    ['{"jsonrpc":"2.0","id":{},"method":"session.whoami"}', -32600],
    ['{"jsonrpc":"2.0","id":[1],"method":"session.whoami"}', -32600],
    ['{"jsonrpc":"2.0","id":1,"method":"nope"}', -32601],
    ['{"jsonrpc":"2.0","id":1,"method":"__proto__"}', -32601],
    ['{"jsonrpc":"2.0","id":1,"method":"hasOwnProperty"}', -32601],
    ['{', -32700],
    ['', -32700],
  ])('answers %s with error %i', (text, code) => {
    const parsed = parse(text);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.reply.error.code).toBe(code);
  });

  it('answers a binary message with a parse error, and keeps a request’s id in its error', () => {
    const binary = parseRequest(Buffer.from('{}'), true);
    expect(!binary.ok && binary.reply.error.code).toBe(-32700);
    const unknown = parse('{"jsonrpc":"2.0","id":"a","method":"nope"}');
    expect(!unknown.ok && unknown.reply.id).toBe('a');
  });

  it('takes a request with or without params and id', () => {
    expect(parse('{"jsonrpc":"2.0","id":3,"method":"session.whoami","params":{}}')).toEqual({
      ok: true,
      id: 3,
      method: 'session.whoami',
      params: {},
    });
    expect(parse('{"jsonrpc":"2.0","method":"session.whoami"}')).toMatchObject({ ok: true, id: null });
  });

  const bind = { host: '127.0.0.1', port: 4500 };
  it.each([
    [{ url: '/api', headers: { host: '127.0.0.1:4500' } }, null],
    [{ url: '/api?x=1', headers: { host: 'localhost:4500', origin: 'http://localhost:4500' } }, null],
    [{ url: '/api', headers: { host: '127.0.0.1:4500', origin: 'http://127.0.0.1:4500' } }, null],
    [{ url: '/api', headers: { host: 'evil.example:4500' } }, '421 Misdirected Request'],
    [{ url: '/api', headers: {} }, '421 Misdirected Request'],
    [{ url: '/other', headers: { host: '127.0.0.1:4500' } }, '404 Not Found'],
    [{ url: '//[', headers: { host: '127.0.0.1:4500' } }, '400 Bad Request'],
    [{ url: '/api', headers: { host: '127.0.0.1:4500', origin: 'null' } }, '403 Forbidden'],
    [{ url: '/api', headers: { host: '127.0.0.1:4500', origin: 'http://[' } }, '403 Forbidden'],
    [{ url: '/api', headers: { host: '127.0.0.1:4500', origin: 'http://evil.example' } }, '403 Forbidden'],
    [{ url: '/api', headers: { host: '127.0.0.1:4500', origin: 'https://127.0.0.1:4500' } }, '403 Forbidden'],
    [{ url: '/api', headers: { host: '127.0.0.1:4500', origin: 'http://localhost:4500' } }, '403 Forbidden'],
  ])('an upgrade %j is refused with %s', (req, expected) => expect(upgradeRefusal(req, bind)).toBe(expected));
});
