// Nobody who can reach Parley's ports holds them: connections that have not
// authenticated are capped in number (in total and per remote address) and in time.
// A flood past the caps, against a `parley serve` whose descriptor limit is 1024, leaves
// its descriptors bounded while a paired peer goes on exchanging texts with it.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { loadOrCreateIdentity } from './engine/identity';
import { MAX_UNAUTHENTICATED } from './net/limits';
import { closed, connectTcp, RawWebSocket } from '../test-support/raw-http';
import { askAcross, node, pairNodes, type ServeNode } from '../test-support/serve-network';
import { removeDataDir, startServe } from '../test-support/serve-process';

const openFiles = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

/** Resolves with how long the server took to close `socket` (it is never closed here). */
async function timeToClose(socket: net.Socket): Promise<number> {
  const started = Date.now();
  await closed(socket);
  return Date.now() - started;
}

describe('limits on what strangers may hold', () => {
  let alice: ServeNode;
  let bob: ServeNode;
  let conversationId: number;
  let peerPort: number;
  let uiPort: number;

  beforeAll(async () => {
    // alice runs with the descriptor limit of many desktops; bob is her paired peer.
    alice = await node(await startServe({ name: 'alice', nofile: 1024 }), 'alice');
    bob = await node(await startServe({ name: 'bob' }), 'bob');
    for (const n of [alice, bob])
      await n.api.call('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await pairNodes(alice, ['assistant'], bob, ['assistant']);
    const role = (await bob.api.call('roles.list', {}))[0]!;
    conversationId = (await bob.api.call('conversations.open', { roleId: role.id })).id;
    peerPort = Number(alice.serve.info.peer!.split(':').at(-1));
    uiPort = Number(new URL(alice.serve.info.ui).port);
  }, 60_000);

  afterAll(async () => {
    for (const n of [alice, bob]) {
      await n?.serve.stop();
      if (n) removeDataDir(n.serve.dataDir);
    }
  });

  it('keeps descriptors bounded under 1,100 half-open TLS connections and 600 half-sent HTTP requests, while a peer keeps talking', async () => {
    const pid = alice.serve.process.pid!;
    expect(await askAcross(bob, conversationId, 'alice/assistant', 'before the flood')).toContain('before the flood');
    const baseline = openFiles(pid);
    let highest = baseline;
    const sampler = setInterval(() => {
      try {
        highest = Math.max(highest, openFiles(pid));
      } catch {
        // The process ended; the checks below say so.
      }
    }, 50);
    // From eleven loopback addresses, so both the per-address and the total caps are passed.
    const flood: net.Socket[] = [];
    const open = async (port: number, i: number, bytes: Buffer | string) => {
      try {
        const socket = await connectTcp(port, { localAddress: `127.0.0.${2 + (i % 11)}` });
        socket.on('error', () => {});
        socket.write(bytes);
        flood.push(socket);
      } catch {
        // Refused outright: that is fine too.
      }
    };
    const talking = (async () => {
      for (const n of [1, 2, 3]) await askAcross(bob, conversationId, 'alice/assistant', `during the flood ${n}`);
    })();
    const tlsStart = Buffer.from([0x16, 0x03, 0x01]);
    await Promise.all([
      ...Array.from({ length: 1100 }, (_, i) => open(peerPort, i, tlsStart)),
      ...Array.from({ length: 600 }, (_, i) => open(uiPort, i, `GET / HTTP/1.1\r\nHost: 127.0.0.1:${uiPort}\r\n`)),
    ]);
    await talking;
    // Every flood connection ends: over the caps at once, the rest when their few seconds are up.
    await Promise.all(flood.map((socket) => closed(socket)));
    clearInterval(sampler);
    expect(alice.serve.alive(), alice.serve.stderr()).toBe(true);
    // Two ports, each holding at most MAX_UNAUTHENTICATED strangers, and a little more in passing.
    expect(highest - baseline).toBeLessThanOrEqual(2 * MAX_UNAUTHENTICATED + 64);
    expect(await askAcross(bob, conversationId, 'alice/assistant', 'after the flood')).toContain('after the flood');
    const fresh = await alice.serve.connect();
    expect((await fresh.call('session.whoami', {})).person.name).toBe('alice');
  }, 180_000);

  it('closes a TLS handshake that does not finish within seconds, not minutes', async () => {
    const socket = await connectTcp(peerPort);
    socket.on('error', () => {});
    socket.write(Buffer.from([0x16, 0x03, 0x01]));
    expect(await timeToClose(socket)).toBeLessThan(30_000);
  }, 60_000);

  it('closes an HTTP request whose headers never end, on the UI port and on the role API socket', async () => {
    const socket = await connectTcp(uiPort);
    socket.on('error', () => {});
    socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${uiPort}\r\n`);
    expect(await timeToClose(socket)).toBeLessThan(30_000);
    const local = net.connect(alice.serve.info.roleApi);
    local.on('error', () => {});
    await new Promise((resolve) => local.once('connect', resolve));
    local.write('POST /v1/context HTTP/1.1\r\nHost: x\r\n');
    expect(await timeToClose(local)).toBeLessThan(30_000);
  }, 60_000);

  it('closes an app API socket that never signs in, with 1008', async () => {
    const ws = new WebSocket(alice.serve.info.api);
    const code = await new Promise<number>((resolve, reject) => {
      ws.once('close', (c) => resolve(c));
      ws.once('error', reject);
    });
    expect(code).toBe(1008);
  }, 60_000);

  it('closes a peer socket that never says hello, and refuses an upgrade without a certificate', async () => {
    const anonymous = tls.connect({ host: '127.0.0.1', port: peerPort, rejectUnauthorized: false });
    anonymous.on('error', () => {});
    await new Promise((resolve) => anonymous.once('secureConnect', resolve));
    expect((await RawWebSocket.open(anonymous, '/parley', `127.0.0.1:${peerPort}`)).status).toBe(403);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-silent-'));
    try {
      const identity = await loadOrCreateIdentity(dir, 'silent');
      const socket = tls.connect({
        host: '127.0.0.1',
        port: peerPort,
        rejectUnauthorized: false,
        key: identity.key,
        cert: identity.cert,
      });
      await new Promise((resolve) => socket.once('secureConnect', resolve));
      const { ws, status } = await RawWebSocket.open(socket, '/parley', `127.0.0.1:${peerPort}`);
      expect(status).toBe(101);
      expect(await ws!.closeCode()).toBe(1002);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
