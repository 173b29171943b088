// The preload bridge without Electron: `electron` is replaced by a stand-in that
// records what the preload exposes and answers IPC calls with envelopes.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { AppEvent, ParleyBridge } from '../shared/api-contract';

type Listener = (event: unknown, value: unknown) => void;
interface Fake {
  exposed: Map<string, unknown>;
  listeners: Map<string, Set<Listener>>;
  /** What the next ipcRenderer.invoke resolves with. */
  reply: unknown;
  invoked: unknown[][];
  sent: string[];
}
const fake = vi.hoisted((): Fake => ({ exposed: new Map(), listeners: new Map(), reply: null, invoked: [], sent: [] }));

vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (key: string, api: unknown) => fake.exposed.set(key, api) },
  // The lint fence lets this test, like preload.ts itself, name ipcRenderer.
  ipcRenderer: {
    invoke: (...args: unknown[]) => {
      fake.invoked.push(args);
      return Promise.resolve(fake.reply);
    },
    on: (channel: string, listener: Listener) => {
      const set = fake.listeners.get(channel) ?? new Set();
      set.add(listener);
      fake.listeners.set(channel, set);
    },
    removeListener: (channel: string, listener: Listener) => fake.listeners.get(channel)?.delete(listener),
    send: (channel: string) => fake.sent.push(channel),
  },
}));

await import('./preload');
const bridge = fake.exposed.get('parley') as ParleyBridge;

describe('preload bridge', () => {
  beforeEach(() => {
    fake.invoked.length = 0;
  });

  it('is built into one file that loads nothing but electron, as a sandboxed preload must', () => {
    const built = readFileSync(path.join(import.meta.dirname, '..', 'dist', 'electron', 'preload.cjs'), 'utf8');
    const required = [...built.matchAll(/require\(["']([^"']+)["']\)/g)].map((match) => match[1]);
    expect(required).toEqual(['electron']);
    expect(built).toContain('parley:invoke');
  });

  it('exposes only invoke and onEvent as window.parley', () => {
    expect([...fake.exposed.keys()]).toEqual(['parley']);
    expect(Object.keys(bridge).sort()).toEqual(['invoke', 'onEvent']);
  });

  it('unwraps a successful envelope', async () => {
    fake.reply = { ok: true, result: [{ id: 1 }] };
    await expect(bridge.invoke('roles.list', {})).resolves.toEqual([{ id: 1 }]);
    expect(fake.invoked).toEqual([['parley:invoke', 'roles.list', {}]]);
  });

  it('rejects with a plain {code, message} object that survives the context bridge', async () => {
    fake.reply = { ok: false, error: { code: 'forbidden', message: 'owners only' } };
    const error = await bridge.invoke('roles.remove', { id: 1 }).catch((e: unknown) => e);
    expect(error).toEqual({ name: 'ApiError', code: 'forbidden', message: 'owners only' });
    expect(Object.getPrototypeOf(error)).toBe(Object.prototype);
  });

  it('delivers events until unsubscribed', () => {
    const seen: AppEvent[] = [];
    const stop = bridge.onEvent((event) => seen.push(event));
    const emit = (event: AppEvent) => {
      for (const listener of fake.listeners.get('parley:event') ?? []) listener({}, event);
    };
    emit({ type: 'changed', kind: 'task', id: 2 });
    stop();
    emit({ type: 'changed', kind: 'task', id: 3 });
    expect(seen).toEqual([{ type: 'changed', kind: 'task', id: 2 }]);
  });

  it('tells main when the page listens for events, so held links can be delivered', () => {
    fake.sent.length = 0;
    const stop = bridge.onEvent(() => undefined);
    expect(fake.sent).toEqual(['parley:listening']);
    stop();
  });
});
