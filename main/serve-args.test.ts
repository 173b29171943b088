import { describe, expect, it } from 'vitest';
import { dhtOfServe, parseServeArgs, serveWarnings } from './serve-args';

describe('parley serve arguments', () => {
  it('defaults to loopback for the UI and for peers, any free ports, and no advertised address', () => {
    const parsed = parseServeArgs(['--data', '/tmp/x']);
    expect(parsed).toEqual({
      ok: true,
      options: { data: '/tmp/x', 'ui-host': '127.0.0.1', 'peer-host': '127.0.0.1', 'ui-port': 0, 'peer-port': 0 },
    });
  });

  it.each([
    [
      ['--ui-host', '::1', '--peer-host', '[::]', '--advertise', '[2001:db8::7]:4600'],
      { 'ui-host': '::1', 'peer-host': '::', advertise: '[2001:db8::7]:4600' },
    ],
    [
      ['--peer-host', '0.0.0.0', '--advertise', 'parley.example.org:4600'],
      { 'peer-host': '0.0.0.0', advertise: 'parley.example.org:4600' },
    ],
    [
      ['--ui-host', 'localhost', '--ui-port', '4500', '--peer-port', '65535'],
      { 'ui-host': 'localhost', 'ui-port': 4500, 'peer-port': 65535 },
    ],
    [['--name', 'alice'], { name: 'alice' }],
    [['--advertise', 'parley.example.org'], { advertise: 'parley.example.org' }],
  ])('takes %j', (args, expected) => {
    const parsed = parseServeArgs(['--data', '/tmp/x', ...args]);
    expect(parsed.ok && parsed.options).toMatchObject(expected);
  });

  it.each([
    [['--host', '0.0.0.0'], /^--host was replaced by --ui-host \(the UI and app API\) and --peer-host/],
    [['--advertise', '0.0.0.0:4600'], /^--advertise cannot be 0\.0\.0\.0 or ::, which no peer can dial/],
    [['--advertise', '[::]:4600'], /^--advertise cannot be 0\.0\.0\.0 or ::/],
    [['--advertise', '[0:0::0]:4600'], /^--advertise cannot be 0\.0\.0\.0 or ::/],
    [['--advertise', 'host:0'], /^--advertise must be HOST or HOST:PORT/],
    [['--advertise', 'host:99999'], /^--advertise must be HOST or HOST:PORT/],
    [['--advertise', 'bad_name!:4600'], /^--advertise must be HOST or HOST:PORT/],
    [['--ui-host', 'example.com'], /^--ui-host must be an IP address to listen on/],
    [['--peer-host', '300.1.1.1'], /^--peer-host must be an IP address to listen on/],
    [['--ui-port', 'abc'], /^--ui-port must be a port number, 0–65535/],
    [['--ui-port', ''], /^--ui-port must be a port number/],
    [['--peer-port', '70000'], /^--peer-port must be a port number/],
    [['--peer-port', '1e3'], /^--peer-port must be a port number/],
    [['--peer-port=-1'], /^--peer-port must be a port number/],
    [['--name', 'two words'], /^--name must be one word without "\/"/],
    [['--name', 'esc\u001bape'], /^--name must not contain control characters \(found U\+001B at character 4\)/],
    [['--name', 'right\u202eto-left'], /^--name must not contain bidirectional text controls \(found U\+202E/],
    [['--data', ''], /^--data must name a folder/],
    [['--data', '/tmp/a\nb'], /^--data must not contain control characters/],
    [['--bogus'], /Unknown option '--bogus'/],
    [['stray'], /Unexpected argument 'stray'/],
  ])('refuses %j, saying why', (args, message) => {
    const parsed = parseServeArgs(args);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.message).toMatch(message);
  });

  it('names every wrong option at once', () => {
    const parsed = parseServeArgs(['--ui-port', 'x', '--peer-host', 'y']);
    expect(!parsed.ok && parsed.message).toMatch(/--peer-host .*; --ui-port |--ui-port .*; --peer-host /);
  });

  it('warns when peers can reach it everywhere but invitations have no address to carry', () => {
    const everywhere = parseServeArgs(['--peer-host', '0.0.0.0']);
    expect(everywhere.ok && serveWarnings(everywhere.options)).toEqual([
      expect.stringMatching(/--advertise HOST:PORT/),
    ]);
    const advertised = parseServeArgs(['--peer-host', '0.0.0.0', '--advertise', 'a.example:1']);
    expect(advertised.ok && serveWarnings(advertised.options)).toEqual([]);
  });

  it.each([
    [['--dht-bootstrap', '127.0.0.1:49737'], { kind: 'nodes', nodes: [{ host: '127.0.0.1', port: 49737 }] }],
    [
      ['--dht-bootstrap', 'dht.example.org:49737, [::1]:4'],
      {
        kind: 'nodes',
        nodes: [
          { host: 'dht.example.org', port: 49737 },
          { host: '::1', port: 4 },
        ],
      },
    ],
    [['--dht-bootstrap', 'OFF'], { kind: 'off' }],
    [['--no-dht'], { kind: 'off' }],
    [['--no-dht', '--dht-bootstrap', 'off'], { kind: 'off' }],
    [[], undefined],
  ])('chooses the DHT from %j', (args, expected) => {
    const parsed = parseServeArgs(args, {});
    expect(parsed.ok && dhtOfServe(parsed.options)).toEqual(expected ?? undefined);
  });

  it.each([
    [['--dht-bootstrap', 'nowhere'], {}, /--dht-bootstrap must be off or a comma-separated list of HOST:PORT/],
    [['--dht-bootstrap', '127.0.0.1:1,'], {}, /--dht-bootstrap must be off or/],
    [['--dht-bootstrap', '127.0.0.1:70000'], {}, /--dht-bootstrap must be off or/],
    [['--no-dht', '--dht-bootstrap', '127.0.0.1:1'], {}, /--no-dht and --dht-bootstrap .* contradict/],
    [[], { PARLEY_DHT_BOOTSTRAP: 'public' }, /PARLEY_DHT_BOOTSTRAP must be off or a comma-separated list/],
    [['--relay', '--no-dht'], {}, /--relay serves on the DHT, so it needs the DHT/],
    [['--relay', '--dht-bootstrap', 'off'], {}, /--relay serves on the DHT, so it needs the DHT/],
    [
      ['--relay'],
      { PARLEY_DHT_BOOTSTRAP: 'off' },
      /--relay serves on the DHT, which PARLEY_DHT_BOOTSTRAP=off turns off/,
    ],
    [['--relay=yes'], {}, /--relay/],
  ])('refuses %j with %j, saying why', (args, env, message) => {
    const parsed = parseServeArgs(args, env);
    expect(!parsed.ok && parsed.message).toMatch(message);
  });

  it('takes --relay beside a DHT to serve on', () => {
    const parsed = parseServeArgs(['--relay', '--dht-bootstrap', '127.0.0.1:49737'], {});
    expect(parsed.ok && parsed.options.relay).toBe(true);
    expect(
      parseServeArgs([], {}).ok && (parseServeArgs([], {}) as { options: { relay?: boolean } }).options.relay,
    ).toBeFalsy();
  });

  it('leaves the environment alone when a flag decides', () => {
    expect(parseServeArgs(['--no-dht'], { PARLEY_DHT_BOOTSTRAP: 'bad' }).ok).toBe(true);
  });
});
