// The decisions about where peers reach an installation, as tables.
import { describe, expect, it } from 'vitest';
import {
  invitationAddress,
  isLoopback,
  readStoredSettings,
  settingsProblem,
  splitAddress,
  type PeerSettings,
} from './peer-settings';

const base: PeerSettings = { listenHost: '127.0.0.1', port: 4180, advertise: null };

describe('settingsProblem', () => {
  const cases: Array<[string, Partial<PeerSettings>, keyof PeerSettings | null, RegExp?]> = [
    ['loopback, a port, no advertised address', {}, null],
    ['any free port', { port: 0 }, null],
    ['IPv6 loopback', { listenHost: '::1' }, null],
    ['localhost', { listenHost: 'localhost' }, null],
    ['every network with an advertised host', { listenHost: '0.0.0.0', advertise: 'parley.example.org' }, null],
    ['every network with an advertised host and port', { listenHost: '::', advertise: '[2001:db8::7]:443' }, null],
    ['a hostname to listen on', { listenHost: 'example.org' }, 'listenHost', /IP address/],
    ['an empty listen address', { listenHost: '' }, 'listenHost'],
    ['a port too large', { port: 70000 }, 'port', /1 to 65535/],
    ['a negative port', { port: -1 }, 'port'],
    ['a fractional port', { port: 41.5 }, 'port'],
    ['every network, nothing to advertise', { listenHost: '0.0.0.0' }, 'advertise', /needs an advertised address/],
    ['advertising 0.0.0.0', { advertise: '0.0.0.0:4180' }, 'advertise', /cannot be dialled/],
    ['advertising ::', { advertise: '[::]:4180' }, 'advertise', /cannot be dialled/],
    ['advertising a URL', { advertise: 'wss://example.org:4180' }, 'advertise', /HOST or HOST:PORT/],
    ['advertising with a space', { advertise: 'my host:4180' }, 'advertise'],
    ['advertising port 0', { advertise: 'example.org:0' }, 'advertise', /1 to 65535/],
    ['advertising a port too large', { advertise: 'example.org:99999' }, 'advertise'],
    ['advertising a host with a bad label', { advertise: '-bad-.example.org' }, 'advertise'],
  ];
  for (const [what, change, field, message] of cases) {
    it(`${field ? 'refuses' : 'accepts'} ${what}`, () => {
      const problem = settingsProblem({ ...base, ...change });
      if (field === null) expect(problem).toBeNull();
      else {
        expect(problem?.field).toBe(field);
        if (message) expect(problem?.message).toMatch(message);
      }
    });
  }
});

describe('invitationAddress', () => {
  const cases: Array<[string, Partial<PeerSettings>, number | null, string | null]> = [
    ['the listen address and the bound port', { port: 0 }, 41234, '127.0.0.1:41234'],
    ['an advertised host with the bound port', { advertise: 'parley.example.org' }, 4180, 'parley.example.org:4180'],
    ['an advertised host and port as given', { advertise: '192.0.2.7:443' }, 4180, '192.0.2.7:443'],
    ['IPv6 in brackets', { listenHost: '::1' }, 4180, '[::1]:4180'],
    ['an advertised IPv6 host', { listenHost: '::', advertise: '2001:db8::7' }, 4180, '[2001:db8::7]:4180'],
    ['nothing while not listening', {}, null, null],
    ['nothing for every network without an advertised address', { listenHost: '0.0.0.0' }, 4180, null],
  ];
  for (const [what, change, bound, expected] of cases)
    it(what, () => expect(invitationAddress({ ...base, ...change }, bound)).toBe(expected));

  it('never carries a wildcard, whatever was stored', () => {
    expect(invitationAddress({ ...base, advertise: '0.0.0.0:4180' }, 4180)).toBeNull();
  });
});

describe('addresses', () => {
  it('splits HOST, HOST:PORT and [V6]:PORT, and nothing else', () => {
    expect(splitAddress('example.org')).toEqual({ host: 'example.org', port: null });
    expect(splitAddress('example.org:4180')).toEqual({ host: 'example.org', port: 4180 });
    expect(splitAddress('[::1]:4180')).toEqual({ host: '::1', port: 4180 });
    expect(splitAddress('::1')).toEqual({ host: '::1', port: null });
    expect(splitAddress('[not-v6]:1')).toBeNull();
    expect(splitAddress('a:b:c')).toBeNull();
    expect(splitAddress('host/path:1')).toBeNull();
  });

  it('knows which addresses only this computer can dial', () => {
    for (const host of ['127.0.0.1', '127.4.5.6', 'localhost', '::1', '[::1]'])
      expect(isLoopback(host), host).toBe(true);
    for (const host of ['192.0.2.7', '0.0.0.0', 'example.org', '2001:db8::1'])
      expect(isLoopback(host), host).toBe(false);
  });

  it('reads back only sound stored settings', () => {
    expect(readStoredSettings(base)).toEqual(base);
    expect(readStoredSettings({ ...base, port: 'x' })).toBeNull();
    expect(readStoredSettings({ ...base, extra: 1 })).toBeNull();
    expect(readStoredSettings({ ...base, listenHost: '0.0.0.0' })).toBeNull();
    expect(readStoredSettings(undefined)).toBeNull();
  });
});
