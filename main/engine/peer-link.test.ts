// The link and its one handshake, on an in-memory pair of frame ports and over real
// mutual TLS: the same tests, the same states.
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { memoryFramePorts, wsFramePort, type FramePort } from './frame-port';
import { handshake, HandshakeError, type Admission } from './handshake';
import { loadOrCreateIdentity, type Identity } from './identity';
import { PeerLink, type LinkState } from './peer-link';
import { dialPeer, listenForPeers, type PeerCertificate, type PeerListener } from './transport';
import { CloseCode, PROTOCOL_REVISION, type Frame, type HelloFrame } from './wire';

interface Pair {
  dialler: FramePort;
  listener: FramePort;
  diallerCert: PeerCertificate;
  listenerCert: PeerCertificate;
}

let dir: string;
let alice: Identity;
let bob: Identity;
let server: PeerListener;
let accepted: ((port: FramePort, peer: PeerCertificate) => void) | null = null;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'parley-link-'));
  alice = await loadOrCreateIdentity(path.join(dir, 'alice'), 'alice');
  bob = await loadOrCreateIdentity(path.join(dir, 'bob'), 'bob');
  server = await listenForPeers(bob, '127.0.0.1', 0, (ws, peer, socket) => accepted?.(wsFramePort(ws, socket), peer));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const cert = (identity: Identity): PeerCertificate => ({ fingerprint: identity.fingerprint, pem: identity.cert });

function memoryPair(): Promise<Pair> {
  const [dialler, listener] = memoryFramePorts();
  return Promise.resolve({ dialler, listener, diallerCert: cert(bob), listenerCert: cert(alice) });
}

/** alice dials bob over mutual TLS. */
async function tlsPair(): Promise<Pair> {
  const listening = new Promise<{ port: FramePort; peer: PeerCertificate }>((resolve) => {
    accepted = (port, peer) => resolve({ port, peer });
  });
  const { ws, socket, peer } = await dialPeer(alice, `127.0.0.1:${server.address.port}`, bob.fingerprint);
  const { port, peer: diallerPeer } = await listening;
  return { dialler: wsFramePort(ws, socket), listener: port, diallerCert: peer, listenerCert: diallerPeer };
}

const hello = (name: string, extra: Partial<HelloFrame> = {}): HelloFrame => ({
  type: 'hello',
  protocol: 2,
  name,
  address: null,
  ...extra,
});

/** A link's frames and its end, collected. */
function watch(link: PeerLink) {
  const frames: Frame[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    link.onClose((code, reason) => resolve({ code, reason })),
  );
  return { frames, closed, open: () => link.open((frame) => frames.push(frame)) };
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

describe.each([
  ['an in-memory pair', memoryPair],
  ['mutual TLS', tlsPair],
])('a peer link over %s', (_name, makePair) => {
  async function links() {
    const pair = await makePair();
    const dialler = new PeerLink(pair.dialler, pair.diallerCert, 'dialler');
    const listener = new PeerLink(pair.listener, pair.listenerCert, 'dialler');
    return { dialler, listener };
  }

  it('goes awaiting-hello → hello-received → open on both sides, the dialler speaking first', async () => {
    const { dialler, listener } = await links();
    const states: LinkState[] = [dialler.state, listener.state];
    const admitted: HelloFrame[] = [];
    const listening = handshake(listener, {
      side: 'listener',
      hello: hello('bob'),
      admit: (theirs): Admission => {
        admitted.push(theirs);
        return { connectionId: 7 };
      },
    });
    const dialling = handshake(dialler, { side: 'dialler', hello: hello('alice'), admit: () => ({ connectionId: 3 }) });
    expect(await listening).toEqual({ connectionId: 7, hello: hello('alice') });
    expect(await dialling).toEqual({ connectionId: 3, hello: hello('bob') });
    expect(admitted).toEqual([hello('alice')]);
    states.push(dialler.state, listener.state);
    const a = watch(dialler);
    const b = watch(listener);
    a.open();
    b.open();
    states.push(dialler.state, listener.state);
    expect(states).toEqual(['awaiting-hello', 'awaiting-hello', 'hello-received', 'hello-received', 'open', 'open']);
    dialler.send({ type: 'revoke' });
    await until(() => b.frames.length === 1);
    expect(b.frames).toEqual([{ type: 'revoke' }]);
    dialler.close(CloseCode.normal, 'bye');
    expect(dialler.state).toBe('closing');
    expect(await b.closed).toMatchObject({ code: CloseCode.normal, reason: 'bye' });
    await a.closed;
    expect([dialler.state, listener.state]).toEqual(['closed', 'closed']);
  });

  it('keeps the frames that come right after the hello until the link opens, in order', async () => {
    const { dialler, listener } = await links();
    const listening = handshake(listener, {
      side: 'listener',
      hello: hello('bob'),
      admit: () => ({ connectionId: 1 }),
    });
    // The dialler's hello and what follows leave at once, before the listener decided.
    dialler.send(hello('alice'));
    dialler.send({ type: 'roles', roles: [{ name: 'assistant', description: '' }] });
    dialler.send({ type: 'ack', thread: 'T'.repeat(22), seq: 1 });
    await listening;
    await until(() => listener.state === 'hello-received');
    const b = watch(listener);
    b.open();
    await until(() => b.frames.length === 2);
    expect(b.frames.map((f) => f.type)).toEqual(['roles', 'ack']);
    dialler.close(CloseCode.normal, 'done');
    await b.closed;
  });

  it('closes with a protocol error when the first frame is not hello, or a hello comes twice', async () => {
    const first = await links();
    const listening = handshake(first.listener, {
      side: 'listener',
      hello: hello('bob'),
      admit: () => ({ connectionId: 1 }),
    });
    const closedFirst = watch(first.listener).closed;
    first.dialler.send({ type: 'revoke' });
    await expect(listening).rejects.toBeInstanceOf(HandshakeError);
    expect(await closedFirst).toMatchObject({ code: CloseCode.protocolError, reason: 'expected hello, got revoke' });

    const second = await links();
    const handshaking = handshake(second.listener, {
      side: 'listener',
      hello: hello('bob'),
      admit: () => ({ connectionId: 1 }),
    });
    const closedSecond = watch(second.listener).closed;
    second.dialler.send(hello('alice'));
    second.dialler.send(hello('alice again'));
    await handshaking;
    expect(await closedSecond).toMatchObject({ code: CloseCode.protocolError, reason: 'hello after the handshake' });
  });

  it('refuses another protocol version on either side, saying which', async () => {
    const { dialler, listener } = await links();
    const listening = handshake(listener, {
      side: 'listener',
      hello: hello('bob'),
      admit: () => ({ connectionId: 1 }),
    });
    const closed = watch(dialler).closed;
    dialler.send(hello('alice', { protocol: 3 }));
    await expect(listening).rejects.toMatchObject({
      kind: 'protocol',
      message: expect.stringContaining('protocol 3') as unknown,
    });
    expect(await closed).toMatchObject({
      code: CloseCode.wrongProtocol,
      reason: expect.stringContaining('protocol 2') as unknown,
    });
    expect(listener.state).toBe('closed');
  });

  it('tells the dialler why the listener refused it, and the listener never says hello to a refused stranger', async () => {
    const { dialler, listener } = await links();
    const listening = handshake(listener, {
      side: 'listener',
      hello: hello('bob'),
      admit: () => ({
        refuse: { code: CloseCode.badInvitation, reason: 'unknown certificate and no valid invitation' },
      }),
    });
    const dialling = handshake(dialler, { side: 'dialler', hello: hello('alice'), admit: () => ({ connectionId: 1 }) });
    await expect(listening).rejects.toMatchObject({ kind: 'refused' });
    await expect(dialling).rejects.toMatchObject({
      kind: 'closed',
      message: 'unknown certificate and no valid invitation',
    });
    // No hello came back: the dialler's link never left awaiting-hello before it closed.
    expect(dialler.state).toBe('closed');
  });
});

/** A port that counts the WebSocket messages it hands its link. */
function counting(port: FramePort): { port: FramePort; messages: () => number } {
  let messages = 0;
  return {
    messages: () => messages,
    port: {
      revision: port.revision,
      send: (data) => port.send(data),
      close: (code, reason) => port.close(code, reason),
      terminate: () => port.terminate(),
      ping: () => port.ping(),
      listen: (events) =>
        port.listen({
          ...events,
          message: (data, isBinary) => {
            messages++;
            events.message(data, isBinary);
          },
        }),
    },
  };
}

describe.each([
  ['an in-memory pair', (revision: number) => Promise.resolve(memoryFramePorts(revision))],
  [
    'mutual TLS',
    async (revision: number): Promise<[FramePort, FramePort]> => {
      const listening = new Promise<FramePort>((resolve) => {
        accepted = (port) => resolve(port);
      });
      const { ws, socket } = await dialPeer(alice, `127.0.0.1:${server.address.port}`, bob.fingerprint, { revision });
      return [wsFramePort(ws, socket), await listening];
    },
  ],
])('messages over %s', (_name, makePorts) => {
  const thread = 'T'.repeat(22);
  const ack = (seq: number): Frame => ({ type: 'ack', thread, seq });
  const text = (seq: number, body = `text ${seq}`): Frame => ({
    type: 'text',
    thread,
    seq,
    from: 'assistant',
    to: 'researcher',
    body,
  });

  /** Two links past their handshake, open; the listener's messages counted. */
  async function opened(revision: number) {
    const [diallerPort, listenerPort] = await makePorts(revision);
    const counted = counting(listenerPort);
    const a = new PeerLink(diallerPort, cert(bob), 'dialler');
    const b = new PeerLink(counted.port, cert(alice), 'dialler');
    const listening = handshake(b, { side: 'listener', hello: hello('bob'), admit: () => ({ connectionId: 1 }) });
    await handshake(a, { side: 'dialler', hello: hello('alice'), admit: () => ({ connectionId: 1 }) });
    await listening;
    const seen = watch(b);
    seen.open();
    const mine = watch(a);
    mine.open();
    const done = async () => {
      a.close(CloseCode.normal, 'done');
      await seen.closed;
    };
    return { a, b, diallerPort, seen, mine, messages: counted.messages, done };
  }

  it.each([3, 2])(
    'at revision %i, sends the frames of one tick as one message from revision 3, one each before, in order',
    async (revision) => {
      const { a, seen, messages, done } = await opened(revision);
      const before = messages();
      const frames: Frame[] = [
        ...Array.from({ length: 200 }, (_, i) => ack(i + 1)),
        { type: 'turn', thread, seq: 1, state: 'working' },
        ...Array.from({ length: 100 }, (_, i) => text(i + 1)),
      ];
      for (const frame of frames) expect(a.send(frame)).toBe(true);
      await until(() => seen.frames.length === frames.length);
      expect(seen.frames).toEqual(frames);
      expect(messages() - before).toBe(revision >= 3 ? 1 : frames.length);
      await done();
    },
  );

  it('sends a frame too long to share a message alone, keeping the order', async () => {
    const { a, seen, messages, done } = await opened(3);
    const before = messages();
    const frames = [ack(1), text(1, 'x'.repeat(70_000)), ack(2), ack(3)];
    for (const frame of frames) a.send(frame);
    await until(() => seen.frames.length === frames.length);
    expect(seen.frames).toEqual(frames);
    expect(messages() - before).toBe(3);
    await done();
  });

  it('takes none of a message with a bad frame in it, and closes the link saying why', async () => {
    const { diallerPort, seen, mine } = await opened(3);
    diallerPort.send(JSON.stringify([ack(1), { ...ack(2), seq: -2 }]));
    expect(await mine.closed).toMatchObject({
      code: CloseCode.protocolError,
      reason: expect.stringMatching(/^bad frame: seq/) as unknown,
    });
    expect(seen.frames).toEqual([]);
  });

  it('stops reading a message at the frame that breaks the protocol', async () => {
    const { diallerPort, seen, mine } = await opened(3);
    diallerPort.send(JSON.stringify([ack(1), hello('alice'), ack(2)]));
    expect(await mine.closed).toMatchObject({ code: CloseCode.protocolError, reason: 'hello after the handshake' });
    expect(seen.frames).toEqual([ack(1)]);
  });

  it('refuses a message of several frames on a link of revision 2', async () => {
    const { diallerPort, seen, mine } = await opened(2);
    diallerPort.send(JSON.stringify([ack(1), ack(2)]));
    expect(await mine.closed).toMatchObject({
      code: CloseCode.protocolError,
      reason: 'a message of several frames needs revision 3',
    });
    expect(seen.frames).toEqual([]);
  });
});

/**
 * A listener as Parley's was before revisions: the same mutual TLS, but its WebSocket
 * server has no say in the subprotocol (`ws` then takes the first one offered).
 */
async function listenerFromBeforeRevisions(
  identity: Identity,
  accepted: (port: FramePort, peer: PeerCertificate) => void,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = https.createServer({
    key: identity.key,
    cert: identity.cert,
    requestCert: true,
    rejectUnauthorized: false,
    minVersion: 'TLSv1.3',
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const tlsSocket = socket as TLSSocket;
    wss.handleUpgrade(req, socket, head, (ws) => accepted(wsFramePort(ws, tlsSocket), cert(alice)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as { port: number }).port,
    async close() {
      for (const client of wss.clients) client.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the revision a link speaks', () => {
  const turn: Frame = { type: 'turn', thread: 'T'.repeat(22), seq: 1, state: 'working' };

  /** Opens both ends of a pair without a handshake (the engine's part) and sends `turn`, then a barrier. */
  async function exchange(dialler: FramePort, listener: FramePort) {
    const a = new PeerLink(dialler, cert(bob), 'dialler');
    const b = new PeerLink(listener, cert(alice), 'dialler');
    const listening = handshake(b, { side: 'listener', hello: hello('bob'), admit: () => ({ connectionId: 1 }) });
    await handshake(a, { side: 'dialler', hello: hello('alice'), admit: () => ({ connectionId: 1 }) });
    await listening;
    const seen = watch(b);
    seen.open();
    watch(a).open();
    const sent = a.send(turn);
    // Frames arrive in order: once the revoke is in, the turn would have been too.
    a.send({ type: 'revoke' });
    await until(() => seen.frames.some((f) => f.type === 'revoke'));
    a.close(CloseCode.normal, 'done');
    await seen.closed;
    return { revisions: [a.revision, b.revision], sent, received: seen.frames.map((f) => f.type) };
  }

  async function overTls(revision: number | null) {
    const listening = new Promise<FramePort>((resolve) => {
      accepted = (port) => resolve(port);
    });
    const { ws, socket } = await dialPeer(alice, `127.0.0.1:${server.address.port}`, bob.fingerprint, { revision });
    return exchange(wsFramePort(ws, socket), await listening);
  }

  it('is the newest both ends speak: this revision between two of today', async () => {
    expect(PROTOCOL_REVISION).toBe(3);
    expect(await overTls(PROTOCOL_REVISION)).toEqual({ revisions: [3, 3], sent: true, received: ['turn', 'revoke'] });
    const [dialler, listener] = memoryFramePorts();
    expect(await exchange(dialler, listener)).toEqual({ revisions: [3, 3], sent: true, received: ['turn', 'revoke'] });
    // A dialler of revision 2 or 1 gets its own from a listener of today.
    expect(await overTls(2)).toEqual({ revisions: [2, 2], sent: true, received: ['turn', 'revoke'] });
    expect(await overTls(1)).toEqual({ revisions: [1, 1], sent: true, received: ['turn', 'revoke'] });
  });

  it('is 0 with a dialler from before revisions, which then never gets a frame it does not know', async () => {
    expect(await overTls(null)).toEqual({ revisions: [0, 0], sent: false, received: ['revoke'] });
    expect(await overTls(0)).toEqual({ revisions: [0, 0], sent: false, received: ['revoke'] });
    const [dialler, listener] = memoryFramePorts(0);
    expect(await exchange(dialler, listener)).toEqual({ revisions: [0, 0], sent: false, received: ['revoke'] });
  });

  it('is 0 with a listener from before revisions, which takes the first subprotocol offered', async () => {
    let port: FramePort | null = null;
    const old = await listenerFromBeforeRevisions(bob, (p) => {
      port = p;
    });
    try {
      const { ws, socket } = await dialPeer(alice, `127.0.0.1:${old.port}`, bob.fingerprint);
      expect(ws.protocol).toBe('parley.2');
      await until(() => port !== null);
      expect(await exchange(wsFramePort(ws, socket), port!)).toEqual({
        revisions: [0, 0],
        sent: false,
        received: ['revoke'],
      });
    } finally {
      await old.close();
    }
  });
});
