// The wire as a peer sees it: a hand-driven client with a real, paired identity
// talks to a real installation and checks each rule of protocol 2.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getRoleByName } from '../store/queries/roles';
import { ensureRun } from '../store/queries/runs';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import { RawPeer } from '../../test-support/raw-peer';
import { loadOrCreateIdentity, type Identity } from './identity';
import { dialPeer, FingerprintMismatch, listenForPeers } from './transport';
import { CloseCode, MAX_FRAME_BYTES } from './wire';

describe('wire protocol 2', () => {
  let bob: TestInstallation;
  let mallory: TestInstallation;
  let malloryIdentity: Identity;
  let bobsConnection: number;
  const dirs: string[] = [];

  beforeAll(async () => {
    bob = await openPeer('bob');
    await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    await bob.owner('roles.create', { name: 'private', agent: { adapter: 'scripted' } });
    mallory = await openPeer('mallory');
    await mallory.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const ids = await pair(bob, mallory, { inviter: ['researcher'], acceptor: ['assistant'] });
    bobsConnection = ids.inviterConnectionId;
    malloryIdentity = mallory.installation.identity;
    // From here on we speak for mallory by hand.
    await mallory.close();
    await bob.waitFor(async () => !(await bob.owner('connections.list', {}))[0]!.online, 'mallory offline');
  });
  afterAll(async () => {
    await bob.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const peers: RawPeer[] = [];
  afterEach(() => {
    for (const p of peers.splice(0)) p.ws.terminate();
  });

  async function connect(
    identity = malloryIdentity,
    hello: object = { type: 'hello', protocol: 2, name: 'mallory', address: null },
  ) {
    const { ws, socket } = await dialPeer(
      identity,
      bob.installation.peerAddress!,
      bob.installation.identity.fingerprint,
    );
    const raw = new RawPeer(ws, socket);
    peers.push(raw);
    raw.send(hello);
    return raw;
  }

  async function connected() {
    const raw = await connect();
    await raw.next('hello');
    await raw.next('roles');
    return raw;
  }

  const newThread = () => randomBytes(16).toString('base64url');
  const text = (thread: string, seq: number, body = 'hello', from = 'assistant', to = 'researcher') =>
    ({ type: 'text', thread, seq, from, to, body }) as const;

  it('answers hello with hello and the roles exposed to that peer, nothing about roots', async () => {
    const raw = await connect();
    expect(await raw.next('hello')).toEqual({
      type: 'hello',
      protocol: 2,
      name: 'bob',
      address: bob.installation.peerAddress,
    });
    expect(await raw.next('roles')).toEqual({ type: 'roles', roles: [{ name: 'researcher', description: '' }] });
  });

  it('commits a text before acking it, starts a thread rooted in itself, and acks a repeat without processing it twice', async () => {
    const raw = await connected();
    const thread = newThread();
    raw.send(text(thread, 1, 'first'));
    expect(await raw.next('ack', (f) => f.thread === thread)).toEqual({ type: 'ack', thread, seq: 1 });
    const row = bob.installation.db
      .prepare('SELECT id, root_kind, root_id, started_by FROM threads WHERE wire_id = ?')
      .get(thread) as {
      id: number;
      root_kind: string;
      root_id: number;
      started_by: string;
    };
    expect(row).toMatchObject({ root_kind: 'thread', root_id: row.id, started_by: 'peer' });
    const count = () =>
      (
        bob.installation.db
          .prepare("SELECT count(*) AS n FROM texts WHERE thread_id = ? AND direction = 'in'")
          .get(row.id) as { n: number }
      ).n;
    expect(count()).toBe(1);
    const from = raw.frames.length;
    raw.send(text(thread, 1, 'first'));
    await raw.next('ack', (f) => f.thread === thread && f.seq === 1, from);
    expect(count()).toBe(1);
    const inputs = bob.installation.db
      .prepare("SELECT count(*) AS n FROM inputs WHERE kind = 'text' AND body = 'first'")
      .get() as { n: number };
    expect(inputs.n).toBe(1);
  });

  it('records acks that arrive together, a repeat among them, and sends each agent conversation its next text', async () => {
    const raw = await connected();
    const db = bob.installation.db;
    const researcher = getRoleByName(db, 'researcher')!;
    const role = { id: researcher.id, name: researcher.name };
    // Two tasks of bob's researcher, two texts each to mallory: the first of each goes out, the second waits.
    const runs = [];
    for (const title of ['left', 'right']) {
      const task = await bob.owner('tasks.create', { roleId: role.id, title });
      runs.push(ensureRun(db, { kind: 'task', id: task.id }, role.id));
    }
    for (const [i, run] of runs.entries())
      for (const n of [1, 2])
        await bob.installation.engine.sendAs(run, role, 'mallory/assistant', `task ${i} text ${n}`);
    const firsts = [
      await raw.next('text', (f) => f.body === 'task 0 text 1'),
      await raw.next('text', (f) => f.body === 'task 1 text 1'),
    ];
    const state = (body: string) =>
      (db.prepare("SELECT state FROM texts WHERE direction = 'out' AND body = ?").get(body) as { state: string }).state;
    expect(state('task 0 text 2')).toBe('queued');
    raw.sendTogether([
      { type: 'ack', thread: firsts[0]!.thread, seq: 1 },
      { type: 'ack', thread: firsts[1]!.thread, seq: 1 },
      { type: 'ack', thread: firsts[0]!.thread, seq: 1 },
    ]);
    const seconds = [
      await raw.next('text', (f) => f.body === 'task 0 text 2'),
      await raw.next('text', (f) => f.body === 'task 1 text 2'),
    ];
    expect(seconds.map((f) => [f.thread, f.seq])).toEqual(firsts.map((f) => [f.thread, 2]));
    expect(['task 0 text 1', 'task 1 text 1', 'task 0 text 2', 'task 1 text 2'].map(state)).toEqual([
      'acked',
      'acked',
      'sent',
      'sent',
    ]);
    raw.sendTogether(seconds.map((f) => ({ type: 'ack', thread: f.thread, seq: 2 })));
    await bob.waitFor(() => state('task 1 text 2') === 'acked' && state('task 0 text 2') === 'acked', 'both acked');
    // Nothing was sent twice.
    expect(raw.frames.filter((f) => f.type === 'text' && f.body.startsWith('task ')).length).toBe(4);
  });

  it('rejects a text whose roles do not match its thread with `roles`', async () => {
    const raw = await connected();
    const thread = newThread();
    raw.send(text(thread, 1));
    await raw.next('ack', (f) => f.thread === thread);
    raw.send(text(thread, 2, 'x', 'someone-else'));
    expect(await raw.next('reject', (f) => f.thread === thread)).toEqual({
      type: 'reject',
      thread,
      seq: 2,
      reason: 'roles',
    });
  });

  it('rejects a text to a role not exposed to that peer with `role`', async () => {
    const raw = await connected();
    const thread = newThread();
    raw.send(text(thread, 1, 'let me in', 'assistant', 'private'));
    expect(await raw.next('reject', (f) => f.thread === thread)).toEqual({
      type: 'reject',
      thread,
      seq: 1,
      reason: 'role',
    });
    expect(bob.installation.db.prepare('SELECT count(*) AS n FROM threads WHERE wire_id = ?').get(thread)).toEqual({
      n: 0,
    });
  });

  it('rejects text in a closed thread with `thread`', async () => {
    const raw = await connected();
    const thread = newThread();
    raw.send(text(thread, 1));
    await raw.next('ack', (f) => f.thread === thread);
    bob.installation.db
      .prepare("UPDATE threads SET status = 'closed', close_reason = 'test' WHERE wire_id = ?")
      .run(thread);
    raw.send(text(thread, 2));
    expect(await raw.next('reject', (f) => f.thread === thread)).toEqual({
      type: 'reject',
      thread,
      seq: 2,
      reason: 'thread',
    });
  });

  it('rejects with `queue` when too much waits unhandled for that peer', async () => {
    await bob.owner('connections.setQueueLimit', { id: bobsConnection, limit: 1 });
    try {
      bob.installation.db.prepare("UPDATE texts SET state = 'handled' WHERE direction = 'in'").run();
      const raw = await connected();
      const first = newThread();
      const second = newThread();
      raw.send(text(first, 1, 'sleep 5'));
      await raw.next('ack', (f) => f.thread === first);
      raw.send(text(second, 1, 'one more'));
      expect(await raw.next('reject', (f) => f.thread === second)).toEqual({
        type: 'reject',
        thread: second,
        seq: 1,
        reason: 'queue',
      });
    } finally {
      await bob.owner('connections.setQueueLimit', { id: bobsConnection, limit: 100 });
    }
  });

  it('rejects with `paused` while the owner has paused the connection', async () => {
    await bob.owner('connections.pause', { id: bobsConnection });
    try {
      const raw = await connected();
      const thread = newThread();
      raw.send(text(thread, 1));
      expect(await raw.next('reject', (f) => f.thread === thread)).toEqual({
        type: 'reject',
        thread,
        seq: 1,
        reason: 'paused',
      });
    } finally {
      await bob.owner('connections.unpause', { id: bobsConnection });
    }
  });

  it('refuses a peer speaking another protocol version, with a close reason that says so', async () => {
    for (const protocol of [1, 3]) {
      const raw = await connect(malloryIdentity, { type: 'hello', protocol, name: 'mallory', address: null });
      const closed = await raw.closedWith();
      expect(closed.code).toBe(CloseCode.wrongProtocol);
      expect(closed.reason).toContain('protocol 2');
      expect(raw.frames.find((f) => f.type === 'roles')).toBeUndefined();
    }
    const [connection] = await bob.owner('connections.list', {});
    expect(connection!.lastError).toMatch(
      /refused: the peer speaks protocol 3, and this Parley speaks only protocol 2/,
    );
  });

  it('closes with a protocol error on malformed, unknown or oversized frames, and on text before hello', async () => {
    const cases: Array<[string | object, number]> = [
      ['not json', CloseCode.protocolError],
      [{ type: 'gossip' }, CloseCode.protocolError],
      [
        { type: 'text', thread: newThread(), seq: 1, from: 'assistant', to: 'researcher', body: 'hi' },
        CloseCode.protocolError,
      ],
    ];
    for (const [frame, code] of cases) {
      const { ws, socket } = await dialPeer(
        malloryIdentity,
        bob.installation.peerAddress!,
        bob.installation.identity.fingerprint,
      );
      const raw = new RawPeer(ws, socket);
      peers.push(raw);
      raw.send(frame);
      expect((await raw.closedWith()).code).toBe(code);
    }
    const raw = await connected();
    raw.send({ ...text(newThread(), 1), extra: 'field' });
    expect((await raw.closedWith()).code).toBe(CloseCode.protocolError);
    const big = await connected();
    big.send(text(newThread(), 1, 'x'.repeat(MAX_FRAME_BYTES + 10)));
    expect((await big.closedWith()).code).toBe(CloseCode.tooBig);
  });

  it('refuses a certificate it does not know, unless it brings a valid invitation', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-stranger-'));
    dirs.push(dir);
    const stranger = await loadOrCreateIdentity(dir, 'stranger');
    const raw = await connect(stranger, { type: 'hello', protocol: 2, name: 'stranger', address: null });
    const closed = await raw.closedWith();
    expect(closed.code).toBe(CloseCode.badInvitation);
    const forged = await connect(stranger, {
      type: 'hello',
      protocol: 2,
      name: 'stranger',
      address: null,
      invitation: 'x'.repeat(32),
    });
    expect((await forged.closedWith()).code).toBe(CloseCode.badInvitation);
    expect(await bob.owner('connections.list', {})).toHaveLength(1);
  });

  it('does not talk to a peer whose certificate is not the pinned one', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-imposter-'));
    dirs.push(dir);
    const imposter = await loadOrCreateIdentity(dir, 'imposter');
    // Dialling bob while expecting someone else's fingerprint fails before any frame.
    await expect(dialPeer(imposter, bob.installation.peerAddress!, imposter.fingerprint)).rejects.toBeInstanceOf(
      FingerprintMismatch,
    );
  });

  it('says so on its own side when the peer it dials answers with another protocol version', async () => {
    // mallory's address is known to bob; answer bob's next dial there with protocol 3.
    const [connection] = await bob.owner('connections.list', {});
    const [host, port] = connection!.address!.split(':') as [string, string];
    const fake = await listenForPeers(malloryIdentity, host, Number(port), (ws) => {
      ws.once('message', () => ws.send(JSON.stringify({ type: 'hello', protocol: 3, name: 'mallory', address: null })));
    });
    try {
      const seen = await bob.waitFor(async () => {
        const [c] = await bob.owner('connections.list', {});
        return c?.lastError?.includes('protocol 3') ? c : undefined;
      }, 'bob to note the refusal');
      expect(seen.lastError).toBe(
        'refused: the peer speaks protocol 3, and this Parley speaks only protocol 2 ("thread"); both sides must run the same version',
      );
      expect(seen.online).toBe(false);
    } finally {
      await fake.close();
    }
  });

  it('takes a peer’s hello and the frames after it even when they arrive in one read', async () => {
    // A peer that batches its writes sends its hello and its roles together; bob, which
    // dialled, must not take the roles for a second, out-of-place frame.
    const [connection] = await bob.owner('connections.list', {});
    const [host, port] = connection!.address!.split(':') as [string, string];
    const fake = await listenForPeers(malloryIdentity, host, Number(port), (ws, _peer, socket) => {
      ws.once('message', () => {
        socket.cork();
        ws.send(JSON.stringify({ type: 'hello', protocol: 2, name: 'mallory', address: null }));
        ws.send(
          JSON.stringify({
            type: 'roles',
            roles: [
              { name: 'assistant', description: '' },
              { name: 'scribe', description: 'takes notes' },
            ],
          }),
        );
        socket.uncork();
      });
    });
    try {
      const seen = await bob.waitFor(async () => {
        const [c] = await bob.owner('connections.list', {});
        return c?.online && c.peerRoles.length === 2 ? c : undefined;
      }, 'bob to see mallory online with both her roles');
      expect(seen.peerRoles.map((role) => role.name)).toEqual(['assistant', 'scribe']);
      expect(seen.lastError).toBeNull();
    } finally {
      await fake.close();
    }
  });

  it('survives 10,000 fuzzed frames: the process stays up and the database passes integrity_check', async () => {
    const random = (n: number) => Math.floor(Math.random() * n);
    const pick = <T>(xs: T[]): T => xs[random(xs.length)]!;
    const junk = () =>
      pick<unknown>([
        null,
        42,
        'str',
        '',
        'x'.repeat(random(300)),
        -1,
        0,
        1.5,
        Number.MAX_SAFE_INTEGER + 10,
        [],
        {},
        { $: 1 },
        true,
        '../../etc',
        'a/b',
        '\u0000',
      ]);
    const fuzzFrame = (): string => {
      const base: Record<string, unknown> = pick([
        {
          type: 'text',
          thread: newThread(),
          seq: 1 + random(3),
          from: 'assistant',
          to: pick(['researcher', 'private', 'nope', 'nope', 'nope']),
          body: 'fuzz',
        },
        { type: 'ack', thread: newThread(), seq: 1 },
        { type: 'reject', thread: newThread(), seq: 1, reason: pick(['thread', 'roles', 'bogus']) },
        { type: 'roles', roles: [{ name: 'x', description: '' }] },
        { type: pick(['hello', 'revoke-not', 'text']) },
      ]);
      const keys = [...Object.keys(base), 'extra'];
      for (let i = random(3); i > 0; i--) base[pick(keys)] = junk();
      if (random(20) === 0) return JSON.stringify(base).slice(0, random(40));
      return JSON.stringify(base);
    };
    let sent = 0;
    let raw = await connected();
    while (sent < 10_000) {
      if (raw.closed || raw.ws.readyState !== raw.ws.OPEN) raw = await connected();
      // Bursts, then a well-formed text to check the other side still answers.
      for (let i = 0; i < 200 && sent < 10_000 && raw.ws.readyState === raw.ws.OPEN; i++, sent++) raw.send(fuzzFrame());
      if (raw.ws.readyState === raw.ws.OPEN)
        await new Promise<void>((resolve) => raw.ws.ping(undefined, undefined, () => resolve()));
    }
    const check = await connected();
    const thread = newThread();
    check.send(text(thread, 1, 'still alive?'));
    // It still answers: an ack, or `queue` when the fuzzing left too much waiting for its agents.
    const answer = await Promise.race([
      check.next('ack', (f) => f.thread === thread),
      check.next('reject', (f) => f.thread === thread),
    ]);
    expect(answer.type === 'ack' || (answer.type === 'reject' && answer.reason === 'queue')).toBe(true);
    expect(bob.installation.db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(bob.installation.db.pragma('foreign_key_check')).toEqual([]);
  }, 120_000);

  it('refuses a revoked peer’s certificate from then on', async () => {
    const raw = await connected();
    await bob.owner('connections.revoke', { id: bobsConnection });
    expect(await raw.next('revoke')).toEqual({ type: 'revoke' });
    expect((await raw.closedWith()).code).toBe(CloseCode.revoked);
    const again = await connect();
    const closed = await again.closedWith();
    expect(closed).toEqual({ code: CloseCode.revoked, reason: 'this connection was revoked' });
    expect(again.frames).toEqual([]);
  });
});
