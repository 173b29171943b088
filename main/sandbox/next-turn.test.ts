// A sandboxed run's next turn is wrapped when its last one ends (wrap-ahead.ts), and
// started too (main/runs/started-ahead.ts). What changed in between — a role made, a
// connection's trust lowered, a folder appearing on disk — reaches the next turn all the
// same: the real sandbox (bubblewrap) around real agent processes, two installations on
// loopback as in containment.test.ts. And nothing made ahead outlives its run or the
// installation.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { describeWithSandbox } from '../../test-support/system-parts';
import type { AgentSettings } from '../../shared/domain';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import { AgentSandbox, SANDBOX_READY_LINE, wrapperEnv } from './sandbox';
import { sandboxedLaunch, wrapAhead, type TurnSandboxOptions, type TurnToWrap } from './turn-sandbox';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'parley-next-turn-'));
  // Does what the text asks ("read PATH", "write PATH"), says which kind of temporary
  // folder it was given ("tmpdir": `next` for one made ahead), and answers with all of it.
  writeFileSync(
    path.join(dir, 'obedient.cjs'),
    `
      const fs = require('node:fs');
      const path = require('node:path');
      let input = '';
      process.stdin.on('data', (d) => (input += d));
      process.stdin.on('end', () => {
        const results = [];
        for (const [, verb, file] of input.matchAll(/(read|write|tmpdir) ?(\\S*)/g)) {
          if (verb === 'tmpdir') {
            results.push('tmpdir ' + path.basename(process.env.TMPDIR).split('-')[0]);
            continue;
          }
          try {
            if (verb === 'read') fs.readFileSync(file);
            else fs.writeFileSync(file, 'written by an agent');
            results.push(verb + ' ' + path.basename(file) + ': done');
          } catch (error) {
            results.push(verb + ' ' + path.basename(file) + ': ' + error.code);
          }
        }
        process.stdout.write(results.join('; '));
      });
    `,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

const obedient = (): AgentSettings => ({
  adapter: 'command',
  command: [process.execPath, path.join(dir, 'obedient.cjs')],
});

const aheadFolders = (t: TestInstallation) =>
  readdirSync(path.join(t.installation.dataDir, 'turns')).filter((name) => name.startsWith('next-'));

describeWithSandbox('the next turn of a run working for a peer', () => {
  it('gets a role made since, a lowered trust and a folder made since, as a turn wrapped at its start would', async () => {
    const alice = await openPeer('alice');
    const bob = await openPeer('bob', { sandbox: { mode: 'on' } });
    open.push(alice, bob);
    expect(bob.installation.sandbox.available).toBe(true);
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const researcher = await bob.owner('roles.create', { name: 'researcher', agent: obedient() });
    const { inviterConnectionId } = await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
    await bob.owner('connections.setTrust', { id: inviterConnectionId, level: 'work' });
    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    const own = path.join(bob.installation.rolesDir, `role-${researcher.id}`);
    let asked = 0;
    const ask = async (text: string) => {
      const mark = `tmpdir ${++asked}`;
      await alice.owner('conversations.send', { id: conversation.id, text: `ask bob/researcher: ${text} ${mark}` });
      const answers = await alice.waitFor(
        async () => {
          const { messages } = await alice.owner('conversations.get', { id: conversation.id });
          const found = messages.filter((m) => m.author.kind === 'role' && m.body.includes('tmpdir'));
          return found.length === asked ? found : undefined;
        },
        `bob's answer ${asked}`,
        30_000,
      );
      // The turn's aftermath on bob's side, its next turn's wrap among it, is done.
      await bob.installation.runs.quiet();
      return answers.at(-1)!.body.replace('bob/researcher says: ', '');
    };

    // At `work` the role's folder is writable.
    expect(await ask(`write ${path.join(own, 'first.txt')}`)).toBe('write first.txt: done; tmpdir turn');
    expect(aheadFolders(bob)).toHaveLength(1);

    // A role made after the turn ended: its folder is denied to the next one.
    const diary = await bob.owner('roles.create', { name: 'diary', agent: obedient() });
    const diaryFolder = path.join(bob.installation.rolesDir, `role-${diary.id}`);
    mkdirSync(diaryFolder, { recursive: true });
    writeFileSync(path.join(diaryFolder, 'secret.txt'), 'dear diary');
    expect(await ask(`read ${path.join(diaryFolder, 'secret.txt')}`)).toBe('read secret.txt: ENOENT; tmpdir next');

    // A role that exists but whose folder did not when its next turn was wrapped.
    const notes = await bob.owner('roles.create', { name: 'notes', agent: obedient() });
    const notesFolder = path.join(bob.installation.rolesDir, `role-${notes.id}`);
    expect(await ask(`read ${path.join(own, 'first.txt')}`)).toBe('read first.txt: done; tmpdir next');
    expect(existsSync(notesFolder)).toBe(false);
    mkdirSync(notesFolder, { recursive: true });
    writeFileSync(path.join(notesFolder, 'secret.txt'), 'my notes');
    expect(await ask(`read ${path.join(notesFolder, 'secret.txt')}`)).toBe('read secret.txt: ENOENT; tmpdir next');

    // The connection's trust lowered to `answer`: the role's folder is read-only to the next turn.
    await bob.owner('connections.setTrust', { id: inviterConnectionId, level: 'answer' });
    expect(await ask(`write ${path.join(own, 'second.txt')}`)).toBe('write second.txt: EROFS; tmpdir next');
    expect(existsSync(path.join(own, 'second.txt'))).toBe(false);

    // Closed, the installation leaves no folder made ahead.
    expect(aheadFolders(bob)).toHaveLength(1);
    await bob.installation.close();
    expect(readdirSync(path.join(bob.installation.dataDir, 'turns'))).toEqual([]);
  }, 120_000);
});

describeWithSandbox('the next turn of a deleted conversation', () => {
  it('is not kept: its folder goes with the conversation', async () => {
    const bob = await openPeer('bob', { sandbox: { mode: 'on' } });
    open.push(bob);
    const role = await bob.owner('roles.create', { name: 'researcher', agent: obedient() });
    const conversation = await bob.owner('conversations.open', { roleId: role.id });
    await bob.owner('conversations.send', { id: conversation.id, text: 'tmpdir' });
    await bob.waitFor(async () => {
      const detail = await bob.owner('conversations.get', { id: conversation.id });
      return detail.turns.at(-1)?.status === 'done';
    }, 'the turn');
    await bob.installation.runs.quiet();
    expect(aheadFolders(bob)).toHaveLength(1);
    await bob.owner('conversations.delete', { id: conversation.id });
    expect(aheadFolders(bob)).toEqual([]);
  }, 60_000);
});

describeWithSandbox('Parley working inside a role’s folder', () => {
  it('holds no wrap ahead while the files the runtime made to mount over are there, so they go with the turn', async () => {
    const bob = await openPeer('bob', { sandbox: { mode: 'on' } });
    open.push(bob);
    const [first, second] = [
      await bob.owner('roles.create', { name: 'first', agent: obedient() }),
      await bob.owner('roles.create', { name: 'second', agent: obedient() }),
    ];
    const turn = async (roleId: number, text: string) => {
      const conversation = await bob.owner('conversations.open', { roleId });
      await bob.owner('conversations.send', { id: conversation.id, text });
      await bob.waitFor(async () => {
        const detail = await bob.owner('conversations.get', { id: conversation.id });
        return detail.turns.at(-1)?.status === 'done';
      }, 'the turn');
      await bob.installation.runs.quiet();
    };
    await turn(second.id, 'tmpdir');
    expect(aheadFolders(bob)).toHaveLength(1);
    // The runtime keeps `.bashrc` and the like unwritable in Parley's working folder, by
    // mounting over them: missing, bubblewrap makes an empty file there to mount on.
    const folder = path.join(bob.installation.rolesDir, `role-${first.id}`);
    mkdirSync(folder, { recursive: true });
    const before = process.cwd();
    process.chdir(folder);
    try {
      await turn(first.id, `write ${path.join(folder, 'notes.txt')}`);
    } finally {
      process.chdir(before);
    }
    expect(readdirSync(folder)).toEqual(['notes.txt']);
    expect(aheadFolders(bob)).toEqual([]);
    // Once they are gone, runs' next turns are wrapped ahead again.
    await turn(second.id, 'tmpdir');
    expect(aheadFolders(bob)).toHaveLength(1);
  }, 60_000);
});

describeWithSandbox('a wrap made ahead', () => {
  let root: string;
  let sandbox: AgentSandbox;
  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'parley-ahead-'));
    sandbox = await AgentSandbox.open({ mode: 'on' });
  });
  afterAll(async () => {
    await sandbox.close();
    rmSync(root, { recursive: true, force: true });
  });

  function setUp() {
    const dataDir = mkdtempSync(path.join(root, 'data-'));
    const folder = path.join(root, `${path.basename(dataDir)}-role-1`);
    const runTmp = path.join(dataDir, 'turns', 'next-1');
    mkdirSync(folder, { recursive: true });
    mkdirSync(runTmp, { recursive: true });
    const socket = path.join(dataDir, 'role.sock');
    writeFileSync(socket, '');
    const roles = [folder];
    const options: TurnSandboxOptions = {
      sandbox,
      dataDir,
      roleApiSocket: socket,
      launcher: [],
      roleFolders: () => roles,
      unsandboxedAllowed: () => false,
    };
    const turn: TurnToWrap = {
      adapter: 'command',
      baseUrl: undefined,
      trust: 'answer',
      context: null,
      command: process.execPath,
      args: ['-e', 'process.stdout.write(process.env.TMPDIR + " " + process.env.PARLEY_TOKEN)'],
      cwd: folder,
      env: { ...process.env, PARLEY_TOKEN: 'prt_first' },
      runTmp,
      readsTokenFirst: false,
    };
    return { options, turn, roles, runTmp };
  }

  it('serves its turn in the sandbox started with it, which waits for that turn’s token before the agent starts', async () => {
    const { options, turn, runTmp } = setUp();
    const ahead = wrapAhead(options, turn)!;
    const made = await ahead.wrapped;
    expect(made).not.toBeNull();
    const second = { ...turn, env: { ...turn.env, PARLEY_TOKEN: 'prt_second' } };
    const start = await sandboxedLaunch(options, second, ahead, () => Promise.resolve(true));
    if (start.kind !== 'start') throw new Error(start.reason);
    expect(start.startedAhead).toBe(true);
    expect([start.command, ...start.args]).toEqual([made!.command, ...made!.args]);
    // Started without any token, as it is when the previous turn ends.
    const { PARLEY_TOKEN: _first, ...env } = turn.env;
    const child = spawn(start.command, start.args, { env: wrapperEnv(env), stdio: ['pipe', 'pipe', 'inherit'] });
    let text = '';
    const ready = new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('\n')) resolve();
      }),
    );
    const exited = new Promise((resolve) => child.on('exit', resolve));
    await ready;
    expect(text).toBe(`${SANDBOX_READY_LINE}\n`);
    child.stdin.end('prt_second\n');
    await exited;
    start.release();
    expect(text).toBe(`${SANDBOX_READY_LINE}\n${runTmp} prt_second`);
  }, 30_000);

  it('is released, and the turn wrapped anew, when no sandbox started with it waits for that turn', async () => {
    const { options, turn } = setUp();
    const ahead = wrapAhead(options, turn)!;
    const made = await ahead.wrapped;
    const start = await sandboxedLaunch(options, turn, ahead, () => Promise.resolve(false));
    if (start.kind !== 'start') throw new Error(start.reason);
    expect(start.startedAhead).toBeUndefined();
    expect([start.command, ...start.args]).not.toEqual([made!.command, ...made!.args]);
    start.release();
  }, 30_000);

  it('is released, and the turn wrapped anew, when a role was made since', async () => {
    const { options, turn, roles } = setUp();
    const ahead = wrapAhead(options, turn)!;
    const made = await ahead.wrapped;
    roles.push(path.join(root, 'another-role'));
    const start = await sandboxedLaunch(options, turn, ahead, () => Promise.resolve(true));
    if (start.kind !== 'start') throw new Error(start.reason);
    expect([start.command, ...start.args]).not.toEqual([made!.command, ...made!.args]);
    start.release();
  }, 30_000);
});
