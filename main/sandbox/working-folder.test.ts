// The files the sandbox runtime always keeps unwritable in Parley's own working folder
// (shell and git settings, a repository's hooks and config) when a turn could write there,
// as when Parley is started from inside a role's folder. Parley does not let the runtime
// list that folder (sandbox.ts): this pins that what it kept stays kept, with the real
// bubblewrap around a real process that tries each write.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithSandbox } from '../../test-support/system-parts';
import { AgentSandbox, unreadableOwnFolders } from './sandbox';
import { sandboxedLaunch } from './turn-sandbox';

let root: string;
let sandbox: AgentSandbox;
beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'parley-working-folder-'));
  sandbox = await AgentSandbox.open({ mode: 'on' });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
});

const TRIES = ['.bashrc', '.git/hooks/pre-commit', '.git/config', '.vscode/settings.json', 'notes.txt', 'sub/.bashrc'];

const writer = `
  const fs = require('node:fs');
  const got = {};
  for (const file of ${JSON.stringify(TRIES)}) {
    try { fs.mkdirSync(require('node:path').dirname(file), { recursive: true }); fs.writeFileSync(file, 'x'); got[file] = 'written'; }
    catch (error) { got[file] = error.code; }
  }
  process.stdout.write(JSON.stringify(got));
`;

describeWithSandbox('Parley started from inside a role’s folder', () => {
  it('keeps its shell settings and the repository’s hooks and config unwritable to that role’s agent', async () => {
    if (!sandbox.available) throw new Error(`the sandbox must run here: ${JSON.stringify(sandbox.status)}`);
    const dataDir = path.join(root, 'data');
    const folder = path.join(root, 'data-roles', 'role-1');
    const runTmp = path.join(dataDir, 'turns', 'turn-1');
    for (const dir of [path.join(folder, '.git', 'hooks'), path.join(folder, 'sub'), runTmp])
      mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(folder, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    const socket = path.join(dataDir, 'role.sock');
    writeFileSync(socket, '');
    const before = process.cwd();
    process.chdir(folder);
    try {
      const start = await sandboxedLaunch(
        {
          sandbox,
          dataDir,
          roleApiSocket: socket,
          launcher: [],
          roleFolders: () => [folder],
          unsandboxedAllowed: () => false,
        },
        {
          adapter: 'command',
          baseUrl: undefined,
          trust: 'work',
          context: null,
          command: process.execPath,
          args: ['-e', writer],
          cwd: folder,
          env: { ...process.env },
          runTmp,
          readsTokenFirst: false,
        },
      );
      if (start.kind !== 'start') throw new Error(start.reason);
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(start.command, start.args, {
          cwd: folder,
          env: start.env,
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let text = '';
        child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
        child.on('error', reject);
        child.on('exit', () => {
          start.release();
          resolve(text);
        });
      });
      const got = JSON.parse(out) as Record<string, string>;
      for (const kept of ['.bashrc', '.git/hooks/pre-commit', '.git/config', '.vscode/settings.json'])
        expect(got[kept], kept).not.toBe('written');
      // Its own files, also below the depth the runtime looks at.
      expect(got['notes.txt']).toBe('written');
      expect(got['sub/.bashrc']).toBe('written');
    } finally {
      process.chdir(before);
    }
  }, 30_000);
});

const asRoot = process.getuid?.() === 0;
// Root lists every folder, so there is nothing unreadable to find.
if (asRoot) console.log('unreadableOwnFolders test skipped: running as root, who can list every folder');
describe('unreadableOwnFolders', () => {
  it.skipIf(asRoot)(
    'names this user’s folders it cannot list, not files, links or readable folders (not as root, who lists every folder)',
    () => {
      const dir = mkdtempSync(path.join(root, 'unreadable-'));
      for (const name of ['open', 'closed']) mkdirSync(path.join(dir, name));
      writeFileSync(path.join(dir, 'file'), '');
      symlinkSync(path.join(dir, 'closed'), path.join(dir, 'link'));
      chmodSync(path.join(dir, 'closed'), 0);
      try {
        expect(unreadableOwnFolders(dir)).toEqual([path.join(dir, 'closed')]);
      } finally {
        chmodSync(path.join(dir, 'closed'), 0o700);
      }
    },
  );

  it('names nothing in a folder it cannot read, or where every folder can be listed', () => {
    const dir = mkdtempSync(path.join(root, 'readable-'));
    mkdirSync(path.join(dir, 'open'));
    expect(unreadableOwnFolders(dir)).toEqual([]);
    expect(unreadableOwnFolders(path.join(dir, 'missing'))).toEqual([]);
  });
});
