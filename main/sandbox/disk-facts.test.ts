// What a wrap found on disk, described so that a change the runtime would mount
// differently for shows, and what it would not does not.
import { chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diskFacts, mountPointsNeeded, pathsTheWrapReads } from './disk-facts';
import type { SandboxPolicy } from './policy';

let root: string;
beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'parley-disk-facts-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function folders() {
  const dir = mkdtempSync(path.join(root, 'case-'));
  const own = path.join(dir, 'role-1');
  const other = path.join(dir, 'role-2');
  const target = path.join(dir, 'target');
  mkdirSync(own);
  mkdirSync(target);
  return { dir, own, other, target, paths: [own, other] };
}

const asRoot = process.getuid?.() === 0;
if (asRoot)
  console.log(
    'disk facts test of a folder above that cannot be looked into skipped: running as root, who looks into any',
  );

describe('diskFacts', () => {
  it('is the same while nothing the runtime looks at changes, files written inside a folder included', () => {
    const { own, paths } = folders();
    const before = diskFacts(paths);
    writeFileSync(path.join(own, 'notes.txt'), 'x');
    expect(diskFacts([...paths].reverse())).toBe(before);
  });

  const changes: Array<[string, (f: ReturnType<typeof folders>) => void]> = [
    ['a denied folder that was missing is made', (f) => mkdirSync(f.other)],
    ['a folder is removed', (f) => rmSync(f.own, { recursive: true })],
    [
      'a folder becomes a symlink elsewhere',
      (f) => {
        rmSync(f.own, { recursive: true });
        symlinkSync(f.target, f.own);
      },
    ],
    [
      'a folder above becomes a symlink',
      (f) => {
        const moved = `${f.dir}-moved`;
        renameSync(f.dir, moved);
        symlinkSync(moved, f.dir);
      },
    ],
    ['a folder’s mode changes', (f) => chmodSync(f.own, 0o700)],
    [
      'a folder is replaced by a file',
      (f) => {
        rmSync(f.own, { recursive: true });
        writeFileSync(f.own, '');
      },
    ],
  ];
  for (const [what, change] of changes)
    it(`changes when ${what}`, () => {
      const f = folders();
      const before = diskFacts(f.paths);
      change(f);
      expect(diskFacts(f.paths)).not.toBe(before);
    });

  it('changes when a symlink is pointed elsewhere', () => {
    const f = folders();
    const link = path.join(f.dir, 'link');
    symlinkSync(f.target, link);
    const before = diskFacts([link]);
    unlinkSync(link);
    symlinkSync(f.own, link);
    expect(diskFacts([link])).not.toBe(before);
  });

  it.skipIf(asRoot)(
    'changes when a folder above can no longer be looked into (not as root, who looks into any)',
    () => {
      const f = folders();
      const before = diskFacts(f.paths);
      chmodSync(f.dir, 0);
      try {
        expect(diskFacts(f.paths)).not.toBe(before);
      } finally {
        chmodSync(f.dir, 0o700);
      }
    },
  );
});

describe('the paths a wrap reads', () => {
  it('are the policy’s, those kept unwritable, and the runtime’s own in Parley’s working folder', () => {
    const policy: SandboxPolicy = {
      filesystem: { denyRead: ['/d'], allowRead: ['/r'], allowWrite: ['/w'], denyWrite: ['/n'] },
      reach: 'endpoints',
      allowedDomains: [],
    };
    const paths = pathsTheWrapReads(policy, ['/u']);
    expect(paths).toEqual(expect.arrayContaining(['/d', '/r', '/w', '/n', '/u', '/etc/ssh/ssh_config.d']));
    expect(paths).toEqual(
      expect.arrayContaining([path.join(process.cwd(), '.bashrc'), path.join(process.cwd(), '.git')]),
    );
  });
});

describe('mountPointsNeeded', () => {
  it('names what is to stay unwritable, is missing, and lies in a writable folder', () => {
    const f = folders();
    const present = path.join(f.own, '.git');
    mkdirSync(present);
    const policy: SandboxPolicy = {
      filesystem: { denyRead: [], allowRead: [], allowWrite: [f.own], denyWrite: [] },
      reach: 'endpoints',
      allowedDomains: [],
    };
    const missing = path.join(f.own, '.vscode');
    const elsewhere = path.join(f.target, '.vscode');
    expect(mountPointsNeeded(policy, [present, missing, elsewhere])).toEqual([missing]);
  });

  it('names the runtime’s own missing names when Parley works inside a writable folder', () => {
    const f = folders();
    const before = process.cwd();
    process.chdir(f.own);
    try {
      const policy: SandboxPolicy = {
        filesystem: { denyRead: [], allowRead: [], allowWrite: [f.own], denyWrite: [] },
        reach: 'endpoints',
        allowedDomains: [],
      };
      expect(mountPointsNeeded(policy, [])).toContain(path.join(f.own, '.bashrc'));
      const elsewhere = { ...policy, filesystem: { ...policy.filesystem, allowWrite: [f.target] } };
      expect(mountPointsNeeded(elsewhere, [])).toEqual([]);
    } finally {
      process.chdir(before);
    }
  });
});
