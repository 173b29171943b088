// A Parley killed with SIGKILL leaves its sandbox runtime's socket and its open-network
// folder in the temporary folder; the next sandbox to start removes them, and nothing
// of a process still running, nor anything else.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ownerPid, removeStaleSandboxFiles } from './stale-files';

describe('whose an entry of the temporary folder is', () => {
  it.each([
    ['srt-mux-4242-0.sock', 4242],
    ['srt-mux-4242-1a.sock', 4242],
    ['parley-srt-4242-AbC123', 4242],
    // Not a runtime's: other programs' files, and the open-network folder's old name without a pid.
    ['parley-srt-AbC123', null],
    ['srt-mux-4242-0.sock.bak', null],
    ['srt-mux--0.sock', null],
    ['claude-http-0123456789abcdef.sock', null],
    ['parley-srt-0-AbC123', null],
    ['parley-srt-4242-AbC12', null],
  ])('%s → %s', (name, pid) => {
    expect(ownerPid(name)).toBe(pid);
  });
});

describe('removing what ended processes left', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('removes the entries of a process that is gone and keeps those of live ones and everything else', () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'parley-stale-'));
    // A pid that was a process a moment ago.
    const gone = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    const dead = Number(gone.stdout.trim());
    const live = process.ppid;
    writeFileSync(path.join(dir, `srt-mux-${dead}-0.sock`), '');
    mkdirSync(path.join(dir, `parley-srt-${dead}-AbC123`));
    writeFileSync(path.join(dir, `parley-srt-${dead}-AbC123`, `srt-mux-${dead}-0.sock`), '');
    writeFileSync(path.join(dir, `srt-mux-${live}-0.sock`), '');
    mkdirSync(path.join(dir, `parley-srt-${process.pid}-XyZ789`));
    writeFileSync(path.join(dir, 'claude-http-0123456789abcdef.sock'), '');
    writeFileSync(path.join(dir, 'notes.txt'), '');

    const removed = removeStaleSandboxFiles(dir, (pid) => pid !== dead);
    expect(removed.sort()).toEqual([`parley-srt-${dead}-AbC123`, `srt-mux-${dead}-0.sock`]);
    expect(readdirSync(dir).sort()).toEqual(
      [
        'claude-http-0123456789abcdef.sock',
        'notes.txt',
        `parley-srt-${process.pid}-XyZ789`,
        `srt-mux-${live}-0.sock`,
      ].sort(),
    );
  });

  it('asks the system whether a process runs when not told', () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'parley-stale-'));
    const gone = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    const dead = Number(gone.stdout.trim());
    writeFileSync(path.join(dir, `srt-mux-${dead}-0.sock`), '');
    writeFileSync(path.join(dir, `srt-mux-${process.ppid}-0.sock`), '');
    expect(removeStaleSandboxFiles(dir)).toEqual([`srt-mux-${dead}-0.sock`]);
    expect(existsSync(path.join(dir, `srt-mux-${process.ppid}-0.sock`))).toBe(true);
  });

  it('says nothing of a folder that cannot be read', () => {
    expect(removeStaleSandboxFiles(path.join(os.tmpdir(), 'parley-no-such-folder'))).toEqual([]);
  });
});
