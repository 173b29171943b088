// A sandboxed run's next turn starts in a sandbox started when its last turn ended
// (started-ahead.ts): bubblewrap and its relays are already up, waiting for the turn's
// token. The agent must still hear this turn's input and act with this turn's token, and
// a waiting sandbox must never outlive its run, a changed role or the installation. Real
// bubblewrap, real agent processes calling the real `parley` CLI.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { AgentSettings } from '../../shared/domain';
import { makeDataDir, removeDataDir } from '../../test-support/data-folder';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import { outermostOf, processesNaming, sandboxHosts, withCommandLines } from '../../test-support/processes';
import { startServe } from '../../test-support/serve-process';
import { describeWithSandbox } from '../../test-support/system-parts';
import { SANDBOX_READY_LINE } from '../sandbox/sandbox';
import { processAlive } from './process-tree';

let dir: string;
beforeAll(() => {
  dir = makeDataDir('parley-started-ahead-');
  // Says what it heard (the person's name, then their words), whether `parley` took its
  // token, and which kind of temporary folder it has (`next` for one made ahead).
  writeFileSync(
    path.join(dir, 'agent.cjs'),
    `
      const { execFileSync } = require('node:child_process');
      const path = require('node:path');
      let input = '';
      process.stdin.on('data', (d) => (input += d));
      process.stdin.on('end', () => {
        // Told to wait: it says so in its temporary folder and waits for a stop.
        if (input.includes('wait')) {
          require('node:fs').writeFileSync(path.join(process.env.TMPDIR, 'waiting'), '');
          setInterval(() => {}, 1000);
          return;
        }
        let parley = 'answered';
        try {
          execFileSync('parley', ['context'], { stdio: ['ignore', 'ignore', 'pipe'] });
        } catch (error) {
          parley = 'refused: ' + String(error.stderr).trim();
        }
        const heard = input.trim().split('\\n').at(-1);
        const tmp = path.basename(process.env.TMPDIR).split('-')[0];
        process.stdout.write('heard ' + heard + '; parley ' + parley + '; tmpdir ' + tmp + '; ' + (process.env.MOOD ?? 'calm'));
      });
    `,
  );
});
afterAll(() => removeDataDir(dir));

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

const agent = (env?: Record<string, string>): AgentSettings => ({
  adapter: 'command',
  command: [process.execPath, path.join(dir, 'agent.cjs')],
  ...(env ? { env } : {}),
});

/** Whether any live process names `folder` in its command line or environment. */
function anyProcessWith(folder: string): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (/\) [ZX] /.test(stat)) continue;
      if (['cmdline', 'environ'].some((file) => readFileSync(`/proc/${entry}/${file}`, 'utf8').includes(folder)))
        return true;
    } catch {
      // Gone since the listing.
    }
  }
  return false;
}

/** The `next-…` folders of the sandboxes waiting for a turn of this installation, by their processes. */
function waitingSandboxes(t: TestInstallation): string[] {
  return [...waitingLeaders(t.installation.dataDir).keys()];
}

/**
 * The sandboxes waiting for a turn of the installation in `dataDir`, by folder, with the
 * process this one started for each (its leader; none when that cannot be told).
 */
function waitingLeaders(dataDir: string): Map<string, number | undefined> {
  const folderOf = new RegExp(`${path.join(dataDir, 'turns').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(next-[\\w-]+)`);
  const processes = withCommandLines();
  const byFolder = new Map<string, number[]>();
  for (const { pid, cmdline } of processes) {
    if (!cmdline.includes(SANDBOX_READY_LINE)) continue;
    const folder = folderOf.exec(cmdline)?.[1];
    if (folder) byFolder.set(folder, [...(byFolder.get(folder) ?? []), pid]);
  }
  // The leader is the shell started for the turn: none of them started it. The relays' shells
  // are started by a worker whose command line does not name the folder, so their parents
  // are not among them either; their ancestors are.
  const found = new Map<string, number | undefined>();
  for (const [folder, pids] of byFolder) {
    const outermost = outermostOf(new Set(pids), processes);
    found.set(folder, outermost.length === 1 ? outermost[0] : undefined);
  }
  return found;
}

/**
 * Parley's own workers waiting for a turn of the installation in `dataDir`, started ahead
 * in its sandboxes: pid → whether the process's environment holds a turn token.
 */
function waitingWorkers(dataDir: string): Map<number, { token: boolean }> {
  const next = `TMPDIR=${path.join(dataDir, 'turns', 'next-')}`;
  const found = new Map<number, { token: boolean }>();
  for (const pid of processesNaming('scripted-agent')) {
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (!environ.some((variable) => variable.startsWith(next))) continue;
      found.set(pid, { token: environ.some((variable) => variable.startsWith('PARLEY_TOKEN=')) });
    } catch {
      // Gone since the listing.
    }
  }
  return found;
}

async function turn(t: TestInstallation, conversationId: number, text: string): Promise<string> {
  await t.owner('conversations.send', { id: conversationId, text });
  const detail = await t.waitFor(async () => {
    const detail = await t.owner('conversations.get', { id: conversationId });
    return detail.messages.some((m) => m.author.kind === 'role' && m.body.startsWith(`heard bob: ${text};`))
      ? detail
      : undefined;
  }, `the answer to ${text}`);
  // Its aftermath, the next turn's sandbox started among it, is done.
  await t.installation.runs.quiet();
  return detail.messages.findLast((m) => m.author.kind === 'role')!.body;
}

/** bob, sandboxed, whose researcher has answered one turn of his conversation with it. */
async function afterOneTurn() {
  const bob = await openPeer('bob', { sandbox: { mode: 'on' } });
  open.push(bob);
  const role = await bob.owner('roles.create', { name: 'researcher', agent: agent() });
  const conversation = await bob.owner('conversations.open', { roleId: role.id });
  const first = await turn(bob, conversation.id, 'first');
  return { bob, role, conversation, first };
}

/** bob's second turn, whose agent waits (for a stop) in the sandbox that waited for it, in temporary folder `tmp`. */
async function agentWaiting() {
  const { bob, conversation } = await afterOneTurn();
  const [folder] = waitingSandboxes(bob);
  const tmp = path.join(bob.installation.dataDir, 'turns', folder!);
  await bob.owner('conversations.send', { id: conversation.id, text: 'wait' });
  await bob.waitFor(() => existsSync(path.join(tmp, 'waiting')), 'the agent to wait', 15_000);
  return { bob, conversation, tmp };
}

describeWithSandbox('a run’s next turn, started ahead', () => {
  it('starts in the sandbox that waited for it: the agent hears this turn’s input and `parley` takes this turn’s token', async () => {
    const { bob, conversation, first } = await afterOneTurn();
    expect(first).toBe('heard bob: first; parley answered; tmpdir turn; calm');
    const waiting = waitingLeaders(bob.installation.dataDir);
    expect(waiting.size).toBe(1);
    const [leader] = waiting.values();
    expect(leader).toBeGreaterThan(0);
    // Started by the sandbox's host, not by Parley's own process (runtime-host.ts).
    const parent = Number(readFileSync(`/proc/${leader}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
    expect(parent).not.toBe(process.pid);
    expect(sandboxHosts(process.pid)).toContain(parent);
    // The sandbox started when the first turn ended serves the second, with the second's token.
    expect(await turn(bob, conversation.id, 'second')).toBe('heard bob: second; parley answered; tmpdir next; calm');
    const lastTurn = bob.installation.db.prepare('SELECT pid FROM turns ORDER BY id DESC LIMIT 1').pluck();
    expect(lastTurn.get()).toBe(leader);
    const next = waitingSandboxes(bob);
    expect(next).toHaveLength(1);
    expect(next).not.toEqual([...waiting.keys()]);
    expect(await turn(bob, conversation.id, 'third')).toBe('heard bob: third; parley answered; tmpdir next; calm');
  }, 60_000);

  it('starts in a host started again when the sandbox’s hosts were killed (kill -9)', async () => {
    const { bob, conversation } = await afterOneTurn();
    const hosts = sandboxHosts(process.pid);
    expect(hosts).toHaveLength(2);
    for (const pid of hosts) process.kill(pid, 'SIGKILL');
    await bob.waitFor(
      () => Promise.resolve(sandboxHosts(process.pid).filter((pid) => !hosts.includes(pid)).length === 2),
      'both hosts started again',
    );
    // The sandbox that waited went with its host; the turn is wrapped and started in the new one.
    expect(await turn(bob, conversation.id, 'second')).toMatch(
      /^heard bob: second; parley answered; tmpdir \w+; calm$/,
    );
    expect(sandboxHosts(process.pid).some((pid) => hosts.includes(pid))).toBe(false);
  }, 60_000);

  it('ends the turn whose host was killed while its agent ran (kill -9), leaves none of it running, and the next turn starts', async () => {
    const { bob, conversation, tmp } = await agentWaiting();
    const leader = Number(bob.installation.db.prepare('SELECT pid FROM turns ORDER BY id DESC LIMIT 1').pluck().get());
    const host = Number(readFileSync(`/proc/${leader}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
    expect(sandboxHosts(process.pid)).toContain(host);
    process.kill(host, 'SIGKILL');

    // Its exit can no longer be told: the turn ends as a killed agent's does, with a reason.
    const ended = await bob.waitFor(async () => {
      const last = (await bob.owner('conversations.get', { id: conversation.id })).turns.at(-1);
      return last && last.status !== 'running' ? last : undefined;
    }, 'the turn to end');
    expect(ended.status).toBe('failed');
    expect(ended.reason).toBe('the sandbox’s host ended (SIGKILL) while the agent ran: the agent was ended with it');
    await bob.waitFor(() => !anyProcessWith(tmp), 'nothing of the turn left running');
    expect(processAlive(leader)).toBe(false);

    // A new host took its place, and the conversation goes on in it.
    await bob.waitFor(
      () => sandboxHosts(process.pid).filter((pid) => pid !== host).length === 2,
      'the killed host started again',
    );
    expect(await turn(bob, conversation.id, 'after')).toMatch(/^heard bob: after; parley answered; tmpdir \w+; calm$/);
  }, 60_000);

  it('is ended, never used, when the role’s environment changed, when its conversation is deleted, and at close', async () => {
    const { bob, role, conversation } = await afterOneTurn();
    const [before] = waitingSandboxes(bob);
    expect(before).toBeDefined();

    // Another environment: the waiting sandbox has the old one, so the turn starts anew.
    await bob.owner('roles.update', { id: role.id, agent: agent({ MOOD: 'curious' }) });
    expect(await turn(bob, conversation.id, 'second')).toBe('heard bob: second; parley answered; tmpdir next; curious');
    const after = waitingSandboxes(bob);
    expect(after).toHaveLength(1);
    expect(after).not.toContain(before);

    // Another role's run waits too; deleting one conversation ends only its own.
    const writer = await bob.owner('roles.create', { name: 'writer', agent: agent() });
    const other = await bob.owner('conversations.open', { roleId: writer.id });
    await turn(bob, other.id, 'elsewhere');
    expect(waitingSandboxes(bob)).toHaveLength(2);
    await bob.owner('conversations.delete', { id: conversation.id });
    await bob.waitFor(() => waitingSandboxes(bob).length === 1, 'the deleted conversation’s sandbox to end');
    expect(waitingSandboxes(bob)).not.toContain(after[0]);

    await bob.installation.close();
    expect(waitingSandboxes(bob)).toEqual([]);
  }, 60_000);

  it('is stopped like any turn: Stop ends the agent it became and the sandbox around it', async () => {
    const { bob, conversation, tmp } = await agentWaiting();
    expect(anyProcessWith(tmp)).toBe(true);
    await bob.owner('conversations.stop', { id: conversation.id });
    const detail = await bob.owner('conversations.get', { id: conversation.id });
    expect(detail.turns.at(-1)).toMatchObject({ status: 'stopped' });
    expect(anyProcessWith(tmp)).toBe(false);
  }, 60_000);
});

describeWithSandbox('a worker of Parley’s, started ahead in its sandbox', () => {
  it('waits for its turn without a token, and the turn it serves acts with that turn’s token, across a peer and back', async () => {
    const alice = await openPeer('alice', { sandbox: { mode: 'on' } });
    const bob = await openPeer('bob', { sandbox: { mode: 'on' } });
    open.push(alice, bob);
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await bob.owner('roles.create', { name: 'helper', agent: { adapter: 'scripted' } });
    await pair(bob, alice, { inviter: ['helper'] });
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    const ask = async (question: string) => {
      await alice.owner('conversations.send', { id: conversation.id, text: `ask bob/helper: ${question}` });
      await alice.waitFor(async () => {
        const { messages } = await alice.owner('conversations.get', { id: conversation.id });
        return messages.some((m) => m.body === `bob/helper says: answer from helper: ${question}`);
      }, `the answer to ${question}`);
      await Promise.all([alice.installation.runs.quiet(), bob.installation.runs.quiet()]);
    };
    await ask('first');

    // Every run's next turn waits in a worker already started: alice's conversation and the
    // agent conversation the answer came back in, bob's agent conversation. None holds a token.
    // The sandboxes say they are ready once their relays listen; their workers start then.
    const workersOf = (t: TestInstallation, count: number) =>
      t.waitFor(() => {
        const workers = waitingWorkers(t.installation.dataDir);
        return workers.size === count && workers;
      }, `${count} workers waiting`);
    const sides = [
      {
        name: 'alice',
        leaders: [...waitingLeaders(alice.installation.dataDir).values()],
        workers: await workersOf(alice, 2),
      },
      {
        name: 'bob',
        leaders: [...waitingLeaders(bob.installation.dataDir).values()],
        workers: await workersOf(bob, 1),
      },
    ];
    for (const { workers } of sides) for (const worker of workers.values()) expect(worker.token).toBe(false);

    // The second ask goes through the three of them, each acting with its own turn's token.
    await ask('second');
    const lastPids = (t: TestInstallation, count: number) =>
      t.installation.db.prepare('SELECT pid FROM turns ORDER BY id DESC LIMIT ?').pluck().all(count) as number[];
    const [aliceSide, bobSide] = sides;
    expect(lastPids(alice, 2).sort()).toEqual([...aliceSide!.leaders].sort());
    expect(lastPids(bob, 1)).toEqual(bobSide!.leaders);
    for (const { name, workers } of sides)
      for (const pid of workers.keys())
        expect(existsSync(`/proc/${pid}/cmdline`), `${name}'s worker ${pid}`).toBe(false);
    // And the next ones wait again.
    await workersOf(alice, 2);
    await workersOf(bob, 1);
  }, 90_000);
});

describeWithSandbox('a sandbox waiting for its turn, when Parley is killed', () => {
  it('ends with it (kill -9): no process that names its folder is left', async () => {
    const serve = await startServe({ name: 'bob', env: { PARLEY_SANDBOX: 'on' } });
    try {
      const api = await serve.connect();
      const role = await api.call('roles.create', { name: 'researcher', agent: agent() });
      const conversation = await api.call('conversations.open', { roleId: role.id });
      await api.call('conversations.send', { id: conversation.id, text: 'first' });
      const folder = await api.waitFor(
        () => Promise.resolve([...waitingLeaders(serve.dataDir).keys()][0]),
        30_000,
        'a sandbox waiting for the next turn',
      );
      const tmp = path.join(serve.dataDir, 'turns', folder);
      expect(anyProcessWith(tmp)).toBe(true);
      // The sandbox's two runtimes, each in the host that also starts its processes.
      const hosts = sandboxHosts(serve.process.pid!);
      expect(hosts).toHaveLength(2);
      await serve.crash();
      await api.waitFor(() => Promise.resolve(!anyProcessWith(tmp)), 10_000, 'the waiting sandbox to end with Parley');
      await api.waitFor(
        () => Promise.resolve(hosts.every((pid) => !processAlive(pid))),
        10_000,
        'the sandbox’s hosts to end with Parley',
      );
    } finally {
      await serve.stop();
      removeDataDir(serve.dataDir);
    }
  }, 60_000);
});
