// Whether a wrap made ahead may serve a turn: only when everything it was made from is
// as the turn has it, the policy above all.
import { describe, expect, it } from 'vitest';
import type { SandboxPolicy } from './policy';
import { mayServe, mayWrapAhead, type WrapInputs } from './wrap-ahead';

const policy = (): SandboxPolicy => ({
  filesystem: {
    denyRead: ['/data', '/roles/role-2', '/home/owner'],
    allowRead: ['/roles/role-1', '/data/turns/next-1', '/data/role.sock', '/opt/node'],
    allowWrite: ['/data/turns/next-1'],
    denyWrite: [],
  },
  reach: 'endpoints',
  allowedDomains: ['127.0.0.1:8080'],
});

const inputs = (): WrapInputs => ({
  command: '/usr/bin/node',
  args: ['agent.js'],
  cwd: '/roles/role-1',
  path: '/bin:/usr/bin',
  tmpDir: '/data/turns/next-1',
  policy: policy(),
  ownUnwritable: [],
  workingDir: '/home/owner',
  disk: '/roles/role-2 -> /roles/role-2\n/roles/role-2 dir:700:1000',
  mountPoints: [],
  readsTokenFirst: true,
});

type Change = (i: WrapInputs) => void;

describe('mayServe', () => {
  it('serves a turn whose inputs are equal, copies and all', () => {
    expect(mayServe(inputs(), inputs())).toBe(true);
  });

  const unequal: Array<[string, Change]> = [
    ['another role was made: its folder is denied now', (i) => i.policy.filesystem.denyRead.push('/roles/role-3')],
    ['a role was deleted', (i) => i.policy.filesystem.denyRead.splice(1, 1)],
    ['the trust level went down: the role folder is no longer writable', (i) => (i.policy.reach = 'beyond-machine')],
    ['the home became readable', (i) => i.policy.filesystem.denyRead.pop()],
    ['a folder became writable', (i) => i.policy.filesystem.allowWrite.push('/roles/role-1')],
    ['a folder became unwritable', (i) => i.policy.filesystem.denyWrite.push('/roles/role-1/.git')],
    ['the model endpoint moved', (i) => (i.policy.allowedDomains = ['127.0.0.1:9090'])],
    ['a second endpoint', (i) => i.policy.allowedDomains.push('api.anthropic.com:443')],
    ['the role runs another program', (i) => (i.command = '/usr/bin/python3')],
    ['with other arguments', (i) => (i.args = ['agent.js', '--fast'])],
    ['a program that does not read its token (a shell must wait for it)', (i) => (i.readsTokenFirst = false)],
    ['in another folder', (i) => (i.cwd = '/roles/elsewhere')],
    ['with another PATH', (i) => (i.path = '/usr/local/bin:/bin')],
    ['without a PATH', (i) => (i.path = undefined)],
    ['another temporary folder', (i) => (i.tmpDir = '/data/turns/turn-7')],
    ['a folder of Parley’s working folder became unreadable', (i) => (i.ownUnwritable = ['/home/owner/closed'])],
    ['Parley works in another folder', (i) => (i.workingDir = '/')],
    ['a denied folder appeared on disk', (i) => (i.disk += '\n/roles/role-3 dir:700:1000')],
    ['a path became a symlink', (i) => (i.disk = i.disk.replace('dir:700', 'link:/tmp:777'))],
    ['the runtime would make a file for it', (i) => (i.mountPoints = ['/roles/role-1/.bashrc'])],
  ];
  for (const [what, change] of unequal)
    it(`does not serve when ${what}`, () => {
      const now = inputs();
      change(now);
      expect(mayServe(inputs(), now)).toBe(false);
      expect(mayServe(now, inputs())).toBe(false);
    });
});

describe('mayWrapAhead', () => {
  const cases: Array<[string, Change, boolean]> = [
    ['a turn as Parley makes them', () => {}, true],
    ['one the runtime would make a mount point for', (i) => (i.mountPoints = ['/home/owner/.claude/commands']), false],
    ['one that denies a root', (i) => i.policy.filesystem.denyRead.push('/'), false],
    ['one whose home is the root', (i) => (i.policy.filesystem.denyRead[2] = '/'), false],
    ['one with a pattern in a path', (i) => i.policy.filesystem.allowRead.push('/roles/role-1/*.md'), false],
    ['one whose folder name has a bracket', (i) => (i.policy.filesystem.allowWrite = ['/roles/[draft]']), false],
  ];
  for (const [what, change, expected] of cases)
    it(`${expected ? 'wraps' : 'does not wrap'} ${what} ahead`, () => {
      const given = inputs();
      change(given);
      expect(mayWrapAhead(given)).toBe(expected);
    });
});
