// What a wrap found on disk. The runtime turns the policy's paths into bubblewrap's
// mounts by what is there when it wraps: a folder to deny that does not exist yet is
// left out, a symlink is followed, a folder it cannot look into is covered from above.
// A wrap made earlier serves a turn only if all of that is as it was then.
import { linuxGetCwdMandatoryDenyPaths } from '@anthropic-ai/sandbox-runtime/dist/sandbox/linux-sandbox-utils.js';
import { getDefaultWritePaths } from '@anthropic-ai/sandbox-runtime';
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { SandboxPolicy } from './policy';

/** What the runtime keeps unwritable in Parley's working folder, there or not. */
const runtimeUnwritable = () => linuxGetCwdMandatoryDenyPaths();

const within = (child: string, parent: string) => {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
};

/** The paths to keep unwritable that are missing inside a writable folder: the runtime makes a file to mount over each. */
export function mountPointsNeeded(policy: SandboxPolicy, ownUnwritable: readonly string[]): string[] {
  const writable = policy.filesystem.allowWrite;
  return [...policy.filesystem.denyWrite, ...ownUnwritable, ...runtimeUnwritable()].filter((entry) => {
    if (!writable.some((folder) => within(entry, folder))) return false;
    try {
      lstatSync(entry);
      return false;
    } catch {
      return true;
    }
  });
}

/** The paths the runtime looks at for a policy, besides their folders above. */
export function pathsTheWrapReads(policy: SandboxPolicy, ownUnwritable: readonly string[]): string[] {
  const { denyRead, allowRead, allowWrite, denyWrite } = policy.filesystem;
  return [
    ...denyRead,
    ...allowRead,
    ...allowWrite,
    ...denyWrite,
    ...ownUnwritable,
    // Its own: the writable defaults (some in the home), what it keeps unwritable in
    // Parley's working folder, and ssh's folder it hides.
    ...getDefaultWritePaths(),
    ...runtimeUnwritable(),
    // Whether it is a folder or a file decides what is kept unwritable under it.
    path.resolve(process.cwd(), '.git'),
    '/etc/ssh/ssh_config.d',
  ];
}

const failure = (error: unknown) => `!${(error as NodeJS.ErrnoException).code ?? 'error'}`;

/** One entry: what it is (type, permission bits, owner; a symlink's target), or why not. */
function entryFact(entry: string): string {
  try {
    const stat = lstatSync(entry);
    const type = stat.isSymbolicLink()
      ? `link:${readlinkSync(entry)}`
      : stat.isDirectory()
        ? 'dir'
        : stat.isFile()
          ? 'file'
          : 'other';
    return `${type}:${(stat.mode & 0o7777).toString(8)}:${stat.uid}`;
  } catch (error) {
    return failure(error);
  }
}

/**
 * A description of the paths, the folders above them and where they lead, equal for two
 * moments exactly when none of that changed. Sorted, so the order of the policy's lists
 * does not count (the policy itself is compared as it is).
 */
export function diskFacts(paths: readonly string[]): string {
  const entries = new Set<string>();
  const facts: string[] = [];
  for (const given of new Set(paths)) {
    const absolute = path.resolve(given);
    for (let at = absolute; ; at = path.dirname(at)) {
      entries.add(at);
      if (at === path.dirname(at)) break;
    }
    let real: string;
    try {
      real = realpathSync(absolute);
    } catch (error) {
      real = failure(error);
    }
    facts.push(`${absolute} -> ${real}`);
    // Where a symlink leads is looked at as closely as the path itself.
    if (!real.startsWith('!') && real !== absolute)
      for (let at = real; ; at = path.dirname(at)) {
        entries.add(at);
        if (at === path.dirname(at)) break;
      }
  }
  for (const entry of entries) facts.push(`${entry} ${entryFact(entry)}`);
  return facts.sort().join('\n');
}
