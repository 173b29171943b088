import { describe, expect, it } from 'vitest';
import { checkPeerAddress, cleanPeerName, nameClash, sameName } from './announced';

describe('a peer’s announced name', () => {
  it.each([
    ['bob', 'bob'],
    ['Bob Smith', 'Bob-Smith'],
    ['  bob  ', 'bob'],
    ['bob/researcher', 'bob-researcher'],
    ['\u202Eecilabb\u202C', 'ecilabb'],
    ['bo\u200Bb', 'bob'],
    ['\u2066bob\u2069\u200E\u061C', 'bob'],
    ['bob\u0000\u0007\u001b[31m', 'bob[31m'],
    ['line\u2028break', 'line-break'],
    ['x'.repeat(80), 'x'.repeat(40)],
    [`${'y'.repeat(39)} tail`, 'y'.repeat(39)],
    ['é'.normalize('NFD'), 'é'],
    ['\u0001\u0002', 'peer'],
    ['///', 'peer'],
  ])('%j becomes %j', (announced, expected) => {
    expect(cleanPeerName(announced)).toBe(expected);
  });

  it('compares names as people read them', () => {
    expect(sameName('Alice', 'alice')).toBe(true);
    expect(sameName('é'.normalize('NFD'), 'é')).toBe(true);
    expect(sameName('alice', 'alice-2')).toBe(false);
  });
});

describe('a peer name that could pass for another (TR39 skeletons)', () => {
  const ours = 'alice';
  const others = ['eve', 'bob-2', 'ʀoy'];
  it.each([
    ['eve', { name: 'eve', ours: false }],
    ['EVE', { name: 'eve', ours: false }],
    ['Eve', { name: 'eve', ours: false }],
    ['\u0435ve', { name: 'eve', ours: false }], // Cyrillic е
    ['ev\u0435', { name: 'eve', ours: false }],
    ['\uff45\uff56\uff45', { name: 'eve', ours: false }], // full-width
    ['ALICE', { name: 'alice', ours: true }],
    ['aIice', { name: 'alice', ours: true }], // capital I for l
    ['\u0430lice', { name: 'alice', ours: true }], // Cyrillic а
    ['bob-2', { name: 'bob-2', ours: false }],
    ['eva', null],
    ['\u00ebve', null], // a diaeresis is a different letter, not a lookalike
    ['bob', null],
    ['mallory', null],
  ])('%j → %j', (candidate, clash) => {
    expect(nameClash(candidate, ours, others)).toEqual(clash);
  });
});

describe('a peer’s announced address', () => {
  it.each([
    ['127.0.0.1:4100', null],
    ['[::1]:4100', null],
    ['parley.example.com:443', null],
    ['host-1.local.:8000', null],
    ['10.0.0.5:65535', null],
    ['0.0.0.0:4100', 'unspecified'],
    ['[::]:4100', 'unspecified'],
    ['[0:0::0]:4100', 'unspecified'],
    ['224.0.0.1:4100', 'multicast'],
    ['239.255.255.250:1900', 'multicast'],
    ['[ff02::1]:4100', 'multicast'],
    ['255.255.255.255:4100', 'broadcast'],
    ['999.1.1.1:4100', 'not an IPv4'],
    ['[nope]:4100', 'not an IPv6'],
    ['evil host:80', 'not a host name'],
    ['-bad.example:80', 'not a host name'],
    ['example.com:0', 'out of range'],
    ['a:99999', 'out of range'],
    ['example.com', 'not host:port'],
    ['::1:4100', 'not host:port'],
    ['', 'not host:port'],
  ])('%j → %s', (address, refusal) => {
    const checked = checkPeerAddress(address);
    if (refusal === null) expect(checked).toEqual({ ok: true, address });
    else expect(checked).toMatchObject({ ok: false, reason: expect.stringContaining(refusal) as unknown });
  });
});
