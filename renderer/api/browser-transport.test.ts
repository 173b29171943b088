// The browser transport against a small JSON-RPC server speaking the protocol of
// main/api/ws-transport.ts, so these tests need neither a browser nor the engine.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { ApiError, SESSION_ENDED_CLOSE_CODE, type AppEvent } from '../../shared/api-contract';
import { apiUrlFor, BrowserTransport, takeTokenFromAddress, type SocketLike } from './browser-transport';

interface Request {
  id: number;
  method: string;
  params: Record<string, unknown>;
}

class FakeServer {
  readonly wss: WebSocketServer;
  readonly requests: Request[] = [];
  readonly sockets = new Set<WebSocket>();

  /** `port` 0 picks a free one; `good` is the one token it accepts. */
  constructor(port = 0, good = 'good') {
    this.wss = new WebSocketServer({ port, host: '127.0.0.1' });
    this.wss.on('connection', (ws) => {
      this.sockets.add(ws);
      let signedIn = false;
      ws.on('close', () => this.sockets.delete(ws));
      ws.on('message', (data: Buffer) => {
        const request = JSON.parse(data.toString()) as Request;
        this.requests.push(request);
        const reply = (body: object) => ws.send(JSON.stringify({ jsonrpc: '2.0', id: request.id, ...body }));
        const fail = (code: number, stable: string, message: string) =>
          reply({ error: { code, message, data: { code: stable } } });
        if (request.method === 'session.signIn') {
          if (request.params.token !== good) return fail(-32001, 'unauthenticated', 'unknown token');
          signedIn = true;
          return reply({ result: { person: { id: 1, name: 'owner', kind: 'owner', createdAt: 'now' } } });
        }
        if (!signedIn) return fail(-32001, 'unauthenticated', 'sign in first');
        if (request.method === 'roles.list') return reply({ result: [] });
        if (request.method === 'roles.remove') return fail(-32004, 'not_found', 'no such role');
        if (request.method === 'people.remove') return reply({ error: { code: -32601, message: 'no data' } });
        return fail(-32601, 'invalid', 'unknown method');
      });
    });
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/api`;
  }

  broadcast(event: AppEvent): void {
    for (const ws of this.sockets) ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'event', params: event }));
  }

  /** Closes every socket the way the server ends a session (person removed, token replaced). */
  endSessions(reason: string): void {
    for (const ws of this.sockets) ws.close(SESSION_ENDED_CLOSE_CODE, reason);
  }

  dropAll(): void {
    for (const ws of this.sockets) ws.terminate();
  }

  async close(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

const openWs = (url: string): SocketLike => new WebSocket(url);

function memoryStorage() {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
    removeItem: (key: string) => void items.delete(key),
  };
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('BrowserTransport', () => {
  let server: FakeServer;

  beforeEach(async () => {
    server = new FakeServer();
    await once(server.wss, 'listening');
  });
  afterEach(() => server.close());

  it('signs in with the token as the first call, then calls methods', async () => {
    const transport = new BrowserTransport({ url: server.url, token: 'good', storage: null, openSocket: openWs });
    await expect(transport.invoke('roles.list', {})).resolves.toEqual([]);
    expect(server.requests.map((r) => r.method)).toEqual(['session.signIn', 'roles.list']);
    expect(server.requests[0]?.params).toEqual({ token: 'good' });
    transport.disconnect();
  });

  it('rethrows server errors as ApiError with the stable code', async () => {
    const transport = new BrowserTransport({ url: server.url, token: 'good', storage: null, openSocket: openWs });
    const error = await rejection(transport.invoke('roles.remove', { id: 7 }));
    expect(error.code).toBe('not_found');
    expect(error.message).toBe('no such role');
    // Without data.code the JSON-RPC code decides.
    expect((await rejection(transport.invoke('people.remove', { id: 1 }))).code).toBe('not_found');
    transport.disconnect();
  });

  it('refuses calls without a token, and forgets a token the server refuses', async () => {
    const storage = memoryStorage();
    const none = new BrowserTransport({ url: server.url, token: null, storage, openSocket: openWs });
    expect((await rejection(none.invoke('roles.list', {}))).code).toBe('unauthenticated');
    expect(server.requests).toEqual([]);

    storage.setItem('parley.token', 'stale');
    const stale = new BrowserTransport({ url: server.url, token: 'stale', storage, openSocket: openWs });
    expect((await rejection(stale.invoke('roles.list', {}))).code).toBe('unauthenticated');
    expect(stale.hasToken()).toBe(false);
    expect(storage.items.has('parley.token')).toBe(false);

    // session.signIn through the transport sets a new token and keeps it for the tab.
    await expect(stale.invoke('session.signIn', { token: 'good' })).resolves.toMatchObject({
      person: { name: 'owner' },
    });
    expect(storage.items.get('parley.token')).toBe('good');
    await expect(stale.invoke('roles.list', {})).resolves.toEqual([]);
    stale.disconnect();
  });

  it('delivers events and reconnects after the socket drops', async () => {
    const transport = new BrowserTransport({
      url: server.url,
      token: 'good',
      storage: null,
      openSocket: openWs,
      reconnectDelayMs: 20,
    });
    const events: AppEvent[] = [];
    transport.onEvent((event) => events.push(event));
    await transport.invoke('roles.list', {});
    server.broadcast({ type: 'changed', kind: 'role', id: 3 });
    await expect.poll(() => events.length).toBe(1);

    server.dropAll();
    await expect.poll(() => server.requests.filter((r) => r.method === 'session.signIn').length).toBe(2);
    await expect.poll(() => server.sockets.size).toBe(1);
    server.broadcast({ type: 'changed', kind: 'person', id: 1 });
    await expect.poll(() => events.map((e) => (e.type === 'changed' ? e.kind : e.type))).toEqual(['role', 'person']);
    transport.disconnect();
  });

  it('signs out for good when the server ends the session, says why, and does not try the old token again', async () => {
    const storage = memoryStorage();
    storage.setItem('parley.token', 'good');
    const transport = new BrowserTransport({
      url: server.url,
      token: 'good',
      storage,
      openSocket: openWs,
      reconnectDelayMs: 20,
    });
    const events: AppEvent[] = [];
    transport.onEvent((event) => events.push(event));
    await transport.invoke('roles.list', {});
    server.endSessions('your sign-in token was replaced');
    await expect.poll(() => events).toEqual([{ type: 'sessionEnded', reason: 'your sign-in token was replaced' }]);
    expect(transport.hasToken()).toBe(false);
    expect(storage.items.has('parley.token')).toBe(false);
    expect((await rejection(transport.invoke('roles.list', {}))).code).toBe('unauthenticated');
    expect(server.requests.filter((r) => r.method === 'session.signIn')).toHaveLength(1);
    transport.disconnect();
  });

  it('says when the link is lost and back, and tries again at once on request', async () => {
    const transport = new BrowserTransport({
      url: server.url,
      token: 'good',
      storage: null,
      openSocket: openWs,
      // Long enough that only reconnect() brings it back within the test.
      reconnectDelayMs: 60_000,
    });
    const states: Array<{ status: string; retrying: boolean }> = [];
    transport.onLinkState((state) => states.push({ status: state.status, retrying: state.retryAt !== null }));
    transport.onEvent(() => undefined);
    await transport.invoke('roles.list', {});
    expect(transport.linkState().status).toBe('connected');

    const port = Number(new URL(server.url).port);
    await server.close();
    await expect.poll(() => transport.linkState()).toMatchObject({ status: 'lost' });
    expect(transport.linkState().retryAt).toBeGreaterThan(Date.now() + 30_000);
    // Calls fail while it is down, with a code the UI can tell apart.
    expect((await rejection(transport.invoke('roles.list', {}))).code).toBe('unavailable');

    server = new FakeServer(port);
    await once(server.wss, 'listening');
    transport.reconnect();
    await expect.poll(() => transport.linkState().status).toBe('connected');
    expect(states.at(0)).toEqual({ status: 'connected', retrying: false });
    expect(states).toContainEqual({ status: 'lost', retrying: true });
    expect(states.at(-1)).toEqual({ status: 'connected', retrying: false });
    await expect(transport.invoke('roles.list', {})).resolves.toEqual([]);

    // Back, but the token no longer works: signed out, no more tries.
    await server.close();
    await expect.poll(() => transport.linkState().status).toBe('lost');
    server = new FakeServer(port, 'another');
    await once(server.wss, 'listening');
    transport.reconnect();
    await expect.poll(() => transport.linkState().status).toBe('signed-out');
    expect(transport.hasToken()).toBe(false);
    transport.disconnect();
  });

  it('fails with unavailable when nothing listens', async () => {
    const url = server.url;
    await server.close();
    const transport = new BrowserTransport({ url, token: 'good', storage: null, openSocket: openWs });
    expect((await rejection(transport.invoke('roles.list', {}))).code).toBe('unavailable');
  });
});

describe('takeTokenFromAddress', () => {
  it('takes the token out of the fragment and keeps it for the tab', () => {
    const storage = memoryStorage();
    const calls: string[] = [];
    const history = {
      state: null,
      replaceState: (_s: unknown, _t: string, url?: string | URL | null) => calls.push(String(url)),
    };
    const token = takeTokenFromAddress({ hash: '#token=abc123', pathname: '/', search: '' }, history, storage);
    expect(token).toBe('abc123');
    expect(calls).toEqual(['/']);
    expect(storage.items.get('parley.token')).toBe('abc123');

    // Later loads of the tab (no fragment) find it again, and other fragment parts stay.
    expect(takeTokenFromAddress({ hash: '', pathname: '/', search: '' }, history, storage)).toBe('abc123');
    takeTokenFromAddress({ hash: '#view=tasks&token=xyz', pathname: '/app', search: '?a=1' }, history, storage);
    expect(calls.at(-1)).toBe('/app?a=1#view=tasks');
    expect(storage.items.get('parley.token')).toBe('xyz');
  });

  it('returns null without a token anywhere', () => {
    const history = { state: null, replaceState: () => undefined };
    expect(takeTokenFromAddress({ hash: '', pathname: '/', search: '' }, history, memoryStorage())).toBeNull();
  });
});

describe('apiUrlFor', () => {
  it('uses the page origin', () => {
    expect(apiUrlFor({ protocol: 'http:', host: '127.0.0.1:4000' })).toBe('ws://127.0.0.1:4000/api');
    expect(apiUrlFor({ protocol: 'https:', host: 'parley.example' })).toBe('wss://parley.example/api');
  });
});
