// Stop ends everything a turn started, including what left its process group (a
// shell command started with `setsid`, as coding agents start theirs), without
// waiting on output pipes such a command holds; a turn that cannot start fails with
// the reason and leaves Parley running. Real processes throughout: `command` agents,
// two installations over TLS for `threads.stop`, `parley serve` under a low open-files
// limit.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSettings } from '../../shared/domain';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import { removeDataDir, startServe, type ServeProcess } from '../../test-support/serve-process';
import { processAlive } from './process-tree';

const GRACE_MS = 1_000;
/**
 * Stop answers within the grace plus 100 ms on an idle machine; the bound here is
 * looser so a loaded machine does not fail it. Waiting on a held pipe takes 300 s.
 */
const ANSWER_BOUND_MS = GRACE_MS + 2_000;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'parley-stop-tree-'));
  writeFileSync(
    path.join(dir, 'stubborn-grandchild.cjs'),
    `
      const { spawn } = require('node:child_process');
      // A grandchild in a session of its own that ignores SIGTERM and holds our stdout and
      // stderr. It writes both pids once its handler is in place (setsid execs in place, so
      // its parent is this agent).
      const grandchild = "process.on('SIGTERM', () => {}); require('node:fs').writeFileSync(process.env.PIDS_FILE, process.ppid + ' ' + process.pid); setInterval(() => {}, 1000)";
      spawn('setsid', [process.execPath, '-e', grandchild], { stdio: ['ignore', 'inherit', 'inherit'] });
      setInterval(() => {}, 1000);
    `,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

function pidsFile(): string {
  return path.join(mkdtempSync(path.join(dir, 'pids-')), 'pids');
}

/**
 * The pid this machine knows a process by, for one an agent wrote from inside the sandbox
 * (its own pid namespace): the process whose last NSpid is that pid and whose environment
 * names the file.
 */
function hostPid(pid: number, file: string): number {
  const marker = Buffer.from(`PIDS_FILE=${file}`);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const nspid = /^NSpid:\s+(.+)$/m
        .exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1]
        ?.trim()
        .split(/\s+/);
      if (!nspid || nspid.length < 2 || Number(nspid.at(-1)) !== pid) continue;
      if (readFileSync(`/proc/${entry}/environ`).includes(marker)) return Number(entry);
    } catch {
      // Gone meanwhile.
    }
  }
  // Not running (any more): no pid of this machine's stands for it.
  return 0;
}

/** Waits for the agent to write its pids, as this machine knows them. */
async function pidsOf(t: TestInstallation, file: string, count: number): Promise<number[]> {
  const pids = await t.waitFor(() => {
    try {
      const pids = readFileSync(file, 'utf8').trim().split(/\s+/).map(Number);
      return pids.length === count && pids.every((pid) => pid > 0) ? pids : undefined;
    } catch {
      return undefined;
    }
  }, 'the agent’s pids');
  return t.installation.sandbox.available ? pids.map((pid) => hostPid(pid, file)) : pids;
}

const sh = (script: string, file: string): AgentSettings => ({
  adapter: 'command',
  command: ['sh', '-c', script],
  // The agent writes its pids in its own folder: in the sandbox it writes nowhere else.
  cwd: dir,
  env: { PIDS_FILE: file },
});

async function conversationWith(t: TestInstallation, agent: AgentSettings) {
  const role = await t.owner('roles.create', { name: 'worker', agent });
  return t.owner('conversations.open', { roleId: role.id });
}

/** Calls stop and measures how long it took to answer. */
async function timedStop(stop: () => Promise<{ stopped: boolean }>): Promise<number> {
  const started = Date.now();
  const hung = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error('stop did not answer within 20 s')), 20_000).unref(),
  );
  expect(await Promise.race([stop(), hung])).toEqual({ stopped: true });
  const elapsed = Date.now() - started;
  console.info(`stop answered in ${elapsed} ms (grace ${GRACE_MS} ms)`);
  return elapsed;
}

describe('Stop ends the whole process tree', () => {
  it('ends a command started with setsid, without waiting on the output pipe it holds', async () => {
    const t = await openTestInstallation({ stopGraceMs: GRACE_MS });
    open.push(t);
    const file = pidsFile();
    const conversation = await conversationWith(t, sh('setsid sleep 300 & echo $! > "$PIDS_FILE"; wait', file));
    await t.owner('conversations.send', { id: conversation.id, text: 'start a background command' });
    const [sleeper] = await pidsOf(t, file, 1);
    expect(processAlive(sleeper!)).toBe(true);
    const elapsed = await timedStop(() => t.owner('conversations.stop', { id: conversation.id }));
    expect(elapsed).toBeLessThan(ANSWER_BOUND_MS);
    expect(processAlive(sleeper!)).toBe(false);
    const detail = await t.owner('conversations.get', { id: conversation.id });
    expect(detail.turns.at(-1)).toMatchObject({ status: 'stopped', reason: 'Stopped by alice' });
  }, 60_000);

  it('ends a grandchild that left the group and ignores SIGTERM, with SIGKILL after the grace', async () => {
    const t = await openTestInstallation({ stopGraceMs: GRACE_MS });
    open.push(t);
    const file = pidsFile();
    const conversation = await conversationWith(t, {
      adapter: 'command',
      command: [process.execPath, path.join(dir, 'stubborn-grandchild.cjs')],
      cwd: dir,
      env: { PIDS_FILE: file },
    });
    await t.owner('conversations.send', { id: conversation.id, text: 'go' });
    const [leader, grandchild] = await pidsOf(t, file, 2);
    const elapsed = await timedStop(() => t.owner('conversations.stop', { id: conversation.id }));
    // In the sandbox the agent's pid namespace ends with its first process, SIGTERM-proof grandchild and all.
    if (!t.installation.sandbox.available) expect(elapsed).toBeGreaterThanOrEqual(GRACE_MS);
    expect(elapsed).toBeLessThan(ANSWER_BOUND_MS);
    expect(processAlive(leader!)).toBe(false);
    expect(processAlive(grandchild!)).toBe(false);
  }, 60_000);

  it('finds a command that double-forked out of the tree before the stop', async () => {
    const t = await openTestInstallation({ stopGraceMs: GRACE_MS });
    open.push(t);
    const file = pidsFile();
    // The subshell exits at once: the command is re-parented away from the agent before Stop looks.
    const conversation = await conversationWith(
      t,
      sh(`( setsid sh -c 'echo $$ > "$PIDS_FILE"; exec sleep 300' & ); exec sleep 300`, file),
    );
    await t.owner('conversations.send', { id: conversation.id, text: 'go' });
    const [escaped] = await pidsOf(t, file, 1);
    const elapsed = await timedStop(() => t.owner('conversations.stop', { id: conversation.id }));
    expect(elapsed).toBeLessThan(ANSWER_BOUND_MS);
    expect(processAlive(escaped!)).toBe(false);
  }, 60_000);

  it('ends a turn whose agent exited while a command it started still holds its output, and ends the command', async () => {
    const t = await openTestInstallation({ stopGraceMs: GRACE_MS });
    open.push(t);
    const file = pidsFile();
    const conversation = await conversationWith(t, sh('setsid sleep 300 & echo $! > "$PIDS_FILE"; echo done', file));
    await t.owner('conversations.send', { id: conversation.id, text: 'go' });
    const detail = await t.waitFor(async () => {
      const d = await t.owner('conversations.get', { id: conversation.id });
      return d.turns.at(-1)?.status === 'done' ? d : undefined;
    }, 'the turn to end');
    expect(detail.messages.at(-1)).toMatchObject({ author: { kind: 'role' }, body: 'done' });
    const [sleeper] = await pidsOf(t, file, 1);
    expect(processAlive(sleeper!)).toBe(false);
  }, 60_000);

  it('answers threads.stop within the grace for an agent conversation’s agent that left a setsid command', async () => {
    const alice = await openPeer('alice');
    const bob = await openPeer('bob', { stopGraceMs: GRACE_MS });
    open.push(alice, bob);
    const file = pidsFile();
    await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await bob.owner('roles.create', {
      name: 'researcher',
      agent: sh('setsid sleep 300 & echo $! > "$PIDS_FILE"; wait', file),
    });
    await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
    const assistant = (await alice.owner('roles.list', {})).find((r) => r.name === 'assistant')!;
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: dig' });
    const [sleeper] = await pidsOf(bob, file, 1);
    const [thread] = await bob.owner('threads.list', { peerStarted: true });
    const elapsed = await timedStop(() => bob.owner('threads.stop', { id: thread!.id }));
    expect(elapsed).toBeLessThan(ANSWER_BOUND_MS);
    expect(processAlive(sleeper!)).toBe(false);
    const detail = await bob.owner('threads.get', { id: thread!.id });
    expect(detail.turns.at(-1)).toMatchObject({ status: 'stopped' });
  }, 60_000);
});

describe('A turn that cannot start', () => {
  let serve: ServeProcess | null = null;
  afterEach(async () => {
    await serve?.stop();
    if (serve) removeDataDir(serve.dataDir);
    serve = null;
  });

  it('fails with the reason when Parley is out of file descriptors, and Parley keeps running', async () => {
    serve = await startServe({ name: 'alice' });
    const api = await serve.connect();
    const role = await api.call('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const conversation = await api.call('conversations.open', { roleId: role.id });
    const pid = serve.process.pid!;
    // Just enough descriptors for what is open now: the agent's pipes cannot be made.
    const openNow = readdirSync(`/proc/${pid}/fd`).length;
    const [, soft, hard] = /Max open files\s+(\S+)\s+(\S+)/.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))!;
    execFileSync('prlimit', ['--pid', String(pid), `--nofile=${openNow + 2}:${hard}`]);
    await api.call('conversations.send', { id: conversation.id, text: 'hello' });
    const failed = await api.waitFor(
      async () => {
        const detail = await api.call('conversations.get', { id: conversation.id });
        return detail.turns.at(-1)?.status === 'failed' ? detail : undefined;
      },
      15_000,
      'the turn to fail',
    );
    // In the sandbox its own start-up (it looks for bash, starts bubblewrap) may be what runs out first.
    expect(failed.messages.at(-1)?.body).toMatch(
      /^The agent failed: (could not start .*too many open files|Parley could not start the agent in its sandbox)/i,
    );
    // Parley is still up and runs the next turn once descriptors are back.
    execFileSync('prlimit', ['--pid', String(pid), `--nofile=${soft}:${hard}`]);
    expect(serve.process.exitCode).toBeNull();
    await api.call('conversations.send', { id: conversation.id, text: 'again' });
    const answered = await api.waitFor(
      async () => {
        const detail = await api.call('conversations.get', { id: conversation.id });
        return detail.messages.at(-1)?.body === 'echo: again' ? detail : undefined;
      },
      15_000,
      'the next turn',
    );
    expect(answered.turns.map((turn) => turn.status)).toEqual(['failed', 'done']);
  }, 60_000);

  it('fails with the reason when the command line holds a NUL byte, and Parley keeps running', async () => {
    const t = await openTestInstallation();
    open.push(t);
    const conversation = await conversationWith(t, { adapter: 'command', command: ['echo', 'ok'] });
    // A stored setting the program cannot be started with (written as an older Parley might have).
    const row = t.installation.db.prepare('SELECT id, agent FROM roles').get() as { id: number; agent: string };
    const agent = JSON.parse(row.agent) as { command: string[] };
    agent.command = ['echo', 'o\u0000k'];
    t.installation.db.prepare('UPDATE roles SET agent = ? WHERE id = ?').run(JSON.stringify(agent), row.id);
    await t.owner('conversations.send', { id: conversation.id, text: 'hello' });
    const detail = await t.waitFor(async () => {
      const d = await t.owner('conversations.get', { id: conversation.id });
      return d.turns.at(-1)?.status === 'failed' ? d : undefined;
    }, 'the turn to fail');
    expect(detail.messages.at(-1)?.body).toMatch(/^The agent failed: could not start `echo`: .*null bytes/);
    // The installation works on.
    agent.command = ['echo', 'ok'];
    t.installation.db.prepare('UPDATE roles SET agent = ? WHERE id = ?').run(JSON.stringify(agent), row.id);
    await t.owner('conversations.send', { id: conversation.id, text: 'again' });
    await t.waitFor(async () => {
      const d = await t.owner('conversations.get', { id: conversation.id });
      return d.messages.at(-1)?.body === 'ok';
    }, 'the next turn');
  }, 60_000);
});
