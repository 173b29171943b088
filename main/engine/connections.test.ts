// Connections over time: restarts, reconnects, races, limits and invitations.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureRun } from '../store/queries/runs';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import { newThreadId, RawPeer, standInIdentity } from '../../test-support/raw-peer';
import { loadOrCreateIdentity } from './identity';
import { decodeInvite, encodeInvite } from './invitation';
import type { EngineCore } from './engine-core';
import type { LinkManager } from './links';
import type { PeerLink } from './peer-link';

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});
async function peer(name: string, options: Parameters<typeof openPeer>[1] = {}) {
  const t = await openPeer(name, options);
  open.push(t);
  return t;
}
/** Closes and reopens an installation on the same data folder and port. */
async function restart(t: TestInstallation, whileDown?: () => Promise<void>) {
  const port = Number(t.installation.peerAddress!.split(':')[1]);
  open.splice(open.indexOf(t), 1);
  const again = await t.restart({ peerPort: port }, whileDown);
  open.push(again);
  return again;
}

async function setup(options: Parameters<typeof openPeer>[1] = {}) {
  const alice = await peer('alice', options);
  const bob = await peer('bob', options);
  const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
  await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
  const ids = await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
  const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
  return { alice, bob, assistant, conversation, ...ids };
}

const partsOf = (t: TestInstallation) => t.installation.engine as unknown as { core: EngineCore; links: LinkManager };
const linkOf = (t: TestInstallation, id: number): PeerLink | undefined => partsOf(t).core.open.get(id)?.link;

describe('connections', () => {
  it('keeps a text sent while the peer is down and delivers it when the peer is back, after a restart of the sender too', async () => {
    const setupResult = await setup();
    const { bob, conversation } = setupResult;
    let { alice } = setupResult;
    await restart(bob, async () => {
      await alice.waitFor(async () => !(await alice.owner('connections.list', {}))[0]!.online, 'bob offline');
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: are you back?' });
      await alice.waitFor(async () => {
        const [t] = await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } });
        return t?.counts.queued === 1;
      }, 'the queued text');
      // The sender restarts as well: the queued text is in its database, not its memory.
      alice = await restart(alice);
    });
    const answer = await alice.waitFor(async () => {
      const { messages } = await alice.owner('conversations.get', { id: conversation.id });
      return messages.find((m) => m.body.startsWith('bob/researcher says'))?.body;
    }, 'the answer after the restart');
    expect(answer).toBe('bob/researcher says: answer from researcher: are you back?');
  });

  it('keeps one link per peer when both dial at once: the one dialled by the smaller installation ID', async () => {
    const { alice, bob, acceptorConnectionId, inviterConnectionId } = await setup();
    const smaller = [alice.installation.id, bob.installation.id].sort()[0]!;
    const larger = smaller === alice.installation.id ? bob : alice;
    const largerConnection = larger === alice ? acceptorConnectionId : inviterConnectionId;
    const first = linkOf(larger, largerConnection)!;
    // Make the side that dialled second dial again while the first link is up: a race.
    const dialler = first.dialledBy === smaller ? larger : larger === alice ? bob : alice;
    const diallerConnection = dialler === alice ? acceptorConnectionId : inviterConnectionId;
    const links = partsOf(dialler).links;
    const isOnline = links.isOnline.bind(links);
    links.isOnline = () => false;
    await links.dial(diallerConnection, { dialling: false });
    links.isOnline = isOnline;
    // Both sides settle on the same link: the one dialled by the smaller installation ID.
    for (const [t, id] of [
      [alice, acceptorConnectionId],
      [bob, inviterConnectionId],
    ] as const) {
      const link = await t.waitFor(() => {
        const l = linkOf(t, id);
        return l?.state === 'open' && l.dialledBy === smaller ? l : undefined;
      }, 'the surviving link');
      expect(link.dialledBy).toBe(smaller);
    }
    // The link dialled by the smaller ID was kept whether it came first or second.
    if (first.dialledBy === smaller) expect(linkOf(larger, largerConnection)).toBe(first);
    else expect(linkOf(larger, largerConnection)).not.toBe(first);
    expect(linkOf(alice, acceptorConnectionId)!.peer.fingerprint).toBe(bob.installation.id);
    // And the connection still carries texts.
    const { conversation } = { conversation: (await alice.owner('conversations.list', {}))[0]! };
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: still one link?' });
    await alice.waitFor(async () => {
      const { messages } = await alice.owner('conversations.get', { id: conversation.id });
      return messages.some((m) => m.body.startsWith('bob/researcher says'));
    }, 'the answer');
  });

  it('refuses a send over the connection’s queue limit at once, with its own error', async () => {
    const { alice, bob, assistant, acceptorConnectionId } = await setup();
    await alice.owner('connections.setQueueLimit', { id: acceptorConnectionId, limit: 2 });
    open.splice(open.indexOf(bob), 1);
    await bob.close();
    await alice.waitFor(async () => !(await alice.owner('connections.list', {}))[0]!.online, 'bob offline');
    // Three different roots, as three tasks' runs would send.
    const runs = [];
    for (let i = 0; i < 3; i++) {
      const task = await alice.owner('tasks.create', { roleId: assistant.id, title: `t${i}` });
      runs.push(ensureRun(alice.installation.db, { kind: 'task', id: task.id }, assistant.id));
    }
    const engine = alice.installation.engine;
    await engine.sendAs(runs[0]!, assistant, 'bob/researcher', 'one');
    await engine.sendAs(runs[1]!, assistant, 'bob/researcher', 'two');
    await expect(engine.sendAs(runs[2]!, assistant, 'bob/researcher', 'three')).rejects.toMatchObject({
      code: 'queue_full',
      message: "bob's queue is full (2 texts waiting to be delivered); try again later",
    });
    const [connection] = await alice.owner('connections.list', {});
    expect(connection!.queue).toEqual({ used: 2, limit: 2 });
  });

  it('refuses more than the hourly budget of texts in one agent conversation', async () => {
    const { alice, assistant } = await setup({ textBudgetPerHour: 3 });
    const task = await alice.owner('tasks.create', { roleId: assistant.id, title: 'chatty' });
    const run = ensureRun(alice.installation.db, { kind: 'task', id: task.id }, assistant.id);
    for (let i = 0; i < 3; i++) await alice.installation.engine.sendAs(run, assistant, 'bob/researcher', `n${i}`);
    await expect(
      alice.installation.engine.sendAs(run, assistant, 'bob/researcher', 'one too many'),
    ).rejects.toMatchObject({
      code: 'budget',
    });
    // Another topic has its own budget.
    const other = await alice.owner('tasks.create', { roleId: assistant.id, title: 'quiet' });
    const otherRun = ensureRun(alice.installation.db, { kind: 'task', id: other.id }, assistant.id);
    await expect(alice.installation.engine.sendAs(otherRun, assistant, 'bob/researcher', 'hi')).resolves.toMatchObject({
      seq: 1,
    });
  });

  it('refuses a role the peer does not expose, and learns at once when the peer changes what it exposes', async () => {
    const { alice, bob, assistant, inviterConnectionId } = await setup();
    const task = await alice.owner('tasks.create', { roleId: assistant.id, title: 'x' });
    const run = ensureRun(alice.installation.db, { kind: 'task', id: task.id }, assistant.id);
    await expect(alice.installation.engine.sendAs(run, assistant, 'bob/private', 'hi')).rejects.toMatchObject({
      code: 'not_exposed',
    });
    await bob.owner('connections.expose', { id: inviterConnectionId, roles: [] });
    await alice.waitFor(
      async () => (await alice.owner('connections.list', {}))[0]!.peerRoles.length === 0,
      'the new roles',
    );
    await expect(alice.installation.engine.sendAs(run, assistant, 'bob/researcher', 'hi')).rejects.toMatchObject({
      code: 'not_exposed',
    });
  });

  it('lists everything between a role and a peer role across threads with `history`', async () => {
    const { alice, assistant, conversation } = await setup();
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: one' });
    await alice.waitFor(async () => {
      const { messages } = await alice.owner('conversations.get', { id: conversation.id });
      return messages.some((m) => m.body.includes('says: answer from researcher: one'));
    }, 'the first answer');
    const task = await alice.owner('tasks.create', { roleId: assistant.id, title: 'x' });
    await alice.installation.engine.sendAs(
      ensureRun(alice.installation.db, { kind: 'task', id: task.id }, assistant.id),
      assistant,
      'bob/researcher',
      'two',
    );
    const history = (await alice.installation.engine.history(assistant, 'bob/researcher')) as Array<{
      thread: string;
      direction: string;
      body: string;
    }>;
    expect(history.map((h) => [h.direction, h.body])).toEqual([
      ['out', 'one'],
      ['in', 'answer from researcher: one'],
      ['out', 'two'],
    ]);
    expect(new Set(history.map((h) => h.thread)).size).toBe(2);
  });

  it('accepts an invitation once, refuses it when expired, forged or already used', async () => {
    const alice = await peer('alice');
    const bob = await peer('bob');
    const carol = await peer('carol');
    const { code, link } = await bob.owner('connections.invite', {});
    expect(link).toBe(`parley://invite/${code}`);
    expect(decodeInvite(link)).toMatchObject({
      name: 'bob',
      fingerprint: bob.installation.id,
      address: bob.installation.peerAddress,
    });
    await alice.owner('connections.accept', { code: link });
    await expect(carol.owner('connections.accept', { code })).rejects.toMatchObject({
      code: 'invalid',
      message: expect.stringContaining('refused the invitation') as unknown,
    });
    await expect(
      alice.owner('connections.accept', { code: (await bob.owner('connections.invite', {})).code }),
    ).rejects.toMatchObject({
      message: 'you are already connected to bob',
    });
    const expired = encodeInvite({ ...decodeInvite(code), expires: new Date(Date.now() - 1000).toISOString() });
    await expect(carol.owner('connections.accept', { code: expired.code })).rejects.toMatchObject({
      code: 'invalid',
      message: 'this invitation has expired; ask for a new one',
    });
    const forged = encodeInvite({
      ...decodeInvite(code),
      secret: 'f'.repeat(32),
      expires: new Date(Date.now() + 60_000).toISOString(),
    });
    await expect(carol.owner('connections.accept', { code: forged.code })).rejects.toMatchObject({ code: 'invalid' });
    await expect(carol.owner('connections.accept', { code: 'garbage-garbage' })).rejects.toMatchObject({
      code: 'invalid',
      message: 'this is not a Parley invitation code',
    });
    expect(await carol.owner('connections.list', {})).toEqual([]);
    expect((await bob.owner('connections.list', {})).map((c) => c.name)).toEqual(['alice']);
  });
});

describe('owners’ control of a connection', () => {
  it('refuses to pause or unpause a revoked connection, with the code revoked', async () => {
    const { alice, acceptorConnectionId } = await setup();
    await alice.owner('connections.revoke', { id: acceptorConnectionId });
    for (const method of ['connections.unpause', 'connections.pause'] as const)
      await expect(alice.owner(method, { id: acceptorConnectionId })).rejects.toMatchObject({
        code: 'revoked',
        message: 'the connection to bob was revoked',
      });
    expect((await alice.owner('connections.list', {}))[0]!.status).toBe('revoked');
  });

  it('tells the side that was revoked that the peer revoked it, not that it did', async () => {
    const { alice, bob, acceptorConnectionId } = await setup();
    await bob.waitFor(async () => (await bob.owner('connections.list', {}))[0]!.online, 'the link');
    await alice.owner('connections.revoke', { id: acceptorConnectionId });
    await bob.waitFor(
      async () => (await bob.owner('connections.list', {}))[0]!.status === 'revoked',
      'bob to learn of the revoke',
    );
    // bob invites alice again; alice, who revoked, says so; bob, revoked, hears alice did it.
    const fromBob = await bob.owner('connections.invite', {});
    await expect(alice.owner('connections.accept', { code: fromBob.code })).rejects.toMatchObject({
      code: 'revoked',
      message: 'you revoked bob; a revoked peer cannot be paired again',
    });
    const fromAlice = await alice.owner('connections.invite', {});
    await expect(bob.owner('connections.accept', { code: fromAlice.code })).rejects.toMatchObject({
      code: 'revoked',
      message: 'alice revoked this connection; a revoked peer cannot be paired again',
    });
  });
});

describe('what a peer says about itself', () => {
  it('cleans the name a peer announces: no bidi or control characters, capped, always with its fingerprint', async () => {
    const alice = await peer('alice');
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-names-'));
    try {
      const cases = [
        ['bob\u200F smith\u0000', /^bob-smith$/],
        ['x'.repeat(80), /^x{40}$/],
        ['\u2066\u0001', /^peer$/],
      ] as const;
      for (const [i, [name, expected]] of cases.entries()) {
        const identity = await loadOrCreateIdentity(path.join(dir, String(i)), 'stranger');
        const { code } = await alice.owner('connections.invite', { roles: ['assistant'] });
        const raw = await RawPeer.dial(identity, alice.installation.peerAddress!, alice.installation.id, {
          type: 'hello',
          protocol: 2,
          name,
          address: null,
          invitation: decodeInvite(code).secret,
        });
        await raw.next('roles');
        raw.close();
        const connection = (await alice.owner('connections.list', {})).find(
          (c) => c.fingerprint === identity.fingerprint,
        )!;
        expect(connection.name).toMatch(expected);
        // eslint-disable-next-line no-control-regex
        expect(connection.name).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
      }
      // An agent conversation names its connection with the fingerprint beside it.
      const identity = await loadOrCreateIdentity(path.join(dir, 'talker'), 'stranger');
      const { code } = await alice.owner('connections.invite', { roles: ['assistant'] });
      const raw = await RawPeer.dial(identity, alice.installation.peerAddress!, alice.installation.id, {
        type: 'hello',
        protocol: 2,
        name: 'talker',
        address: null,
        invitation: decodeInvite(code).secret,
      });
      await raw.next('roles');
      raw.send({ type: 'text', thread: newThreadId(), seq: 1, from: 'someone', to: assistant.name, body: 'hi' });
      await raw.next('ack');
      raw.close();
      const [thread] = await alice.owner('threads.list', { peerStarted: true });
      expect(thread!.connection).toMatchObject({ fingerprint: identity.fingerprint, name: 'talker' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes an address a peer announces only when it is one, shows where it came from, and keeps the backoff across the peer’s own links', async () => {
    // alice redials slowly, so nothing but the peer's own links happen during the test.
    const alice = await peer('alice', { reconnect: { minMs: 600_000, maxMs: 3_600_000 } });
    await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const { code } = await alice.owner('connections.invite', { roles: ['assistant'] });
    const bob = await standInIdentity('bob', code, { roles: ['researcher'], exposes: ['researcher'] });
    const [before] = await alice.owner('connections.list', {});
    expect(before!.addressFrom).toBe('peer');
    const announce = async (address: string | null) => {
      const raw = await RawPeer.dial(bob.identity, alice.installation.peerAddress!, alice.installation.id, {
        type: 'hello',
        protocol: 2,
        name: 'bob',
        address,
      });
      await raw.next('roles');
      raw.close();
      await alice.waitFor(async () => !(await alice.owner('connections.list', {}))[0]!.online, 'bob offline');
      return (await alice.owner('connections.list', {}))[0]!;
    };
    for (const bad of ['0.0.0.0:4000', '[::]:4000', '224.0.0.1:4000', 'evil host:80', 'example.com:0', 'a:99999'])
      expect(await announce(bad)).toMatchObject({
        address: before!.address,
        lastError: expect.stringContaining(`ignored the address bob announced`) as unknown,
      });
    const attempts: number[] = [];
    for (let i = 0; i < 4; i++) {
      const seen = await announce(`127.0.0.1:${40_000 + i}`);
      expect(seen).toMatchObject({ address: `127.0.0.1:${40_000 + i}`, addressFrom: 'peer' });
      attempts.push(seen.redial!.attempt);
    }
    // The links bob opened and dropped did not make alice dial what bob named any sooner:
    // her backoff was not reset by them (only a dial of hers that works resets it).
    expect(attempts[0]).toBeGreaterThanOrEqual(1);
    expect(attempts).toEqual(attempts.map(() => attempts[0]));
  });
});
