// Faults on the wire: a loopback proxy between two installations that cuts the
// connection at random while 10,000 texts cross it over 100 agent conversations.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureRun, type RunRow } from '../store/queries/runs';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer } from '../../test-support/network';
import { decodeInvite, encodeInvite } from './invitation';

/** Forwards TCP to a target and, when told, cuts every connection it carries. */
async function cuttingProxy(targetPort: number) {
  const pairs = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(client);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    pairs.add(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let cuts = 0;
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      if (pairs.size > 0) cuts++;
      for (const socket of pairs) socket.destroy();
    },
    get cuts() {
      return cuts;
    },
    /** Stops listening and ends what it carries (server.close alone waits for open links). */
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of pairs) socket.destroy();
      }),
  };
}

describe('faults on the wire', () => {
  const open: TestInstallation[] = [];
  afterEach(async () => {
    for (const t of open.splice(0)) await t.close();
  });

  it('loses, repeats and reorders nothing when a proxy cuts the link at random during 10,000 texts over 100 agent conversations', async () => {
    const THREADS = 100;
    const PER_THREAD = 100;
    // bob takes the texts in without running agents; alice dials through the proxy and
    // does not listen, so every byte between them crosses it.
    const bob = await openPeer('bob', { startTurns: false });
    const alice = await openPeer('alice', {
      peerPort: undefined,
      startTurns: false,
      textBudgetPerHour: 1000,
      reconnect: { minMs: 10, maxMs: 200 },
    });
    open.push(bob, alice);
    await bob.owner('roles.create', { name: 'sink', agent: { adapter: 'scripted' } });
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const proxy = await cuttingProxy(Number(bob.installation.peerAddress!.split(':')[1]));
    const { code } = await bob.owner('connections.invite', { roles: ['sink'] });
    const viaProxy = encodeInvite({ ...decodeInvite(code), address: `127.0.0.1:${proxy.port}` });
    const connection = await alice.owner('connections.accept', { code: viaProxy.code });
    await alice.owner('connections.setQueueLimit', { id: connection.id, limit: THREADS * PER_THREAD });
    const [bobsSide] = await bob.owner('connections.list', {});
    await bob.owner('connections.setQueueLimit', { id: bobsSide!.id, limit: THREADS * PER_THREAD });
    await alice.waitFor(
      async () => (await alice.owner('connections.list', {}))[0]!.peerRoles.length === 1,
      'bob’s roles',
    );

    // A hundred roots: one task each, as a hundred runs would send.
    const runs: RunRow[] = [];
    for (let i = 0; i < THREADS; i++) {
      const task = await alice.owner('tasks.create', { roleId: assistant.id, title: `topic ${i}` });
      runs.push(ensureRun(alice.installation.db, { kind: 'task', id: task.id }, assistant.id));
    }
    const engine = alice.installation.engine;
    const sends: Array<Promise<unknown>> = [];
    for (let n = 1; n <= PER_THREAD; n++)
      for (const run of runs) sends.push(engine.sendAs(run, assistant, 'bob/sink', `text ${n}`));

    // Cut at random while anything is unacked; bounded in count and time.
    const deadline = Date.now() + 150_000;
    const unacked = () =>
      (
        alice.installation.db
          .prepare("SELECT count(*) AS n FROM texts WHERE direction = 'out' AND state != 'acked'")
          .get() as { n: number }
      ).n;
    await Promise.all(sends);
    while (unacked() > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 30 + Math.random() * 250));
      if (proxy.cuts < 40) proxy.cut();
      if (process.env.PARLEY_DEBUG)
        console.log(
          Date.now() % 100000,
          'unacked',
          unacked(),
          'cuts',
          proxy.cuts,
          alice.installation.engine.isOnline(connection.id),
        );
    }
    await proxy.close();
    expect(unacked()).toBe(0);
    expect(proxy.cuts).toBeGreaterThanOrEqual(5);

    // Every text arrived once, in order, per agent conversation.
    const received = bob.installation.db
      .prepare(
        `SELECT threads.wire_id AS thread, texts.seq, texts.body FROM texts JOIN threads ON threads.id = texts.thread_id
         WHERE texts.direction = 'in' ORDER BY texts.id`,
      )
      .all() as Array<{ thread: string; seq: number; body: string }>;
    expect(received).toHaveLength(THREADS * PER_THREAD);
    const byThread = new Map<string, number[]>();
    for (const row of received) {
      const seqs = byThread.get(row.thread) ?? [];
      seqs.push(row.seq);
      byThread.set(row.thread, seqs);
      expect(row.body).toBe(`text ${row.seq}`);
    }
    expect(byThread.size).toBe(THREADS);
    const inOrder = Array.from({ length: PER_THREAD }, (_, i) => i + 1);
    for (const seqs of byThread.values()) expect(seqs).toEqual(inOrder);
    // Nothing processed twice: each text is one request of its run (waiting as a text or
    // taken as an input), never two.
    const twice = bob.installation.db
      .prepare('SELECT text_id FROM inputs WHERE text_id IS NOT NULL GROUP BY text_id HAVING count(*) > 1')
      .all();
    expect(twice).toEqual([]);
    expect(bob.installation.db.pragma('integrity_check', { simple: true })).toBe('ok');
  }, 240_000);
});
