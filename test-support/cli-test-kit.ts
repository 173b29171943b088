// What the claude-code and codex adapter tests share: the fake CLIs in fixtures/, the
// transcripts they replay, the real CLIs when this machine has them, and a way to
// watch a conversation's turns.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AgentSettings } from '../shared/domain';
import type { TestInstallation } from './installation';
import type { ProcessResult, StreamUpdate } from '../main/agents/types';

export const fixtures = path.join(import.meta.dirname, 'fixtures');

/** A transcript from fixtures/ with its placeholders filled in, as the lines a CLI prints. */
export function transcript(name: string, vars: Record<string, string>): string[] {
  let text = readFileSync(path.join(fixtures, name), 'utf8');
  for (const [key, value] of Object.entries(vars))
    text = text.replaceAll(`{{${key}}}`, JSON.stringify(value).slice(1, -1));
  return text.split('\n').filter(Boolean);
}

/** Feeds lines to a stream reader; returns what it reported. */
export function feed(reader: { line(line: string): StreamUpdate | undefined }, lines: string[]): StreamUpdate[] {
  return lines.map((line) => reader.line(line)).filter((update): update is StreamUpdate => update !== undefined);
}

/** An executable `name` in `dir/bin` that runs a fake CLI from fixtures/ with this Node. */
export function installFake(dir: string, name: string, script: string): string {
  const bin = path.join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const file = path.join(bin, name);
  const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;
  writeFileSync(file, `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(path.join(fixtures, script))} "$@"\n`);
  chmodSync(file, 0o755);
  return file;
}

export interface FakeInvocation {
  cli: 'claude' | 'codex';
  pid: number;
  argv: string[];
  prompt: string;
  cwd: string;
  [key: string]: unknown;
}

/** Every run of a fake CLI so far, oldest first. */
export function invocations(stateDir: string): FakeInvocation[] {
  const file = path.join(stateDir, 'log.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as FakeInvocation);
}

/** Helpers over one installation's conversation with a role. */
export function conversations(t: TestInstallation) {
  const detail = (id: number) => t.owner('conversations.get', { id });
  return {
    async open(agent: AgentSettings, name = 'assistant') {
      const role = await t.owner('roles.create', { name, agent });
      const conversation = await t.owner('conversations.open', { roleId: role.id });
      return { role, conversation };
    },
    detail,
    /**
     * Sends a message and resolves with the conversation once the turn it starts has ended.
     * Real agents start slowly on a loaded machine: the wait is generous.
     */
    async turn(id: number, text: string, timeoutMs = 60_000) {
      const before = (await detail(id)).turns.length;
      await t.owner('conversations.send', { id, text });
      return t.waitFor(
        async () => {
          const d = await detail(id);
          const last = d.turns.at(-1);
          return d.turns.length > before && last && last.status !== 'running' ? d : undefined;
        },
        `the turn for "${text}"`,
        timeoutMs,
      );
    },
    /** Sends a message and resolves once its turn is running. */
    async start(id: number, text: string, timeoutMs = 60_000) {
      const before = (await detail(id)).turns.length;
      await t.owner('conversations.send', { id, text });
      return t.waitFor(
        async () => {
          const d = await detail(id);
          return d.turns.length > before && d.turns.at(-1)?.status === 'running' ? d : undefined;
        },
        `the turn for "${text}" to start`,
        timeoutMs,
      );
    },
  };
}

/** The last message in the conversation (a reply or Parley's notice). */
export const lastMessage = (detail: { messages: { body: string }[] }) => detail.messages.at(-1)?.body ?? '';

/** A real CLI on this machine, from an environment variable or PATH; null with the reason when there is none. */
export function realCli(variable: string, name: string): { path: string | null; reason: string } {
  const explicit = process.env[variable];
  const candidates = explicit
    ? [explicit]
    : (process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, name));
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found)
    return {
      path: null,
      reason: `no \`${name}\` ${explicit ? `at ${variable}=${explicit}` : `on PATH (set ${variable} to its path)`}`,
    };
  try {
    const version = execFileSync(found, ['--version'], { encoding: 'utf8', timeout: 60_000 }).trim();
    return { path: found, reason: version };
  } catch (error) {
    return { path: null, reason: `\`${found} --version\` failed: ${(error as Error).message}` };
  }
}

/** A process and its live descendants (Linux, any process group), with command lines and environments. */
export function processTree(root: number): { pid: number; pgid: number; cmdline: string[]; environ: string[] }[] {
  const all = new Map<number, { ppid: number; pgid: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z') all.set(Number(entry), { ppid: Number(fields[1]), pgid: Number(fields[2]) });
    } catch {
      // It ended while we looked.
    }
  }
  const found: { pid: number; pgid: number; cmdline: string[]; environ: string[] }[] = [];
  const queue = [root];
  while (queue.length) {
    const pid = queue.shift()!;
    const info = all.get(pid);
    if (!info) continue;
    try {
      found.push({
        pid,
        pgid: info.pgid,
        cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean),
        environ: readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean),
      });
    } catch {
      continue;
    }
    for (const [child, { ppid }] of all) if (ppid === pid) queue.push(child);
  }
  return found;
}

/** How a CLI process ended, for a stream's `finish`. */
export const exited = (code: number, stderr = ''): ProcessResult => ({
  code,
  signal: null,
  stdout: '',
  stderr,
  truncated: false,
});

/** A fresh session's ID. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
