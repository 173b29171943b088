import { readdirSync, readFileSync } from 'node:fs';
import { liveProcesses } from '../main/runs/process-tree';

/** Every live process (zombies left out, as process-tree lists them) with its command line. */
export function withCommandLines(): Array<{ pid: number; ppid: number; cmdline: string }> {
  const found: Array<{ pid: number; ppid: number; cmdline: string }> = [];
  for (const { pid, ppid } of liveProcesses()) {
    try {
      found.push({ pid, ppid, cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8') });
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** Agent processes a server started: its children whose command line runs the scripted agent. */
export function agentPids(serverPid: number): number[] {
  return withCommandLines()
    .filter((p) => p.ppid === serverPid && p.cmdline.includes('scripted-agent'))
    .map((p) => p.pid);
}

/** The sandbox's hosts a server started (main/sandbox/runtime-host.ts). */
export function sandboxHosts(serverPid: number): number[] {
  return withCommandLines()
    .filter((p) => p.ppid === serverPid && p.cmdline.includes('parley-sandbox-host'))
    .map((p) => p.pid);
}

/** Live processes whose command line names `text`. */
export function processesNaming(text: string): number[] {
  return withCommandLines()
    .filter((p) => p.cmdline.includes(text))
    .map((p) => p.pid);
}

/**
 * Those of `pids` that no other of them started, directly or through processes not among
 * them, among `processes` (one listing of them all). Which started first cannot be told
 * by the numbers: pids wrap around at pid_max.
 */
export function outermostOf(
  pids: ReadonlySet<number>,
  processes: ReadonlyArray<{ pid: number; ppid: number }> = liveProcesses(),
): number[] {
  const parentOf = new Map(processes.map(({ pid, ppid }) => [pid, ppid]));
  const startedByOneOf = (pid: number): boolean => {
    const seen = new Set<number>();
    for (let up = parentOf.get(pid); up !== undefined && up > 1 && !seen.has(up); up = parentOf.get(up)) {
      if (pids.has(up)) return true;
      seen.add(up);
    }
    return false;
  };
  return [...pids].filter((pid) => !startedByOneOf(pid));
}

/**
 * Whether an agent's process still runs, by the pid it wrote itself: inside the agents'
 * sandbox that is a pid of its own pid namespace, so the process is the one whose last
 * NSpid is that pid and whose environment holds `marker` (NAME=value). Outside, the same
 * test finds the process by its own pid.
 */
export function agentAlive(pid: number, marker: string): boolean {
  const needle = Buffer.from(marker);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      if (/^State:\s+Z/m.test(status)) continue;
      const nspid = /^NSpid:\s+(.+)$/m.exec(status)?.[1]?.trim().split(/\s+/);
      if (Number(nspid?.at(-1) ?? entry) !== pid) continue;
      const environ = readFileSync(`/proc/${entry}/environ`);
      if (environ.includes(needle)) return true;
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return false;
}
