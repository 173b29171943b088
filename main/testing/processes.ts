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
