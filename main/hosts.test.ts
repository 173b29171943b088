// Where `parley serve` listens, and what invitations carry: the UI and the peer port
// on addresses of their own (--ui-host, --peer-host), invitations carrying --advertise
// or the peer address, never 0.0.0.0; every argument checked with a message that says
// what to pass instead.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../shared/api-contract';
import { decodeInvite, encodeInvite } from './engine/invitation';
import { connectTcp } from '../test-support/raw-http';
import { node, type ServeNode } from '../test-support/serve-network';
import { makeDataDir, removeDataDir, runServeToExit, startServe } from '../test-support/serve-process';

const portOf = (address: string) => Number(address.split(':').at(-1));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function refused(port: number, host: string): Promise<boolean> {
  try {
    (await connectTcp(port, { host })).destroy();
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ECONNREFUSED';
  }
}

describe('hosts', () => {
  const nodes: ServeNode[] = [];
  afterEach(async () => {
    for (const n of nodes.splice(0)) {
      await n.serve.stop();
      removeDataDir(n.serve.dataDir);
    }
  });

  async function serve(name: string, args: string[] = []) {
    const n = await node(await startServe({ name, extraArgs: args }), name);
    nodes.push(n);
    return n;
  }

  it('listens for the UI and for peers on separate addresses', async () => {
    const alice = await serve('alice', ['--ui-host', '127.0.0.2', '--peer-host', '127.0.0.3']);
    const ui = new URL(alice.serve.info.ui);
    expect(ui.hostname).toBe('127.0.0.2');
    expect(alice.serve.info.peer).toMatch(/^wss:\/\/127\.0\.0\.3:\d+$/);
    const peerPort = portOf(alice.serve.info.peer!);
    // Each port answers on its own address only.
    expect(await refused(Number(ui.port), '127.0.0.3')).toBe(true);
    expect(await refused(peerPort, '127.0.0.2')).toBe(true);
    const { code } = await alice.api.call('connections.invite', {});
    expect(decodeInvite(code).address).toBe(`127.0.0.3:${peerPort}`);
  });

  it('carries --advertise in invitations, and a peer pairs through it', async () => {
    const port = await freePort();
    const alice = await serve('alice', [
      '--peer-host',
      '0.0.0.0',
      '--peer-port',
      String(port),
      '--advertise',
      `127.0.0.1:${port}`,
    ]);
    await alice.api.call('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const { code } = await alice.api.call('connections.invite', { roles: ['assistant'] });
    expect(decodeInvite(code).address).toBe(`127.0.0.1:${port}`);
    const bob = await serve('bob');
    const connection = await bob.api.call('connections.accept', { code });
    expect(connection.address).toBe(`127.0.0.1:${port}`);
    expect(connection.online).toBe(true);
  });

  it('listening on every interface without --advertise, refuses to invite and says what to pass', async () => {
    const alice = await serve('alice', ['--peer-host', '0.0.0.0']);
    expect(alice.serve.stderr()).toMatch(/--advertise HOST:PORT/);
    const error = (await alice.api.call('connections.invite', {}).catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('unavailable');
    expect(error.message).toMatch(/every (interface|network).*--advertise HOST:PORT/);
  });

  it('refuses an invitation that carries 0.0.0.0, saying what the inviter must pass', async () => {
    const bob = await serve('bob');
    const { code } = encodeInvite({
      v: 2,
      name: 'mallory',
      address: '0.0.0.0:4600',
      fingerprint: 'a'.repeat(64),
      secret: 'x'.repeat(32),
      expires: new Date(Date.now() + 60_000).toISOString(),
    });
    const error = (await bob.api.call('connections.accept', { code }).catch((e: unknown) => e)) as ApiError;
    expect(error.code).toBe('invalid');
    expect(error.message).toMatch(/0\.0\.0\.0:4600.*--advertise HOST:PORT/);
  });

  // Every refusal is in serve-args.test.ts; these two show the process's side of it.
  it.each([
    [['--host', '0.0.0.0'], /--host was replaced by --ui-host .* and --peer-host/],
    [['--advertise', '0.0.0.0:4600'], /--advertise cannot be 0\.0\.0\.0 or ::/],
  ])('exits with 2 on %j, saying why', async (args, message) => {
    const data = makeDataDir('parley-args-');
    try {
      const result = await runServeToExit(['--data', data, ...args]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).not.toContain('#token=');
    } finally {
      removeDataDir(data);
    }
  });
});
