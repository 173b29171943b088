import { describe, expect, it } from 'vitest';
import { formatHostPort, hostHeaderAllowed, isLoopbackHost, isUnspecifiedHost, parseHostPort } from './hosts';

describe('hosts', () => {
  it.each([
    ['0.0.0.0', true],
    ['::', true],
    ['[::]', true],
    ['0:0:0:0:0:0:0:0', true],
    ['127.0.0.1', false],
    ['::1', false],
    ['example.org', false],
  ])('%s is unspecified: %s', (host, expected) => expect(isUnspecifiedHost(host)).toBe(expected));

  it.each([
    ['127.0.0.1', true],
    ['127.9.9.9', true],
    ['::1', true],
    ['[::1]', true],
    ['0:0:0:0:0:0:0:1', true],
    ['localhost', true],
    ['LOCALHOST', true],
    ['10.0.0.1', false],
    ['::2', false],
    ['localhost.evil.example', false],
  ])('%s is loopback: %s', (host, expected) => expect(isLoopbackHost(host)).toBe(expected));

  it.each([
    ['a.example:4600', { host: 'a.example', port: 4600 }],
    ['10.1.2.3:1', { host: '10.1.2.3', port: 1 }],
    ['[2001:db8::1]:65535', { host: '2001:db8::1', port: 65535 }],
    ['a.example', null],
    ['a.example:0', null],
    ['a.example:65536', null],
    ['2001:db8::1:80', null],
    ['[not-v6]:80', null],
    ['a b:80', null],
    [':80', null],
    ['-bad.example:80', null],
  ])('parses %s as %j', (value, expected) => expect(parseHostPort(value)).toEqual(expected));

  it('formats IPv6 in brackets', () => {
    expect(formatHostPort('::1', 80)).toBe('[::1]:80');
    expect(formatHostPort('[::1]', 80)).toBe('[::1]:80');
    expect(formatHostPort('10.0.0.1', 80)).toBe('10.0.0.1:80');
  });

  // Which Host headers a UI server listening on `bind` answers (DNS rebinding sends another name).
  it.each([
    ['127.0.0.1:4500', { host: '127.0.0.1', port: 4500 }, true],
    ['localhost:4500', { host: '127.0.0.1', port: 4500 }, true],
    ['[::1]:4500', { host: '127.0.0.1', port: 4500 }, true],
    ['127.0.0.1:4501', { host: '127.0.0.1', port: 4500 }, false],
    ['127.0.0.1', { host: '127.0.0.1', port: 4500 }, false],
    ['127.0.0.1', { host: '127.0.0.1', port: 80 }, true],
    ['evil.example:4500', { host: '127.0.0.1', port: 4500 }, false],
    ['localhost.evil.example:4500', { host: '127.0.0.1', port: 4500 }, false],
    ['10.0.0.5:4500', { host: '127.0.0.1', port: 4500 }, false],
    ['10.0.0.5:4500', { host: '10.0.0.5', port: 4500 }, true],
    ['localhost:4500', { host: '10.0.0.5', port: 4500 }, false],
    ['10.0.0.6:4500', { host: '10.0.0.5', port: 4500 }, false],
    ['10.0.0.6:4500', { host: '0.0.0.0', port: 4500 }, true],
    ['[2001:db8::1]:4500', { host: '::', port: 4500 }, true],
    ['[2001:db8:0::1]:4500', { host: '2001:db8::1', port: 4500 }, true],
    ['files.example:4500', { host: '0.0.0.0', port: 4500 }, false],
    ['', { host: '127.0.0.1', port: 4500 }, false],
    [undefined, { host: '127.0.0.1', port: 4500 }, false],
    ['127.0.0.1:4500:4500', { host: '127.0.0.1', port: 4500 }, false],
    ['[::1:4500', { host: '127.0.0.1', port: 4500 }, false],
  ])('Host %j for a server on %j: %s', (header, bind, expected) =>
    expect(hostHeaderAllowed(header, bind)).toBe(expected),
  );
});
