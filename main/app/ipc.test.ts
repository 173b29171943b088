// The IPC wiring without Electron: `electron` is replaced by a stand-in that records
// the handler, so the sender check and the reply envelope can be tested under Node.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, type AppEvent } from '../../shared/api-contract';
import type { Person } from '../../shared/domain';
import type { Installation } from '../installation';
import { log } from '../log';

type Handler = (event: unknown, method: unknown, params: unknown) => Promise<unknown>;
type OnListener = (event: unknown) => void;
const fake = vi.hoisted(() => ({
  handlers: new Map<string, Handler>(),
  listeners: new Map<string, Set<OnListener>>(),
}));

vi.mock('electron', () => ({
  // The lint fence lets this test, like ipc.ts itself, name ipcMain.
  ipcMain: {
    handle: (channel: string, handler: Handler) => fake.handlers.set(channel, handler),
    removeHandler: (channel: string) => fake.handlers.delete(channel),
    on: (channel: string, listener: OnListener) => {
      const set = fake.listeners.get(channel) ?? new Set();
      set.add(listener);
      fake.listeners.set(channel, set);
    },
    removeListener: (channel: string, listener: OnListener) => fake.listeners.get(channel)?.delete(listener),
  },
  BrowserWindow: class {},
  shell: { openExternal: () => Promise.resolve() },
}));

const { wireIpc } = await import('./ipc');
const { INVOKE_CHANNEL, EVENT_CHANNEL, LISTENING_CHANNEL } = await import('../../shared/ipc-channels');

const pageUrl = 'app://parley/index.html';
const owner: Person = { id: 1, name: 'owner', kind: 'owner', createdAt: '2025-01-01T00:00:00Z' };

function setup() {
  const sent: [string, unknown][] = [];
  const mainFrame = { url: pageUrl };
  const webContents = { mainFrame, send: (channel: string, value: unknown) => sent.push([channel, value]) };
  const win = { isDestroyed: () => false, webContents };
  let listener: ((event: AppEvent) => void) | null = null;
  const unsubscribe = vi.fn();
  const call = vi.fn<Installation['call']>(() => Promise.resolve({ answer: 42 }));
  // The window's one session, bound to the owner (no token).
  const session = { person: owner };
  const installation = {
    call,
    owner: () => owner,
    ownerSession: () => session,
    sessions: { forget: vi.fn() },
    subscribe: (subscriber: { person: Person }, l: (event: AppEvent) => void) => {
      expect(subscriber).toBe(session);
      listener = l;
      return unsubscribe;
    },
  } as unknown as Installation;
  const onRendererListening = vi.fn();
  const unwire = wireIpc(installation, win as never, pageUrl, { onRendererListening });
  const handler = fake.handlers.get(INVOKE_CHANNEL);
  if (!handler) throw new Error('no handler registered');
  const invoke = (method: unknown, params: unknown, frame: { url: string } | null = mainFrame) =>
    handler({ sender: webContents, senderFrame: frame }, method, params);
  const listening = (frame: { url: string } | null = mainFrame) => {
    for (const l of fake.listeners.get(LISTENING_CHANNEL) ?? []) l({ sender: webContents, senderFrame: frame });
  };
  return {
    invoke,
    call,
    sent,
    unwire,
    unsubscribe,
    mainFrame,
    emit: (e: AppEvent) => listener?.(e),
    listening,
    onRendererListening,
  };
}

describe('wireIpc', () => {
  beforeEach(() => {
    fake.handlers.clear();
    fake.listeners.clear();
    log.setQuiet(true); // refusals are logged as warnings; they are expected here
  });

  it('calls the installation as its owner and wraps the result', async () => {
    const { invoke, call } = setup();
    await expect(invoke('roles.list', {})).resolves.toEqual({ ok: true, result: { answer: 42 } });
    expect(call).toHaveBeenCalledWith({ person: owner }, 'roles.list', {});
  });

  it('accepts our page with a fragment, and passes missing params as {}', async () => {
    const { invoke, call, mainFrame } = setup();
    mainFrame.url = `${pageUrl}#/settings`;
    await expect(invoke('session.whoami', undefined)).resolves.toMatchObject({ ok: true });
    expect(call).toHaveBeenLastCalledWith({ person: owner }, 'session.whoami', {});
  });

  it('returns ApiErrors with their code and hides other errors behind "internal"', async () => {
    const { invoke, call } = setup();
    call.mockRejectedValueOnce(new ApiError('not_found', 'no such role'));
    await expect(invoke('roles.remove', { id: 9 })).resolves.toEqual({
      ok: false,
      error: { code: 'not_found', message: 'no such role' },
    });
    call.mockRejectedValueOnce(new Error('disk on fire'));
    const reply = (await invoke('roles.list', {})) as { ok: false; error: { code: string; message: string } };
    expect(reply.error.code).toBe('internal');
    expect(reply.error.message).not.toContain('disk on fire');
  });

  it('refuses other frames, other pages and malformed methods', async () => {
    const { invoke, call, mainFrame } = setup();
    await expect(invoke('roles.list', {}, { url: pageUrl })).resolves.toMatchObject({
      error: { code: 'forbidden' },
    });
    await expect(invoke('roles.list', {}, null)).resolves.toMatchObject({ error: { code: 'forbidden' } });
    mainFrame.url = 'https://example.com/';
    await expect(invoke('roles.list', {})).resolves.toMatchObject({ error: { code: 'forbidden' } });
    // The same files from file:// or another app:// host are not our page either.
    mainFrame.url = 'file:///opt/parley/dist/renderer/index.html';
    await expect(invoke('roles.list', {})).resolves.toMatchObject({ error: { code: 'forbidden' } });
    mainFrame.url = 'app://other/index.html';
    await expect(invoke('roles.list', {})).resolves.toMatchObject({ error: { code: 'forbidden' } });
    mainFrame.url = pageUrl;
    await expect(invoke(42, {})).resolves.toMatchObject({ error: { code: 'invalid' } });
    expect(call).not.toHaveBeenCalled();
  });

  it('forwards events to the window and unwires cleanly', () => {
    const { emit, sent, unwire, unsubscribe } = setup();
    emit({ type: 'changed', kind: 'role', id: 3 });
    expect(sent).toEqual([[EVENT_CHANNEL, { type: 'changed', kind: 'role', id: 3 }]]);
    unwire();
    expect(unsubscribe).toHaveBeenCalled();
    expect(fake.handlers.has(INVOKE_CHANNEL)).toBe(false);
  });

  it('hears that the page listens only from our page, and stops hearing it once unwired', () => {
    const { listening, onRendererListening, unwire } = setup();
    listening({ url: 'https://example.com/' });
    listening(null);
    expect(onRendererListening).not.toHaveBeenCalled();
    listening();
    expect(onRendererListening).toHaveBeenCalledTimes(1);
    unwire();
    expect(fake.listeners.get(LISTENING_CHANNEL)?.size ?? 0).toBe(0);
  });
});
