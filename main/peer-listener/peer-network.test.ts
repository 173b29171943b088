// Where peers reach an installation, with real installations, real listeners and a
// real peer on loopback: the desktop app's remembered settings, changing them while a
// peer is connected, what is refused and what is kept when a change cannot be had.
import net from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/api-contract';
import { makeDataDir, removeDataDir } from '../../test-support/data-folder';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';

const open: TestInstallation[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const installation of open.splice(0)) await installation.close();
});
afterAll(() => {
  for (const dir of dirs) removeDataDir(dir);
});

function dataDir(): string {
  const dir = makeDataDir('parley-network-');
  dirs.push(dir);
  return dir;
}

async function desktop(dir: string, name = 'alice'): Promise<TestInstallation> {
  const installation = await openTestInstallation({
    name,
    dataDir: dir,
    peers: { kind: 'remembered' },
    reconnect: { minMs: 50, maxMs: 500 },
  });
  open.push(installation);
  return installation;
}

async function peer(name: string): Promise<TestInstallation> {
  const installation = await openPeer(name);
  open.push(installation);
  return installation;
}

/** A port some other program holds for as long as the test runs. */
async function occupiedPort(): Promise<{ port: number; release: () => Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { port, release: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const { port, release } = await occupiedPort();
  await release();
  return port;
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

const portOf = (address: string | null) => Number(address!.slice(address!.lastIndexOf(':') + 1));

describe('the desktop app’s peer address', () => {
  it('picks a port on the first start, on this computer only, and keeps it across restarts', async () => {
    const dir = dataDir();
    const first = await desktop(dir);
    const status = await first.owner('network.get', {});
    expect(status).toMatchObject({ configuredBy: 'settings', listenHost: '127.0.0.1', advertise: null });
    expect(status.listening).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(status.port).toBe(portOf(status.listening));
    expect(status.invitationAddress).toBe(status.listening);
    expect(status.thisComputerOnly).toBe(true);
    // It checks by itself that it answers there.
    const checked = await first.waitFor(async () => (await first.owner('network.get', {})).check, 'the first check');
    expect(checked).toMatchObject({ address: status.listening, reachable: true });
    await first.close();
    open.splice(open.indexOf(first), 1);

    const again = await desktop(dir);
    expect((await again.owner('network.get', {})).listening).toBe(status.listening);
  });

  it('still starts when its remembered port is taken, says why, and invites nobody until it is changed', async () => {
    const dir = dataDir();
    const first = await desktop(dir);
    const port = (await first.owner('network.get', {})).port;
    await first.close();
    open.splice(open.indexOf(first), 1);
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    try {
      const second = await desktop(dir);
      const status = await second.owner('network.get', {});
      expect(status.listening).toBeNull();
      expect(status.invitationAddress).toBeNull();
      expect(status.problem).toMatch(new RegExp(`port ${port} is in use by another program`));
      const refused = await rejection(second.owner('connections.invite', { roles: [] }));
      expect(refused.code).toBe('unavailable');
      expect(refused.message).toMatch(/in use/);
      // A new port, and it listens again.
      const moved = await second.owner('network.update', { port: 0 });
      expect(moved.listening).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(moved.problem).toBeNull();
      expect((await second.owner('connections.invite', { roles: [] })).address).toBe(moved.listening);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it('moves to a new port while paired: the peer learns it, both are online again, and it is remembered', async () => {
    const dir = dataDir();
    const alice = await desktop(dir);
    const bob = await peer('bob');
    await pair(alice, bob);
    const [connection] = await bob.owner('connections.list', {});
    const before = (await alice.owner('network.get', {})).listening;
    expect(connection!.address).toBe(before);

    const target = await closedPort();
    const moved = await alice.owner('network.update', { port: target });
    expect(moved.listening).toBe(`127.0.0.1:${target}`);
    expect(moved.invitationAddress).toBe(`127.0.0.1:${target}`);
    await bob.waitFor(async () => {
      const [c] = await bob.owner('connections.list', {});
      return c?.online && c.address === `127.0.0.1:${target}`;
    }, 'bob to reach alice at her new address');
    await alice.waitFor(async () => (await alice.owner('connections.list', {}))[0]?.online, 'alice to see bob again');

    await alice.close();
    open.splice(open.indexOf(alice), 1);
    const reopened = await desktop(dir);
    expect((await reopened.owner('network.get', {})).listening).toBe(`127.0.0.1:${target}`);
  });

  it('refuses a port another program holds, keeping the one it has and the peer online', async () => {
    const alice = await desktop(dataDir());
    const bob = await peer('bob');
    await pair(alice, bob);
    const before = await alice.owner('network.get', {});
    const taken = await occupiedPort();
    try {
      const refused = await rejection(alice.owner('network.update', { port: taken.port }));
      expect(refused.code).toBe('conflict');
      expect(refused.message).toBe(`port ${taken.port} is in use by another program; choose another port`);
    } finally {
      await taken.release();
    }
    const after = await alice.owner('network.get', {});
    expect(after.listening).toBe(before.listening);
    expect(after.port).toBe(before.port);
    const { code } = await alice.owner('connections.invite', { roles: [] });
    expect(code).toBeTruthy();
    await alice.waitFor(async () => (await alice.owner('connections.list', {}))[0]?.online, 'bob still online');
  });

  it('refuses settings that cannot work, with the reason, and changes nothing', async () => {
    const alice = await desktop(dataDir());
    // Its own first check, out of the way.
    const before = await alice.waitFor(async () => {
      const status = await alice.owner('network.get', {});
      return status.check && status;
    }, 'the first check');
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ port: 70000 }, /port/],
      [{ listenHost: 'not an address' }, /IP address/],
      [{ advertise: '0.0.0.0:4180' }, /cannot be dialled/],
      [{ listenHost: '0.0.0.0' }, /needs an advertised address/],
      [{ advertise: 'https://example.org/' }, /HOST or HOST:PORT/],
      [{}, /listenHost, port or advertise/],
      [{ port: 4180, extra: true }, /extra/],
    ];
    for (const [params, message] of cases) {
      const refused = await rejection(
        alice.installation.call({ person: alice.installation.owner() }, 'network.update', params),
      );
      expect(refused.code, JSON.stringify(params)).toBe('invalid');
      expect(refused.message).toMatch(message);
    }
    expect(await alice.owner('network.get', {})).toEqual(before);
  });

  it('carries an advertised address in invitations, and says when nothing answers there', async () => {
    const alice = await desktop(dataDir());
    const nowhere = `127.0.0.1:${await closedPort()}`;
    const advertised = await alice.owner('network.update', { advertise: nowhere });
    expect(advertised.invitationAddress).toBe(nowhere);
    expect(advertised.listening).not.toBe(nowhere);
    expect((await alice.owner('connections.invite', { roles: [] })).address).toBe(nowhere);
    const checked = await alice.owner('network.check', {});
    expect(checked.check).toMatchObject({ address: nowhere, reachable: false });
    expect(checked.check!.message).toMatch(/Nothing answers at/);
    expect(checked.problem).toBe(checked.check!.message);

    const back = await alice.owner('network.update', { advertise: null });
    expect(back.invitationAddress).toBe(back.listening);
    expect((await alice.owner('network.check', {})).check).toMatchObject({ reachable: true });
  });

  it('says when another program answers at the advertised address', async () => {
    const alice = await desktop(dataDir());
    const bob = await peer('bob');
    const advertised = await alice.owner('network.update', { advertise: bob.installation.peerAddress! });
    const checked = await alice.owner('network.check', {});
    expect(checked.check).toMatchObject({ address: advertised.invitationAddress, reachable: false });
    expect(checked.check!.message).toMatch(/not this installation/);
  });
});

describe('a server’s peer address', () => {
  it('comes from its flags: shown, checked, never changed at run time', async () => {
    const bob = await peer('bob');
    const status = await bob.owner('network.get', {});
    expect(status).toMatchObject({ configuredBy: 'command line', listening: bob.installation.peerAddress });
    const refused = await rejection(bob.owner('network.update', { port: 0 }));
    expect(refused.code).toBe('conflict');
    expect(refused.message).toMatch(/--peer-port/);
    expect((await bob.owner('network.check', {})).check).toMatchObject({ reachable: true });
  });

  it('does not listen when told not to, and says so', async () => {
    const quiet = await openTestInstallation({ name: 'quiet' });
    open.push(quiet);
    const status = await quiet.owner('network.get', {});
    expect(status).toMatchObject({ configuredBy: 'none', listening: null, invitationAddress: null });
    expect(status.problem).toMatch(/does not listen/);
    expect((await rejection(quiet.owner('connections.invite', { roles: [] }))).code).toBe('unavailable');
  });
});
