// What the sandbox runtimes of processes that are gone left in the temporary folder. A
// Parley killed with SIGKILL (or crashed) removes nothing: not the runtime's proxy
// socket (srt-mux-PID-N.sock) nor the folder its open-network runtime works in
// (parley-srt-PID-XXXXXX). Both names carry the pid, so what is stale is known.
import { lstatSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The prefix of the open-network runtime's folder, before its pid. */
export const OPEN_NETWORK_PREFIX = 'parley-srt-';

/** The pid whose sandbox runtime made the entry `name`, or null when it is none of theirs. */
export function ownerPid(name: string): number | null {
  const found = /^(?:srt-mux-(\d+)-[0-9a-z]+\.sock|parley-srt-(\d+)-[A-Za-z0-9]{6})$/.exec(name);
  const pid = Number(found?.[1] ?? found?.[2]);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // Someone else's: running, and not ours to touch.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes this user's entries of runtimes whose process is gone; returns their names. */
export function removeStaleSandboxFiles(
  dir: string = os.tmpdir(),
  alive: (pid: number) => boolean = running,
): string[] {
  const uid = process.getuid?.();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = ownerPid(name);
    if (pid === null || pid === process.pid || alive(pid)) continue;
    const entry = path.join(dir, name);
    try {
      if (uid !== undefined && lstatSync(entry).uid !== uid) continue;
      rmSync(entry, { recursive: true, force: true });
      removed.push(name);
    } catch {
      // Gone meanwhile, or not ours to remove: it stays.
    }
  }
  return removed;
}
