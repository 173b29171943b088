// The link and its one handshake, on an in-memory pair of frame ports and over real
// mutual TLS: the same tests, the same states.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryFramePorts, wsFramePort, type FramePort } from './frame-port';
import { handshake, HandshakeError, type Admission } from './handshake';
import { loadOrCreateIdentity, type Identity } from './identity';
import { PeerLink, type LinkState } from './peer-link';
import { dialPeer, listenForPeers, type PeerCertificate, type PeerListener } from './transport';
import { CloseCode, type Frame, type HelloFrame } from './wire';

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
