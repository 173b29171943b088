// The wire peer's `send` tells acked texts from failed ones: it learns that a text settled
// from its agent conversation's counts, and must not take a failed one for acked.
import { afterEach, describe, expect, it } from 'vitest';
import { makeDataDir, removeDataDir } from './data-folder';
import { startWirePeer, type WirePeer } from './wire-peer';

const peers: WirePeer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(peers.splice(0).map((peer) => peer.kill()));
  for (const dir of dirs.splice(0)) removeDataDir(dir);
});

async function peer(name: string): Promise<WirePeer> {
  const dataDir = makeDataDir(`parley-wire-peer-${name}-`);
  dirs.push(dataDir);
  const started = await startWirePeer({ dataDir, name });
  peers.push(started);
  return started;
}

interface SendStats {
  sent: number;
  acked: number;
  failed: number;
}

describe('the wire peer driver', () => {
  it('counts the texts a pause failed as failed, and the ones before them as acked', async () => {
    const [alice, bob] = await Promise.all([peer('alice'), peer('bob')]);
    const { code } = await bob.request<{ code: string }>('invite', { roles: ['sink'] });
    await alice.request('accept', { code, roles: [] });
    await alice.request('prepare', { threads: 1, to: 'bob/sink', role: 'source' });
    const first = await alice.request<SendStats>('send', { threads: 1, perThread: 2 });
    expect(first).toMatchObject({ sent: 2, acked: 2, failed: 0 });
    // What a benchmark reads around a measurement: the process's CPU alone, never less than before.
    const { cpuMs } = await alice.request<{ cpuMs: number }>('cpu');
    expect(cpuMs).toBeGreaterThan(0);
    expect((await alice.request<{ cpuMs: number }>('stats')).cpuMs).toBeGreaterThanOrEqual(cpuMs);
    // bob gone, three more are committed and wait on the wire or behind it; a pause fails them.
    await bob.kill();
    const sending = alice.request<SendStats>('send', { threads: 1, perThread: 5, window: 3, concurrency: 3 });
    while ((await alice.request<SendStats>('progress')).sent < 3);
    const [connection] = (
      await alice.request<{ result: Array<{ id: number }> }>('call', { method: 'connections.list', params: {} })
    ).result;
    await alice.request('call', { method: 'connections.pause', params: { id: connection!.id } });
    expect(await sending).toMatchObject({ sent: 3, acked: 0, failed: 3 });
  });
});
