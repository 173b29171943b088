// Agent processes run in their own process group so that Stop can end the whole
// tree (the agent and anything it started) with one signal, and so a crash of
// Parley does not take them down mid-write.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const isLinux = process.platform === 'linux';

export interface GroupSpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** Starts a command without a shell as the leader of a new process group. */
export function spawnInGroup(command: string, args: readonly string[], options: GroupSpawnOptions): ChildProcess {
  return spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    detached: process.platform !== 'win32',
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
  });
}

interface ProcStat {
  state: string;
  pgrp: number;
  startTime: string;
}

function readStat(pid: number | string): ProcStat | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', pgrp: Number(fields[2]), startTime: fields[19] ?? '' };
  } catch {
    return null;
  }
}

/** The process's start time (Linux), to tell it apart from a later process with the same pid. */
export function processStartTime(pid: number): string | null {
  return isLinux ? (readStat(pid)?.startTime ?? null) : null;
}

/** True while the process runs (a zombie has ended and does not count). */
export function processAlive(pid: number): boolean {
  if (isLinux) {
    const stat = readStat(pid);
    return stat !== null && stat.state !== 'Z' && stat.state !== 'X';
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
  if (isLinux) {
    for (const entry of readdirSync('/proc')) {
      if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
      const stat = readStat(entry);
      if (stat && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') return true;
    }
    return false;
  }
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    if (process.platform === 'win32') process.kill(pgid, signal);
    else process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitGone(pgid: number, deadline: number, leaderExit?: Promise<unknown>): Promise<boolean> {
  if (leaderExit) {
    // Most agents leave as soon as they get SIGTERM: wait for that event rather than poll.
    const remaining = deadline - Date.now();
    if (remaining > 0) await Promise.race([leaderExit, delay(remaining)]);
  }
  for (let pause = 2; ; pause = Math.min(pause * 2, 25)) {
    if (!groupAlive(pgid)) return true;
    if (Date.now() >= deadline) return false;
    await delay(pause);
  }
}

/**
 * Ends a process group: SIGTERM, then SIGKILL after `graceMs` for whatever is left.
 * Resolves once no live member remains.
 */
export async function endGroup(pgid: number, graceMs: number, leaderExit?: Promise<unknown>): Promise<void> {
  signalGroup(pgid, 'SIGTERM');
  if (await waitGone(pgid, Date.now() + graceMs, leaderExit)) return;
  signalGroup(pgid, 'SIGKILL');
  await waitGone(pgid, Date.now() + 5_000);
}

/** Ends a group left by an earlier Parley, if its leader is still the process we started. */
export async function endStaleGroup(pid: number, procStart: string | null, graceMs: number): Promise<boolean> {
  if (!isLinux || procStart === null) return false;
  const stat = readStat(pid);
  if (!stat || stat.startTime !== procStart || stat.pgrp !== pid) return false;
  await endGroup(pid, graceMs);
  return true;
}
