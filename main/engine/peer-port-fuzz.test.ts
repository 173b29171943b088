// Fuzzes the peer port of a real `parley serve` below the frame level that
// wire-protocol.test.ts fuzzes: random bytes on TCP, broken TLS records, random HTTP
// inside TLS with and without a client certificate, random WebSocket frames after an
// upgrade, and random JSON frames on a paired link. Bounded in count; then a paired
// peer's text is still acked and the database passes integrity_check.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import Database from 'better-sqlite3';
import type WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fuzz, inParallel } from '../../test-support/fuzz';
import { closed, connectTcp, RawWebSocket } from '../../test-support/raw-http';
import { removeDataDir, startServe, type ServeProcess } from '../../test-support/serve-process';
import { loadOrCreateIdentity, type Identity } from './identity';
import { decodeInvite } from './invitation';
import { dialPeer } from './transport';
import type { Frame } from './wire';

function tlsConnect(port: number, identity: Identity | null): Promise<tls.TLSSocket | null> {
  return new Promise((resolve) => {
    const socket = tls.connect({
      host: '127.0.0.1',
      port,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.3',
      ...(identity ? { key: identity.key, cert: identity.cert } : {}),
    });
    socket.once('secureConnect', () => resolve(socket));
    socket.once('error', () => resolve(null));
  });
}

/** Frames a link receives, for waiting on one. */
function collect(ws: WebSocket): {
  frames: Frame[];
  next(type: string, match?: (f: Frame) => boolean): Promise<Frame>;
} {
  const frames: Frame[] = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString()) as Frame | Frame[];
    frames.push(...(Array.isArray(message) ? message : [message]));
    for (const wake of waiters.splice(0)) wake();
  });
  ws.on('error', () => {});
  return {
    frames,
    async next(type, match = () => true) {
      for (;;) {
        const found = frames.find((f) => f.type === type && match(f));
        if (found) return found;
        if (ws.readyState !== ws.OPEN) throw new Error(`the link closed before a ${type} frame`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 500);
        });
      }
    },
  };
}

describe('the peer port under fuzzing', () => {
  let server: ServeProcess;
  let port: number;
  let peer: Identity;
  let identityDir: string;
  const fuzz = new Fuzz();
  const seed = () => `seed ${fuzz.seed} (PARLEY_FUZZ_SEED=${fuzz.seed} repeats it)`;

  async function link() {
    const dialled = await dialPeer(peer, `127.0.0.1:${port}`, serverFingerprint);
    const frames = collect(dialled.ws);
    dialled.ws.send(JSON.stringify({ type: 'hello', protocol: 2, name: 'fuzzer', address: null }));
    await frames.next('hello');
    return { ws: dialled.ws, frames };
  }
  let serverFingerprint: string;

  beforeAll(async () => {
    server = await startServe({ name: 'alice' });
    const owner = await server.connect();
    await owner.call('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    port = Number(server.info.peer!.split(':').at(-1));
    identityDir = mkdtempSync(path.join(os.tmpdir(), 'parley-fuzzer-'));
    peer = await loadOrCreateIdentity(identityDir, 'fuzzer');
    // Pair for real: the fuzzer accepts an invitation by hand.
    const invite = decodeInvite((await owner.call('connections.invite', { roles: ['assistant'] })).code);
    serverFingerprint = invite.fingerprint;
    const dialled = await dialPeer(peer, invite.address!, invite.fingerprint);
    const frames = collect(dialled.ws);
    dialled.ws.send(
      JSON.stringify({ type: 'hello', protocol: 2, name: 'fuzzer', address: null, invitation: invite.secret }),
    );
    await frames.next('hello');
    dialled.ws.close();
  });

  afterAll(async () => {
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
    if (identityDir) rmSync(identityDir, { recursive: true, force: true });
  });

  async function expectAnswers() {
    expect(server.alive(), `parley serve ended, ${seed()}:\n${server.stderr()}`).toBe(true);
    const { ws, frames } = await link();
    const thread = randomBytes(16).toString('base64url');
    ws.send(JSON.stringify({ type: 'text', thread, seq: 1, from: 'fuzzer', to: 'assistant', body: 'still there?' }));
    const answer = await Promise.race([
      frames.next('ack', (f) => f.type === 'ack' && f.thread === thread),
      frames.next('reject', (f) => f.type === 'reject' && f.thread === thread),
    ]);
    // An ack, or `queue` when fuzzing left too much waiting for the agent.
    expect(answer.type === 'ack' || (answer.type === 'reject' && answer.reason === 'queue'), seed()).toBe(true);
    ws.close();
  }

  it('takes 300 blobs of random bytes and 200 broken TLS records on TCP', async () => {
    await inParallel(500, 10, async (i) => {
      const socket = await connectTcp(port);
      socket.on('error', () => {});
      const record =
        i < 300
          ? fuzz.bytes(1500)
          : Buffer.concat([Buffer.from([0x16, 0x03, fuzz.int(5), fuzz.int(256), fuzz.int(256)]), fuzz.bytes(600)]);
      socket.write(record);
      await Promise.race([closed(socket), new Promise((resolve) => setTimeout(resolve, 50))]);
      socket.destroy();
    });
    await expectAnswers();
  }, 180_000);

  it('takes 400 random HTTP requests inside TLS, with and without a client certificate', async () => {
    await inParallel(400, 10, async (i) => {
      const socket = await tlsConnect(port, i % 2 === 0 ? peer : null);
      if (!socket) return;
      socket.on('error', () => {});
      socket.write(fuzz.httpRequest(`127.0.0.1:${port}`));
      await Promise.race([closed(socket), new Promise((resolve) => setTimeout(resolve, 100))]);
      socket.destroy();
    });
    await expectAnswers();
  }, 180_000);

  it('takes 200 upgraded sockets sending random WebSocket frames', async () => {
    await inParallel(200, 10, async () => {
      const socket = await tlsConnect(port, peer);
      if (!socket) return;
      const { ws } = await RawWebSocket.open(socket, '/parley', `127.0.0.1:${port}`);
      if (!ws) return;
      if (fuzz.chance(0.5))
        ws.send(fuzz.wsFrame(JSON.stringify({ type: 'hello', protocol: 2, name: 'fuzzer', address: null })));
      for (let n = 1 + fuzz.int(5); n > 0; n--) ws.send(fuzz.wsFrame());
      await Promise.race([ws.closeCode(), new Promise((resolve) => setTimeout(resolve, 100))]);
      ws.destroy();
    });
    await expectAnswers();
  }, 180_000);

  it('takes 500 random JSON frames on a paired link, some as messages of several frames', async () => {
    const types = ['text', 'ack', 'reject', 'roles', 'revoke-not', 'hello'];
    const junkFrame = () => {
      const body = fuzz.junk();
      return fuzz.chance(0.5) && typeof body === 'object' && body !== null && !Array.isArray(body)
        ? { type: fuzz.pick(types), ...body }
        : body;
    };
    let current = await link();
    for (let i = 0; i < 500; i++) {
      if (current.ws.readyState !== current.ws.OPEN) current = await link();
      const message = fuzz.chance(0.2) ? Array.from({ length: 1 + fuzz.int(5) }, junkFrame) : junkFrame();
      current.ws.send(JSON.stringify(message));
    }
    current.ws.close();
    await expectAnswers();
  }, 180_000);

  it('keeps a sound database', async () => {
    await expectAnswers();
    await server.stop();
    const db = new Database(path.join(server.dataDir, 'parley.db'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true }), seed()).toBe('ok');
      expect(db.pragma('foreign_key_check')).toEqual([]);
    } finally {
      db.close();
    }
  });
});
