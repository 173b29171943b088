// Agent processes run in their own process group, and Stop ends the whole tree: the
// group, and every descendant that left it. Coding agents start their shell commands
// in sessions of their own (`setsid`), which a signal to the group never reaches, and
// such a command keeps the agent's output pipes open, so waiting for them to close
// would wait for it. On Linux the tree is found in /proc before the first signal and
// looked for again until nothing of it is left: the leader's group, the children of
// every process found (whatever group or session they moved to, remembered by pid and
// start time after they are re-parented), the groups and sessions those lead, and any
// process whose environment carries the turn's marker (a double fork leaves no parent
// to follow). Elsewhere only the group is signalled.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { AgentChild, ProcessStarter } from '../sandbox/runtime-host';

const isLinux = process.platform === 'linux';

export interface GroupSpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** Starts a command without a shell as the leader of a new process group. May throw (a NUL in argv). */
export function spawnInGroup(command: string, args: readonly string[], options: GroupSpawnOptions): ChildProcess {
  return spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    detached: process.platform !== 'win32',
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
  });
}

/**
 * Starts it as `spawnInGroup` does, or, given a starter (the sandbox's host), there: a
 * fork of this large process costs its event loop and every page it writes after.
 * Rejects when it cannot start, with the system's code (ENOENT, EAGAIN).
 */
export async function startInGroup(
  command: string,
  args: readonly string[],
  options: GroupSpawnOptions & { starter?: ProcessStarter },
): Promise<AgentChild> {
  if (options.starter) return options.starter.start(command, args, options);
  const child = spawnInGroup(command, args, options);
  if (child.pid !== undefined) return child;
  // Not started (no such program, out of file descriptors): 'error' says why.
  return new Promise((_, reject) =>
    child.once('error', (error) => {
      for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
      reject(error);
    }),
  );
}

export interface ProcStat {
  pid: number;
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  startTime: string;
  /** CPU time used so far, user and system, in clock ticks. */
  cpuTicks: number;
}

function parseStat(pid: number, stat: string): ProcStat {
  // The command name may hold spaces and parentheses: the fields start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    pid,
    state: fields[0] ?? '',
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    session: Number(fields[3]),
    startTime: fields[19] ?? '',
    cpuTicks: Number(fields[11]) + Number(fields[12]),
  };
}

function readStat(pid: number | string): ProcStat | null {
  try {
    return parseStat(Number(pid), readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

const ended = (stat: ProcStat) => stat.state === 'Z' || stat.state === 'X';

/** Every live process on the machine (Linux), zombies left out; none where there is no /proc. */
export function liveProcesses(): ProcStat[] {
  const found: ProcStat[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const entry of entries) {
    const first = entry.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const stat = readStat(entry);
    if (stat && !ended(stat)) found.push(stat);
  }
  return found;
}

/** The process's start time (Linux), to tell it apart from a later process with the same pid. */
export function processStartTime(pid: number): string | null {
  return isLinux ? (readStat(pid)?.startTime ?? null) : null;
}

/** True while the process runs (a zombie has ended and does not count). */
export function processAlive(pid: number): boolean {
  if (isLinux) {
    const stat = readStat(pid);
    return stat !== null && !ended(stat);
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * True while any live member of the group remains. On Linux zombies do not count: a
 * zombie has ended, it only waits for a parent (possibly a non-reaping init) to
 * collect it.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    // No member at all, not even a zombie: the cheap answer.
    return false;
  }
  if (isLinux) return liveProcesses().some((stat) => stat.pgrp === pgid);
  return true;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    if (process.platform === 'win32') process.kill(pgid, signal);
    else process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

/** Processes Parley must never signal: itself, its parents, init. */
function untouchable(): Set<number> {
  const pids = new Set([0, 1, process.pid]);
  if (isLinux) {
    for (let pid = process.ppid; pid > 1 && !pids.has(pid);) {
      pids.add(pid);
      pid = readStat(pid)?.ppid ?? 0;
    }
  } else pids.add(process.ppid);
  return pids;
}

/**
 * A turn's process tree: the leader's group and everything that came from it. Members
 * are remembered by pid and start time, so one re-parented to init stays known and a
 * pid used again by an unrelated process is not.
 */
export class ProcessTree {
  private readonly known = new Map<number, string>();
  private readonly protectedPids = untouchable();
  /** Once no process is left in the leader's group, its id may be handed out again: stop looking for it. */
  private groupGone = false;
  private readonly leaderStart: string | null;

  /**
   * @param leader the group leader's pid (also the group's id)
   * @param marker `NAME=value` in the environment of every process of this turn, or null
   */
  constructor(
    readonly leader: number,
    private readonly marker: string | null = null,
    /** The agent's own command line, when a wrapper (the sandbox) leads the tree and starts it. */
    private readonly agentArgv: readonly string[] | null = null,
  ) {
    this.leaderStart = processStartTime(leader);
  }

  /**
   * The process that is the agent itself: the leader, or, under a wrapper, the member
   * running the agent's command line (Linux). The first SIGTERM of a Stop goes to it.
   */
  agent(): number {
    if (!isLinux || !this.agentArgv) return this.leader;
    const wanted = Buffer.from(this.agentArgv.join('\0') + '\0');
    for (const member of this.walk()) {
      try {
        if (readFileSync(`/proc/${member.pid}/cmdline`).equals(wanted)) return member.pid;
      } catch {
        // Gone meanwhile.
      }
    }
    return this.leader;
  }

  /**
   * Looks for the tree's live processes and remembers them. With `deep`, also reads
   * the environment of processes not yet known, for the marker.
   */
  walk(deep = false): ProcStat[] {
    if (!isLinux) return [];
    // Everything of the tree started after its leader: older processes are never looked at.
    const since = this.leaderStart === null ? 0 : Number(this.leaderStart);
    const all = liveProcesses().filter((stat) => Number(stat.startTime) >= since);
    const byPid = new Map(all.map((stat) => [stat.pid, stat]));
    // Forget members that ended, or whose pid now belongs to another process.
    for (const [pid, start] of this.known) if (byPid.get(pid)?.startTime !== start) this.known.delete(pid);
    const add = (stat: ProcStat) => {
      if (this.protectedPids.has(stat.pid) || this.known.has(stat.pid)) return false;
      this.known.set(stat.pid, stat.startTime);
      return true;
    };
    if (!this.groupGone) {
      let inGroup = false;
      for (const stat of all) {
        if (stat.pgrp !== this.leader) continue;
        inGroup = true;
        if (stat.pid !== this.leader || this.leaderStart === null || stat.startTime === this.leaderStart) add(stat);
      }
      if (!inGroup) this.groupGone = true;
    }
    if (deep && this.marker) {
      const needle = Buffer.from(this.marker);
      for (const stat of all) {
        if (this.known.has(stat.pid) || this.protectedPids.has(stat.pid)) continue;
        if (hasMarker(stat.pid, needle)) add(stat);
      }
    }
    // Children of members, and members of the groups and sessions members lead, until nothing new turns up.
    for (let grew = true; grew;) {
      grew = false;
      for (const stat of all) {
        if (this.known.has(stat.pid)) continue;
        if (this.known.has(stat.ppid) || this.known.has(stat.pgrp) || this.known.has(stat.session))
          grew = add(stat) || grew;
      }
    }
    return [...this.known.keys()].map((pid) => byPid.get(pid)!);
  }

  /** Signals every member found so far, and the groups they are in (which catches a fork made meanwhile). */
  signal(signal: NodeJS.Signals, members: ProcStat[]): void {
    if (!isLinux) {
      signalGroup(this.leader, signal);
      return;
    }
    const groups = new Set<number>([this.leader]);
    for (const member of members) {
      groups.add(member.pgrp);
      try {
        process.kill(member.pid, signal);
      } catch {
        // Already gone.
      }
    }
    for (const group of groups) if (!this.protectedPids.has(group) && group !== process.pid) signalGroup(group, signal);
  }

  /** True while any of it is left. */
  alive(deep = false): boolean {
    if (!isLinux) return groupAlive(this.leader);
    return this.walk(deep).length > 0;
  }
}

function hasMarker(pid: number, needle: Buffer): boolean {
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch {
    // Another user's process, or gone.
    return false;
  }
  for (let at = environ.indexOf(needle); at >= 0; at = environ.indexOf(needle, at + 1)) {
    const before = at === 0 || environ[at - 1] === 0;
    const after = at + needle.length === environ.length || environ[at + needle.length] === 0;
    if (before && after) return true;
  }
  return false;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ends a process tree: SIGTERM to everything in it, found before the first signal and
 * looked for again while it lasts; SIGKILL after `graceMs` for whatever is left. With
 * `leaderFirst`, the first SIGTERM goes to the leader alone, the rest once it exited.
 * Resolves once nothing of it is left (or, after SIGKILL, at most 5 s later).
 */
export async function endTree(
  tree: ProcessTree,
  graceMs: number,
  leaderExit?: Promise<unknown>,
  options: { leaderFirst?: boolean } = {},
): Promise<void> {
  const deadline = Date.now() + graceMs;
  const members = tree.walk(true);
  if (options.leaderFirst && leaderExit) {
    // The leader ends what it started itself; the rest of the tree is signalled once it is gone.
    try {
      process.kill(tree.agent(), 'SIGTERM');
    } catch {
      // Already gone.
    }
    const remaining = deadline - Date.now();
    if (remaining > 0) await Promise.race([leaderExit, delay(remaining)]);
    tree.signal('SIGTERM', tree.walk(true));
  } else tree.signal('SIGTERM', members);
  if (leaderExit) {
    // Most agents leave as soon as they get SIGTERM: wait for that event rather than poll.
    const remaining = deadline - Date.now();
    if (remaining > 0) await Promise.race([leaderExit, delay(remaining)]);
  }
  for (let pause = 2; ; pause = Math.min(pause * 2, 25)) {
    const left = tree.walk();
    if (left.length === 0 && !tree.alive(true)) return;
    if (Date.now() >= deadline) break;
    // Anything forked since the last look gets the signal too.
    tree.signal('SIGTERM', left);
    await delay(Math.min(pause, Math.max(1, deadline - Date.now())));
  }
  const killBy = Date.now() + 5_000;
  for (let pause = 1; ; pause = Math.min(pause * 2, 25)) {
    const left = tree.walk(true);
    if (left.length === 0 && (isLinux || !groupAlive(tree.leader))) return;
    tree.signal('SIGKILL', left);
    if (Date.now() >= killBy) return;
    await delay(pause);
  }
}

/** Ends a process group and what came from it (see `endTree`). */
export async function endGroup(pgid: number, graceMs: number, leaderExit?: Promise<unknown>): Promise<void> {
  await endTree(new ProcessTree(pgid), graceMs, leaderExit);
}

/** Ends a tree left by an earlier Parley, if its leader is still the process we started. */
export async function endStaleGroup(pid: number, procStart: string | null, graceMs: number): Promise<boolean> {
  if (!isLinux || procStart === null) return false;
  const stat = readStat(pid);
  if (!stat || stat.startTime !== procStart || stat.pgrp !== pid) return false;
  await endGroup(pid, graceMs);
  return true;
}
