// Two people who both use the desktop app: two desktop main processes (the built
// dist/electron/main.js under the stand-in `electron` module), each its own process and
// data folder, pair through their windows' IPC and talk both ways over mutual TLS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDesktop, type DesktopProcess } from '../test-support/desktop-process';
import { removeDataDir } from '../test-support/serve-process';

let carol: DesktopProcess | undefined;
let dave: DesktopProcess | undefined;

function both() {
  if (!carol || !dave) throw new Error('setup failed');
  return { carol, dave };
}

beforeAll(async () => {
  [carol, dave] = await Promise.all([startDesktop({ name: 'carol' }), startDesktop({ name: 'dave' })]);
}, 60_000);

afterAll(async () => {
  await Promise.all([carol?.quit(), dave?.quit()]);
  if (carol) removeDataDir(carol.dataDir);
  if (dave) removeDataDir(dave.dataDir);
});

async function lastAnswer(desktop: DesktopProcess, conversationId: number, body: string) {
  return desktop.waitFor(
    async () => {
      const detail = await desktop.invoke('conversations.get', { id: conversationId });
      return detail.messages.some((m) => m.body === body);
    },
    `"${body}" in ${desktop.name}’s conversation`,
    30_000,
  );
}

describe('two desktop apps', () => {
  it('pair: one invites from its window, the other accepts from its own, and both see each other online', async () => {
    const { carol, dave } = both();
    await carol.invoke('roles.create', { name: 'writer', agent: { adapter: 'scripted' } });
    await dave.invoke('roles.create', { name: 'editor', agent: { adapter: 'scripted' } });
    const invitation = await carol.invoke('connections.invite', { roles: ['writer'] });
    expect(invitation.address).toBe((await carol.invoke('network.get', {})).invitationAddress);
    const accepted = await dave.invoke('connections.accept', { code: invitation.code, roles: ['editor'] });
    expect(accepted).toMatchObject({ name: 'carol', address: invitation.address });
    for (const [me, peer] of [
      [carol, 'dave'],
      [dave, 'carol'],
    ] as const)
      await me.waitFor(
        async () =>
          (await me.invoke('connections.list', {})).find(
            (c) => c.name === peer && c.online && c.peerRoles.length === 1,
          ),
        `${me.name} to see ${peer} online with a role`,
      );
  });

  it('talk both ways: carol asks dave’s editor, dave asks carol’s writer', async () => {
    const { carol, dave } = both();
    const [writer] = await carol.invoke('roles.list', {});
    const [editor] = await dave.invoke('roles.list', {});
    const carols = await carol.invoke('conversations.open', { roleId: writer!.id });
    const daves = await dave.invoke('conversations.open', { roleId: editor!.id });
    await Promise.all([
      carol.invoke('conversations.send', { id: carols.id, text: 'ask dave/editor: is the draft fine?' }),
      dave.invoke('conversations.send', { id: daves.id, text: 'ask carol/writer: when is it due?' }),
    ]);
    await Promise.all([
      lastAnswer(carol, carols.id, 'dave/editor says: answer from editor: is the draft fine?'),
      lastAnswer(dave, daves.id, 'carol/writer says: answer from writer: when is it due?'),
    ]);
    const [carolsThread] = await carol.invoke('threads.list', { root: { kind: 'conversation', id: carols.id } });
    expect(carolsThread).toMatchObject({ peerRole: 'editor', counts: { acked: 1, failed: 0 } });
  });

  it('stay paired when one moves to another port from Settings: the other follows', async () => {
    const { carol, dave } = both();
    const moved = await carol.invoke('network.update', { port: 0 });
    expect(moved.listening).toMatch(/^127\.0\.0\.1:\d+$/);
    await dave.waitFor(
      async () =>
        (await dave.invoke('connections.list', {})).find(
          (c) => c.name === 'carol' && c.online && c.address === moved.invitationAddress,
        ),
      'dave to reach carol at her new port',
    );
    const [writer] = await carol.invoke('roles.list', {});
    const [conversation] = await carol.invoke('conversations.list', {});
    expect(conversation!.roleId).toBe(writer!.id);
    await carol.invoke('conversations.send', { id: conversation!.id, text: 'ask dave/editor: still there?' });
    await lastAnswer(carol, conversation!.id, 'dave/editor says: answer from editor: still there?');
  });
});
