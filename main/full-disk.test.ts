// A full disk: writes are refused with `disk_full` and a message that says so, nothing
// that was confirmed is lost, the process stays up, and everything works again by
// itself once there is space. alice's data folder lives on a small tmpfs this test
// mounts and fills; bob, her paired peer, keeps writing to her meanwhile.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../shared/api-contract';
import { agentPids } from '../test-support/processes';
import { askAcross, node, pairNodes, type ServeNode } from '../test-support/serve-network';
import { removeDataDir, startServe } from '../test-support/serve-process';

/** Mounts a tmpfs of `size` at a new folder; the reason when that is not allowed here. */
function mountTmpfs(size: string): { dir: string } | { reason: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: `cannot mount a tmpfs here (${String((error as { stderr?: Buffer }).stderr ?? error).trim()})` };
  }
}

/** Writes zeros into `file` until the disk refuses more; returns how many bytes it took. */
function fillDisk(file: string): number {
  const fd = openSync(file, 'w');
  let written = 0;
  try {
    for (const size of [1 << 20, 1 << 16, 1 << 12, 1 << 9, 1]) {
      const chunk = Buffer.alloc(size);
      for (;;) {
        try {
          written += writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}

const mount = mountTmpfs('24m');
if ('reason' in mount) console.warn(`full-disk tests skipped: ${mount.reason}`);

describe.skipIf('reason' in mount)('a full disk', () => {
  const disk = 'dir' in mount ? mount.dir : '';
  const dataDir = path.join(disk, 'alice');
  const filler = path.join(disk, 'filler');
  let alice: ServeNode;
  let bob: ServeNode;
  let aliceConversation: number;
  let bobConversation: number;
  /** Ids of alice's messages whose send was confirmed. */
  const confirmed: number[] = [];

  beforeAll(async () => {
    alice = await node(await startServe({ name: 'alice', dataDir }), 'alice');
    bob = await node(await startServe({ name: 'bob' }), 'bob');
    for (const n of [alice, bob])
      await n.api.call('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await pairNodes(alice, ['assistant'], bob, ['assistant']);
    const [aliceRole] = await alice.api.call('roles.list', {});
    const [bobRole] = await bob.api.call('roles.list', {});
    aliceConversation = (await alice.api.call('conversations.open', { roleId: aliceRole!.id })).id;
    bobConversation = (await bob.api.call('conversations.open', { roleId: bobRole!.id })).id;
  }, 60_000);

  afterAll(async () => {
    await alice?.serve.stop();
    await bob?.serve.stop();
    if (bob) removeDataDir(bob.serve.dataDir);
    try {
      execFileSync('umount', [disk]);
      rmSync(disk, { recursive: true, force: true });
    } catch (error) {
      console.warn(`could not unmount ${disk}: ${String(error)}`);
    }
  });

  const aliceMessages = async () =>
    (await alice.api.call('conversations.get', { id: aliceConversation, limit: 1000 })).messages;

  it('refuses writes with disk_full while the disk is full, loses nothing confirmed, and recovers by itself', async () => {
    // Confirmed before the disk fills: a message answered, a question from bob answered.
    const hello = await alice.api.call('conversations.send', { id: aliceConversation, text: 'hello' });
    confirmed.push(hello.id);
    await alice.api.waitFor(async () => (await aliceMessages()).some((m) => m.body === 'echo: hello'), 30_000, 'echo');
    await askAcross(bob, bobConversation, 'alice/assistant', 'before');

    // A peer's question whose answer alice's agent sends while the disk is full.
    await bob.api.call('conversations.send', { id: bobConversation, text: 'ask alice/assistant: sleep 4' });
    await alice.api.waitFor(
      () => Promise.resolve(agentPids(alice.serve.process.pid!).length > 0),
      30_000,
      'alice’s agent to start on bob’s question',
    );

    fillDisk(filler);

    // Sends are refused with disk_full as soon as the database cannot grow (what still fit is confirmed).
    let refusal: ApiError | null = null;
    for (let i = 0; i < 200 && !refusal; i++) {
      try {
        confirmed.push(
          (
            await alice.api.call('conversations.send', {
              id: aliceConversation,
              text: `big ${i} ${'x'.repeat(50_000)}`,
            })
          ).id,
        );
      } catch (error) {
        refusal = error as ApiError;
      }
    }
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal!.code).toBe('disk_full');
    expect(refusal!.message).toMatch(/disk is full/);
    // Every write is refused alike: a task (what space a refused write leaves in the log may take a small one).
    const roleId = (await alice.api.call('roles.list', {}))[0]!.id;
    let taskRefusal: ApiError | null = null;
    for (let i = 0; i < 50 && !taskRefusal; i++)
      await alice.api
        .call('tasks.create', { roleId, title: `while full ${i}`, body: 'z'.repeat(50_000) })
        .catch((error: unknown) => (taskRefusal = error as ApiError));
    expect(taskRefusal).toMatchObject({ code: 'disk_full' });

    // bob's question reaches alice, who cannot record it: bob keeps it and sends it again later.
    const question = `while full ${'y'.repeat(80_000)}`;
    await bob.api.call('conversations.send', { id: bobConversation, text: `ask alice/assistant: ${question}` });
    // alice's agent finishes its sleep and cannot reply.
    await alice.api.waitFor(
      () => Promise.resolve(agentPids(alice.serve.process.pid!).length === 0),
      30_000,
      'alice’s agent to end',
    );
    expect(alice.serve.alive(), alice.serve.stderr()).toBe(true);
    // Reads go on.
    expect((await aliceMessages()).map((m) => m.id)).toEqual(expect.arrayContaining(confirmed));

    rmSync(filler);

    // Everything works again by itself: bob's question is answered, alice's sends are taken.
    expect(await askAcross(bob, bobConversation, 'alice/assistant', 'after', 90_000)).toBeTruthy();
    await bob.api.waitFor(
      async () =>
        (await bob.api.call('conversations.get', { id: bobConversation, limit: 1000 })).messages.some(
          (m) => m.body === `alice/assistant says: answer from assistant: ${question}`,
        ),
      90_000,
      'the answer to the question sent while the disk was full',
    );
    const after = await alice.api.call('conversations.send', { id: aliceConversation, text: 'after' });
    confirmed.push(after.id);
    await alice.api.waitFor(async () => (await aliceMessages()).some((m) => m.body === 'echo: after'), 60_000, 'echo');
    // The agent whose reply came while the disk was full either got it through (what still fit is saved)
    // or was told why it could not: never a reply lost without a word.
    const threads = await alice.api.call('threads.list', { peerStarted: true });
    const logs = await Promise.all(threads.map((t) => alice.api.call('threads.get', { id: t.id })));
    const outputs = logs.flatMap((d) => d.runLog.map((entry) => entry.output)).join('\n');
    expect(outputs).toMatch(/replied: answer from assistant: slept 4|disk is full/);
    expect(alice.serve.alive(), alice.serve.stderr()).toBe(true);
    expect(alice.serve.stderr()).not.toMatch(/unhandled|uncaught/i);
  }, 300_000);

  it('keeps everything confirmed across a restart, with a sound database', async () => {
    await alice.serve.stop();
    alice = await node(await startServe({ name: 'alice', dataDir }), 'alice');
    expect((await aliceMessages()).map((m) => m.id)).toEqual(expect.arrayContaining(confirmed));
    await alice.serve.stop();
    const db = new Database(path.join(dataDir, 'parley.db'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.pragma('foreign_key_check')).toEqual([]);
    } finally {
      db.close();
    }
  }, 120_000);
});
