// The desktop app with no settings at all, reached by its DHT key alone: two desktop main
// processes (dist/electron/main.js under the stand-in `electron` module) on a loopback
// testnet. The invitation holds no address, as one from behind a home router would, so
// the acceptor can find the inviter only on the DHT; the key survives a restart.
import createTestnet, { type Testnet } from '@hyperswarm/testnet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeInvite, encodeInvite } from '../main/engine/invitation';
import { startDesktop, type DesktopProcess } from '../test-support/desktop-process';
import { removeDataDir } from '../test-support/serve-process';

let testnet: Testnet;
let env: NodeJS.ProcessEnv;
const started: DesktopProcess[] = [];

beforeAll(async () => {
  testnet = await createTestnet(3);
  env = { PARLEY_DHT_BOOTSTRAP: testnet.bootstrap.map((node) => `${node.host}:${node.port}`).join(',') };
});

afterAll(async () => {
  await Promise.all(started.map((desktop) => desktop.quit().catch(() => undefined)));
  for (const dataDir of new Set(started.map((desktop) => desktop.dataDir))) removeDataDir(dataDir);
  await testnet?.destroy();
}, 30_000);

async function desktop(name: string, dataDir?: string): Promise<DesktopProcess> {
  const d = await startDesktop({ name, env, ...(dataDir ? { dataDir } : {}) });
  started.push(d);
  return d;
}

/** The code without its address: only the DHT key says where the inviter is. */
function keyOnly(code: string): string {
  const invite = decodeInvite(code);
  if (invite.v !== 3) throw new Error(`expected a version 3 invitation, got version ${invite.v}`);
  const { address: _address, ...rest } = invite;
  return encodeInvite(rest).code;
}

describe('the desktop app over the DHT', () => {
  it('invites with its DHT key, is reached by it with no address, talks, and is found again after a restart', async () => {
    const [erin, frank] = await Promise.all([desktop('erin'), desktop('frank')]);
    // What Settings shows: on the DHT, under the key the invitation carries.
    const network = await erin.waitFor(async () => {
      const status = await erin.invoke('network.get', {});
      return status.dht.state === 'on' ? status : undefined;
    }, 'erin on the DHT');
    expect(network.dht.problem).toBeNull();
    await erin.invoke('roles.create', { name: 'writer', agent: { adapter: 'scripted' } });
    await frank.invoke('roles.create', { name: 'editor', agent: { adapter: 'scripted' } });
    const invitation = await erin.invoke('connections.invite', { roles: ['writer'] });
    expect(decodeInvite(invitation.code)).toMatchObject({ v: 3, dht: network.dht.key });

    const accepted = await frank.invoke('connections.accept', { code: keyOnly(invitation.code), roles: ['editor'] });
    expect(accepted).toMatchObject({ name: 'erin', address: null, dhtKey: network.dht.key, path: 'holepunched' });
    await erin.waitFor(
      async () =>
        (await erin.invoke('connections.list', {})).find(
          (c) => c.name === 'frank' && c.online && c.path === 'holepunched' && c.peerRoles.length === 1,
        ),
      'erin to see frank over the DHT',
    );

    const [editor] = await frank.invoke('roles.list', {});
    const conversation = await frank.invoke('conversations.open', { roleId: editor!.id });
    await frank.invoke('conversations.send', { id: conversation.id, text: 'ask erin/writer: by key alone?' });
    await frank.waitFor(
      async () =>
        (await frank.invoke('conversations.get', { id: conversation.id })).messages.some(
          (m) => m.body === 'erin/writer says: answer from writer: by key alone?',
        ),
      'the answer over the DHT',
      30_000,
    );

    // erin quits and starts again, and they are back. By now her reach frame has told frank
    // her loopback address too, so either path may win the race here; the key stays known.
    const dataDir = erin.dataDir;
    expect(await erin.quit()).toBe(0);
    started.splice(started.indexOf(erin), 1);
    await frank.waitFor(
      async () => (await frank.invoke('connections.list', {})).find((c) => c.name === 'erin' && !c.online),
      'frank to see erin gone',
    );
    const again = await desktop('erin', dataDir);
    expect((await again.invoke('network.get', {})).dht.key).toBe(network.dht.key);
    const back = await frank.waitFor(
      async () => (await frank.invoke('connections.list', {})).find((c) => c.name === 'erin' && c.online),
      'frank to find erin again',
    );
    expect(back.dhtKey).toBe(network.dht.key);
  });
});
