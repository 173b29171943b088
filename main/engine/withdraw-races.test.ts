// Withdrawing down a relay chain at the worst moments (DESIGN §12.6): while the middle
// hop's agent works on what its own ask ended with, and while the ask itself is still on
// a link the duplicate rule is replacing. Real installations over mutual TLS, each with
// real agent processes; a proxy of the test's (test-support/hold-proxy.ts) holds bytes
// where a race needs them held.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ThreadSummary } from '../../shared/domain';
import { getRoleByName } from '../store/queries/roles';
import { findRun } from '../store/queries/runs';
import { HoldProxy } from '../../test-support/hold-proxy';
import { makeDataDir, removeDataDir } from '../../test-support/data-folder';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, openPeersInIdOrder, pair } from '../../test-support/network';

const open: TestInstallation[] = [];
const proxies: HoldProxy[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const proxy of proxies.splice(0)) await proxy.close();
  for (const t of open.splice(0)) await t.close();
  for (const dir of dirs.splice(0)) removeDataDir(dir);
});

async function peer(name: string): Promise<TestInstallation> {
  const t = await openPeer(name);
  open.push(t);
  return t;
}

const noneRunning = (t: TestInstallation) =>
  t.waitFor(
    async () =>
      [
        ...(await t.owner('threads.list', { peerStarted: true })),
        ...(await t.owner('threads.list', { orphaned: true })),
      ].every((thread) => thread.run.state !== 'running'),
    'no agent running',
    30_000,
  );

/**
 * bob's researcher as a small program: asked in an agent conversation a peer started, it
 * relays the text to carol and ends its turn; woken by a notice (its ask ended
 * unanswered), it takes its time before answering.
 */
const RELAY_THEN_SLOW = `
const { execFileSync } = require('node:child_process');
let data = '';
process.stdin.on('data', (c) => (data += c)).on('end', () => {
  const turn = JSON.parse(data);
  const text = turn.inputs.find((i) => i.kind === 'text');
  if (text) {
    execFileSync('parley', ['send', '--to', 'carol/expert', text.body]);
    process.stdout.write('asked carol');
  } else setTimeout(() => process.stdout.write('carol could not say'), 60_000);
});`;

/**
 * bob's researcher as a small program that is slow to relay: it says it started (a file
 * beside MARKER), and only when told to stop (SIGTERM) tries to pass the question on to
 * carol, writing to MARKER whether `parley send` took it.
 */
const RELAY_WHEN_STOPPED = `
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const marker = process.argv[1];
let data = '';
process.stdin.on('data', (c) => (data += c)).on('end', () => {
  const text = JSON.parse(data).inputs.find((i) => i.kind === 'text');
  process.on('SIGTERM', () => {
    let said;
    try {
      execFileSync('parley', ['send', '--to', 'carol/expert', text.body], { stdio: ['ignore', 'pipe', 'pipe'] });
      said = 'sent';
    } catch (error) {
      said = 'refused: ' + String(error.stderr);
    }
    fs.writeFileSync(marker, said);
    process.exit(0);
  });
  fs.writeFileSync(marker + '.started', '');
  setInterval(() => {}, 1000);
});`;

describe('withdraw while the middle hop is relaying', { timeout: 120_000 }, () => {
  it('bob’s agent tries to pass the question on as its turn is stopped: refused, and carol never hears of it', async () => {
    const dir = makeDataDir('parley-withdraw-races-');
    dirs.push(dir);
    const marker = path.join(dir, 'relay');
    const alice = await peer('alice');
    const bob = await peer('bob');
    const carol = await peer('carol');
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await bob.owner('roles.create', {
      name: 'researcher',
      agent: { adapter: 'command', command: [process.execPath, '-e', RELAY_WHEN_STOPPED, marker], input: 'json' },
    });
    await carol.owner('roles.create', { name: 'expert', agent: { adapter: 'scripted' } });
    await pair(bob, alice, { inviter: ['researcher'] });
    await pair(carol, bob, { inviter: ['expert'] });
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: numbers?' });
    const fromAlice = await bob.waitFor(
      async () => (await bob.owner('threads.list', { peerStarted: true })).find((t) => t.run.state === 'running'),
      'bob’s agent to work',
      30_000,
    );
    await bob.waitFor(() => existsSync(`${marker}.started`), 'bob’s agent to have the question');
    const [mine] = await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } });

    await alice.owner('threads.withdraw', { id: mine!.id });
    await bob.waitFor(() => existsSync(marker), 'bob’s agent to try to relay as it stops', 30_000);
    expect(readFileSync(marker, 'utf8')).toMatch(/^refused: /);
    const detail = await bob.waitFor(async () => {
      const now = await bob.owner('threads.get', { id: fromAlice.id });
      return now.turns[0]?.status !== 'running' ? now : undefined;
    }, 'bob’s turn to end');
    expect(detail.turns.map((t) => [t.status, t.reason])).toEqual([['stopped', 'Withdrawn by alice']]);
    // No ask of bob's under alice's agent conversation, and nothing reached carol.
    const under = await bob.owner('threads.list', { root: { kind: 'thread', id: fromAlice.id } });
    expect(under.filter((t) => t.startedBy === 'local')).toEqual([]);
    expect(await carol.owner('threads.list', { peerStarted: true })).toEqual([]);
    await alice.waitFor(
      async () => (await alice.owner('threads.get', { id: mine!.id })).thread.withdrawn?.told,
      'bob to note the withdrawal',
    );
    for (const t of [alice, bob]) await noneRunning(t);
    // A send the role API checked while the turn still ran reaches its commit after the stop: it goes nowhere.
    const run = findRun(bob.installation.db, { kind: 'thread', id: fromAlice.id })!;
    const researcher = getRoleByName(bob.installation.db, 'researcher')!;
    await expect(
      bob.installation.engine.sendAs(run, researcher, 'carol/expert', 'numbers?', detail.turns[0]!.id),
    ).rejects.toMatchObject({ code: 'invalid' });
    expect(await carol.owner('threads.list', { peerStarted: true })).toEqual([]);
  });
});

describe('withdraw when the second hop already ended', { timeout: 120_000 }, () => {
  it('carol stopped, bob’s agent is at work on that news, alice withdraws: bob stops, and carol’s stop stays a stop', async () => {
    const alice = await peer('alice');
    const bob = await peer('bob');
    const carol = await peer('carol');
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await bob.owner('roles.create', {
      name: 'researcher',
      agent: { adapter: 'command', command: [process.execPath, '-e', RELAY_THEN_SLOW], input: 'json' },
    });
    await carol.owner('roles.create', { name: 'expert', agent: { adapter: 'scripted' } });
    await pair(bob, alice, { inviter: ['researcher'] });
    await pair(carol, bob, { inviter: ['expert'] });
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: sleep 60' });
    const atCarol = await carol.waitFor(
      async () => (await carol.owner('threads.list', { peerStarted: true })).find((t) => t.run.state === 'running'),
      'carol’s expert to work on what bob relayed',
      30_000,
    );
    const [mine] = await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } });

    // carol's person stops her agent: bob's ask to carol ended, and bob's agent is told.
    await carol.owner('threads.stop', { id: atCarol.id });
    const [fromAlice] = await bob.owner('threads.list', { peerStarted: true });
    const toCarol = async () =>
      (await bob.owner('threads.list', { root: { kind: 'thread', id: fromAlice!.id } })).find(
        (t) => t.startedBy === 'local',
      )!;
    await bob.waitFor(async () => (await toCarol()).peerTurn?.state === 'stopped', 'bob to hear carol stopped');
    await bob.waitFor(async () => {
      const { turns } = await bob.owner('threads.get', { id: fromAlice!.id });
      return turns.length === 2 && turns[1]!.status === 'running';
    }, 'bob’s agent to work on the notice');

    await alice.owner('threads.withdraw', { id: mine!.id });
    const stopped = await bob.waitFor(async () => {
      const detail = await bob.owner('threads.get', { id: fromAlice!.id });
      return detail.turns.at(-1)?.status === 'stopped' ? detail : undefined;
    }, 'bob’s notice turn to be stopped by the withdrawal');
    expect(stopped.turns.at(-1)?.reason).toBe('Withdrawn by alice');
    await alice.waitFor(
      async () => (await alice.owner('threads.get', { id: mine!.id })).thread.withdrawn?.told,
      'bob to note the withdrawal',
    );
    // bob's ask to carol had ended already: it stays stopped by carol, nothing is withdrawn there.
    expect((await toCarol()).withdrawn).toBeNull();
    expect((await toCarol()).peerTurn?.state).toBe('stopped');
    const atCarolNow = await carol.owner('threads.get', { id: atCarol.id });
    expect(atCarolNow.thread.withdrawn).toBeNull();
    expect(atCarolNow.turns.map((t) => t.status)).toEqual(['stopped']);
    for (const t of [alice, bob, carol]) await noneRunning(t);
    // And alice hears no answer: she took the question back.
    expect((await alice.owner('threads.get', { id: mine!.id })).texts.map((t) => t.direction)).toEqual(['out']);
  });
});

describe('withdraw while the ask is on a link being replaced', { timeout: 90_000 }, () => {
  it('the withdrawal comes by the new link, the text late by the old one: bob never works on it', async () => {
    // alice's ID is the smaller, so the link alice dials wins the duplicate rule at both ends.
    const [alice, bob] = await openPeersInIdOrder('alice', 'bob');
    open.push(alice, bob);
    expect(alice.installation.id < bob.installation.id).toBe(true);
    const atAlice = await HoldProxy.start(alice.installation.peerAddress!);
    const atBob = await HoldProxy.start(bob.installation.peerAddress!);
    proxies.push(atAlice, atBob);
    alice.installation.engine.setAddress(atAlice.address);
    bob.installation.engine.setAddress(atBob.address);
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    await pair(bob, alice, { inviter: ['researcher'] });
    const online = async (t: TestInstallation) => (await t.owner('connections.list', {}))[0]?.online === true;

    // One link, dialled by bob: alice cannot reach him for now.
    atBob.refuse(true);
    const before = atAlice.accepted;
    atAlice.cut();
    atBob.cut();
    await bob.waitFor(
      async () => atAlice.accepted > before && atAlice.connections === 1 && (await online(bob)),
      'bob’s new link to alice',
    );
    await alice.waitFor(() => online(alice), 'alice to see bob’s link');

    // alice's ask goes on that link and stays in the proxy, on its way to bob.
    atAlice.hold('toDialler');
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: sleep 60' });
    const mine = await alice.waitFor(
      async () =>
        (await alice.owner('threads.list', { root: { kind: 'conversation', id: conversation.id } })).find(
          (t) => t.counts.sent === 1,
        ),
      'alice’s ask on the wire',
    );
    await atAlice.waitFor(() => atAlice.heldBytes('toDialler') > 0, 'the text held on bob’s link');

    // alice loses that link (bob does not notice), withdraws while she cannot reach bob, then reaches him.
    atAlice.sever('target');
    await alice.waitFor(async () => !(await online(alice)), 'alice to see her link gone');
    await alice.owner('threads.withdraw', { id: mine.id });
    atBob.refuse(false);
    await alice.waitFor(
      async () => (await alice.owner('threads.get', { id: mine.id })).thread.withdrawn?.told,
      'bob to note the withdrawal on alice’s new link',
    );
    // Only now does the old link deliver the text.
    atAlice.release('toDialler');
    await bob.waitFor(() => atAlice.connections === 0, 'bob’s old link to be gone');

    const atBobThreads: ThreadSummary[] = await bob.owner('threads.list', { peerStarted: true });
    expect(atBobThreads.flatMap((t) => (t.lastText ? [t.lastText.body] : []))).toEqual([]);
    await noneRunning(bob);
    const detail = await alice.owner('threads.get', { id: mine.id });
    expect(detail.texts.map((t) => [t.state, t.reason])).toEqual([['failed', 'withdrawn']]);
    expect(await bob.owner('connections.list', {})).toMatchObject([{ online: true }]);
  });
});
