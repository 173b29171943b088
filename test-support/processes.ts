import { readdirSync, readFileSync } from 'node:fs';

/** Agent processes a server started: its children whose command line runs the scripted agent. */
export function agentPids(serverPid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (Number(fields[1]) === serverPid && fields[0] !== 'Z' && cmdline.includes('scripted-agent'))
        pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
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

/** Live processes (zombies left out) whose command line names `text`. */
export function processesNaming(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}
