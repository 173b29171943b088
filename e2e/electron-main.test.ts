// The built desktop main process (dist/electron/main.js), run under plain Node with the
// stand-in `electron` module (test-support/electron/), driven as its window's page
// drives it — through its real IPC handler — next to a headless `parley serve`. Each
// is a real process with its own data folder; they pair over mutual TLS on loopback.
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionSummary } from '../shared/domain';
import type { ControlPush } from '../test-support/electron/control-protocol';
import type { ApiClient } from '../test-support/api-client';
import { launchAgain, startDesktop, type DesktopProcess } from '../test-support/desktop-process';
import { removeDataDir, startServe, type ServeProcess } from '../test-support/serve-process';

let alice: DesktopProcess | undefined;
let bob: ServeProcess | undefined;
let bobApi: ApiClient | undefined;

function both() {
  if (!alice || !bob || !bobApi) throw new Error('setup failed');
  return { alice, bob, bobApi };
}

const PAGE = 'app://parley/index.html';

beforeAll(async () => {
  [alice, bob] = await Promise.all([startDesktop({ name: 'alice' }), startServe({ name: 'bob' })]);
  bobApi = await bob.connect();
  // The page subscribes to events as soon as it renders.
  await alice.listen();
}, 60_000);

afterAll(async () => {
  bobApi?.close();
  await alice?.crash();
  await bob?.stop();
  if (alice) removeDataDir(alice.dataDir);
  if (bob) removeDataDir(bob.dataDir);
});

describe('the desktop window', () => {
  it('is isolated, sandboxed and without Node, and shows our page from app://parley/', async () => {
    const { alice } = both();
    const snapshot = await alice.inspect();
    expect(snapshot.windows).toHaveLength(1);
    const [win] = snapshot.windows;
    expect(win!.url).toBe(PAGE);
    expect(win!.title).toBe('Parley');
    const prefs = win!.options.webPreferences as Record<string, unknown>;
    expect(prefs).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    });
    expect(existsSync(prefs.preload as string)).toBe(true);
    expect(path.basename(prefs.preload as string)).toBe('preload.cjs');
    expect(snapshot.privilegedSchemes).toEqual([
      { scheme: 'app', privileges: expect.objectContaining({ standard: true, secure: true }) as unknown },
    ]);
    expect(snapshot.handledSchemes).toContain('app');
  });

  it('sends the page with its Content-Security-Policy as a header, and nothing outside the page’s folder', async () => {
    const { alice } = both();
    const page = await alice.fetch(PAGE);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    const csp = page.headers['content-security-policy'] ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    // The page talks to main over IPC only: it needs no connection of its own.
    expect(csp).toContain("connect-src 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(page.body)?.[1];
    expect(script).toBeDefined();
    const asset = await alice.fetch(`app://parley/${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toMatch(/^text\/javascript/);
    for (const outside of [
      'app://parley/../../package.json',
      'app://parley/%2e%2e/%2e%2e/package.json',
      'app://parley/..%2f..%2fpackage.json',
      'app://other/index.html',
      'app://parley/no-such-file.js',
    ])
      expect((await alice.fetch(outside)).status, outside).toBe(404);
  });

  it('grants the page no permission but writing to the clipboard', async () => {
    const { alice } = both();
    for (const permission of ['geolocation', 'media', 'notifications', 'openExternal', 'clipboard-read', 'hid']) {
      expect(await alice.control({ op: 'permission', check: 'request', permission }), permission).toBe(false);
      expect(await alice.control({ op: 'permission', check: 'check', permission }), permission).toBe(false);
    }
    expect(await alice.control({ op: 'permission', check: 'request', permission: 'clipboard-sanitized-write' })).toBe(
      true,
    );
  });

  it('never navigates or opens windows; web links open in the browser, other schemes nowhere', async () => {
    const { alice } = both();
    const away = (await alice.control({
      op: 'navigate',
      windowId: alice.windowId,
      event: 'will-navigate',
      url: 'https://example.com/docs',
    })) as { prevented: boolean; openedExternally: string[] };
    expect(away).toEqual({ prevented: true, openedExternally: ['https://example.com/docs'] });
    const file = (await alice.control({
      op: 'navigate',
      windowId: alice.windowId,
      event: 'will-navigate',
      url: 'file:///etc/passwd',
    })) as { prevented: boolean; openedExternally: string[] };
    expect(file).toEqual({ prevented: true, openedExternally: [] });
    const redirect = (await alice.control({
      op: 'navigate',
      windowId: alice.windowId,
      event: 'will-redirect',
      url: 'https://example.com/',
    })) as { prevented: boolean };
    expect(redirect.prevented).toBe(true);
    for (const url of ['https://example.com/new', 'javascript:alert(1)', 'app://parley/index.html']) {
      const opened = (await alice.control({ op: 'open-window', windowId: alice.windowId, url })) as {
        action: string;
        openedExternally: string[];
      };
      expect(opened.action, url).toBe('deny');
      expect(opened.openedExternally).toEqual(url.startsWith('https:') ? [url] : []);
    }
  });

  it('answers the API only for its own page’s main frame', async () => {
    const { alice } = both();
    const whoami = await alice.invoke('session.whoami', {});
    expect(whoami.person.kind).toBe('owner');
    expect(whoami.installation.name).toBe('alice');
    expect(await alice.invokeRaw('session.whoami', {}, 'subframe')).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    expect(await alice.invokeRaw(42, {})).toMatchObject({ ok: false, error: { code: 'invalid' } });
    expect(await alice.invokeRaw('roles.create', { name: 'Bad Name!' })).toMatchObject({
      ok: false,
      error: { code: 'invalid' },
    });
  });

  it('has the usual menus and shortcuts, and Settings… opens Settings in the page', async () => {
    const { alice } = both();
    const { menu } = await alice.inspect();
    const roles = JSON.stringify(menu);
    for (const role of ['editMenu', 'windowMenu', 'quit', 'zoomIn', 'zoomOut', 'resetZoom', 'togglefullscreen'])
      expect(roles, role).toContain(`"role":"${role}"`);
    const settings = JSON.stringify(menu).match(/\{[^{}]*"label":"Settings…"[^{}]*\}/)?.[0] ?? '';
    expect(settings).toContain('"accelerator":"CmdOrCtrl+,"');
    const before = alice.events.length;
    const top = menu!.find((item) => item.submenu?.some((sub) => sub.label === 'Settings…'))!;
    await alice.control({ op: 'menu-click', path: [top.label ?? top.role!, 'Settings…'] });
    await alice.waitFor(
      () => alice.events.slice(before).find((e) => e.type === 'show' && e.view === 'settings'),
      'the page to be asked to show Settings',
    );
  });
});

describe('the desktop app with a headless peer', () => {
  let aliceConnection: ConnectionSummary;

  it('listens for peers: it invites, a headless `parley serve` accepts, and both see each other online', async () => {
    const { alice, bobApi } = both();
    await alice.invoke('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await bobApi.call('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    const invitation = await alice.invoke('connections.invite', { roles: ['assistant'] });
    const network = await alice.invoke('network.get', {});
    expect(network.configuredBy).toBe('settings');
    expect(network.listening).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(network.invitationAddress).toBe(network.listening);
    expect(invitation.address).toBe(network.invitationAddress);
    await bobApi.call('connections.accept', { code: invitation.code, roles: ['researcher'] });
    aliceConnection = await alice.waitFor(
      async () =>
        (await alice.invoke('connections.list', {})).find(
          (c) => c.name === 'bob' && c.online && c.peerRoles.length === 1,
        ),
      'alice to see bob online with his researcher',
    );
    await bobApi.waitFor(
      async () =>
        (await bobApi.call('connections.list', {})).find(
          (c) => c.name === 'alice' && c.online && c.peerRoles.length === 1,
        ),
      20_000,
      'bob to see alice online with her assistant',
    );
    expect(aliceConnection.peerRoles.map((r) => r.name)).toEqual(['researcher']);
  });

  it('a text flows both ways: alice asks bob’s researcher, bob asks alice’s assistant', async () => {
    const { alice, bobApi } = both();
    const roles = await alice.invoke('roles.list', {});
    const mine = await alice.invoke('conversations.open', { roleId: roles[0]!.id });
    await alice.invoke('conversations.send', { id: mine.id, text: 'ask bob/researcher: hello from alice' });
    await alice.waitFor(async () => {
      const detail = await alice.invoke('conversations.get', { id: mine.id });
      return detail.messages.some((m) => m.body === 'bob/researcher says: answer from researcher: hello from alice');
    }, 'bob’s answer in alice’s conversation');

    const bobRoles = await bobApi.call('roles.list', {});
    const his = await bobApi.call('conversations.open', { roleId: bobRoles[0]!.id });
    await bobApi.call('conversations.send', { id: his.id, text: 'ask alice/assistant: hello from bob' });
    await bobApi.waitFor(
      async () => {
        const detail = await bobApi.call('conversations.get', { id: his.id });
        return detail.messages.some((m) => m.body === 'alice/assistant says: answer from assistant: hello from bob');
      },
      30_000,
      'alice’s answer in bob’s conversation',
    );
    // The window was in front all along: nothing to notify.
    expect((await alice.inspect()).notifications).toEqual([]);
  });

  it('notifies of an answer while the window is behind, naming the role only; the badge and title count what waits; a click opens it', async () => {
    const { alice } = both();
    // What waited so far was read, as the page reads what it shows.
    await alice.invoke('attention.markRead', { kind: 'all' });
    await alice.waitFor(async () => (await alice.inspect()).badgeCount === 0, 'the badge to be empty');
    await alice.control({ op: 'focus', windowId: alice.windowId, focused: false });
    const [conversation] = await alice.invoke('conversations.list', {});
    const before = alice.pushes.length;
    await alice.invoke('conversations.send', { id: conversation!.id, text: 'are you there?' });
    const shown = await alice.waitFor(
      () =>
        alice.pushes
          .slice(before)
          .find((p): p is Extract<ControlPush, { push: 'notification' }> => p.push === 'notification'),
      'a notification of the answer',
    );
    // Never the answer itself: a locked screen shows notifications.
    expect(shown).toMatchObject({ title: 'Answered', body: 'assistant answered' });
    expect(shown.options).toEqual({ title: 'Answered', body: 'assistant answered' });
    await alice.waitFor(async () => (await alice.inspect()).badgeCount === 1, 'the badge to count one');
    expect((await alice.inspect()).windows[0]!.title).toBe('Parley (1)');

    // A click brings the window to the front and asks the page to open the conversation.
    const events = alice.events.length;
    await alice.control({ op: 'click-notification', index: shown.index });
    expect((await alice.inspect()).windows[0]!.focused).toBe(true);
    await alice.waitFor(
      () =>
        alice.events
          .slice(events)
          .find((e) => e.type === 'open' && e.object.kind === 'conversation' && e.object.id === conversation!.id),
      'the page to be asked to open the conversation',
    );
    // The page shows it, and so reads it: the count clears.
    await alice.invoke('attention.markRead', { kind: 'conversation', id: conversation!.id });
    await alice.waitFor(async () => (await alice.inspect()).badgeCount === 0, 'the badge to clear');
    expect((await alice.inspect()).windows[0]!.title).toBe('Parley');
  });

  it('notifies of what waits on the owner apart from answers: bob’s pause, told at once; a click opens the connection', async () => {
    const { alice, bobApi } = both();
    const [bobSide] = await bobApi.call('connections.list', {});
    await alice.control({ op: 'focus', windowId: alice.windowId, focused: false });
    const before = alice.pushes.length;
    await bobApi.call('connections.pause', { id: bobSide!.id });
    const notes = () =>
      alice.pushes
        .slice(before)
        .filter((p): p is Extract<ControlPush, { push: 'notification' }> => p.push === 'notification');
    await alice.waitFor(
      () => notes().some((n) => n.body === 'bob paused the connection'),
      'the notification of the pause',
    );
    // Her agent's ask is refused at home now: nothing is sent, so nothing goes undelivered.
    const [conversation] = await alice.invoke('conversations.list', {});
    await alice.invoke('conversations.send', { id: conversation!.id, text: 'ask bob/researcher: still there?' });
    await alice.waitFor(
      async () =>
        (await alice.invoke('conversations.get', { id: conversation!.id })).messages.some((m) =>
          /bob has paused the connection/.test(m.body),
        ),
      'the agent to be told of the pause',
    );
    for (const note of notes().filter((n) => n.body !== 'assistant answered')) {
      expect(note.title).toBe('Waiting on you');
      expect(note.body).not.toContain('still there');
    }
    expect(notes().some((n) => n.body === 'Not delivered to bob/researcher')).toBe(false);
    const pause = notes().find((n) => n.body === 'bob paused the connection')!;
    const events = alice.events.length;
    await alice.control({ op: 'click-notification', index: pause.index });
    const opened = await alice.waitFor(
      () => alice.events.slice(events).find((e) => e.type === 'open' && e.object.kind === 'connection'),
      'the page to be asked to open the connection',
    );
    const [aliceSide] = await alice.invoke('connections.list', {});
    expect(opened).toEqual({ type: 'open', object: { kind: 'connection', id: aliceSide!.id } });
    expect((await alice.inspect()).notifications[pause.index]).toMatchObject({ shown: true, clicked: true });
    await bobApi.call('connections.unpause', { id: bobSide!.id });
    await alice.waitFor(
      async () => !(await alice.invoke('connections.list', {}))[0]?.peerPausedAt,
      'alice to hear bob unpaused',
    );
    await alice.invoke('attention.markRead', { kind: 'all' });
  });

  it('hands a parley:// link from a second start of the app to the page’s accept dialog, and keeps one instance', async () => {
    const { alice, bobApi } = both();
    const { link } = await bobApi.call('connections.invite', { roles: [] });
    const second = await launchAgain(alice.dataDir, [link]);
    expect(second.code).toBe(0);
    await alice.waitFor(
      () => alice.events.find((e) => e.type === 'invitation' && e.link === link),
      'the invitation link to reach the page',
    );
    expect((await alice.inspect()).windows).toHaveLength(1);
    // macOS hands links over as open-url.
    const other = `${link}x`;
    await alice.control({ op: 'app-event', name: 'open-url', url: other });
    await alice.waitFor(
      () => alice.events.find((e) => e.type === 'invitation' && e.link === other),
      'the open-url link to reach the page',
    );
  });

  it('seals role secrets with the keychain (safeStorage), and the agent still gets them', async () => {
    const { alice } = both();
    const role = await alice.invoke('roles.create', {
      name: 'deployer',
      agent: {
        adapter: 'command',
        command: [process.execPath, '-e', 'process.stdout.write(String(process.env.DEPLOY_TOKEN))'],
        env: { DEPLOY_TOKEN: 'tok-1618033988' },
      },
    });
    const conversation = await alice.invoke('conversations.open', { roleId: role.id });
    await alice.invoke('conversations.send', { id: conversation.id, text: 'deploy' });
    await alice.waitFor(async () => {
      const detail = await alice.invoke('conversations.get', { id: conversation.id });
      return detail.messages.some((m) => m.author.kind === 'role' && m.body === 'tok-1618033988');
    }, 'the agent to print the token it was given');
    const db = new Database(path.join(alice.dataDir, 'parley.db'), { readonly: true, fileMustExist: true });
    try {
      const { agent } = db.prepare('SELECT agent FROM roles WHERE id = ?').get(role.id) as { agent: string };
      expect(agent).not.toContain('tok-1618033988');
      expect(agent).toMatch(/"DEPLOY_TOKEN":"sealed:v1:/);
    } finally {
      db.close();
    }
  });

  it('closes the store when it quits, and comes back on the port it picked, where bob finds it again', async () => {
    const { bobApi } = both();
    const desktop = alice!;
    const before = await desktop.invoke('network.get', {});
    const wal = path.join(desktop.dataDir, 'parley.db-wal');
    expect(existsSync(wal)).toBe(true);
    expect(await desktop.quit()).toBe(0);
    // A clean close checkpoints and removes the write-ahead log; a crash leaves it.
    expect(existsSync(wal)).toBe(false);
    expect(existsSync(path.join(desktop.dataDir, 'SingletonLock'))).toBe(false);
    await bobApi.waitFor(
      async () => (await bobApi.call('connections.list', {})).find((c) => c.name === 'alice' && !c.online),
      20_000,
      'bob to see alice go offline',
    );

    alice = await startDesktop({ name: 'alice', dataDir: desktop.dataDir });
    const again = await alice.invoke('network.get', {});
    expect(again.listening).toBe(before.listening);
    await bobApi.waitFor(
      async () => (await bobApi.call('connections.list', {})).find((c) => c.name === 'alice' && c.online),
      30_000,
      'bob to redial alice at the address he knows',
    );
  });
});
