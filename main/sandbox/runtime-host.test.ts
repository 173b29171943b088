// The sandbox's host starts processes for Parley, which gets their pipes: what they say
// at once is not lost, their input ends when Parley ends it, their exit is told, and a
// program that is not there is refused with the system's code.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Readable } from 'node:stream';
import { sandboxHosts } from '../../test-support/processes';
import { until } from '../../test-support/until';
import { RuntimeHost, type AgentChild } from './runtime-host';

const moduleUrl = pathToFileURL(createRequire(import.meta.url).resolve('@anthropic-ai/sandbox-runtime')).href;
const host = new RuntimeHost(moduleUrl, null);
afterAll(() => host.close());

function readAll(stream: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (text += chunk));
    stream.once('end', () => resolve(text));
    stream.once('error', reject);
  });
}

const exited = (child: AgentChild) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });

const stat = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { ppid: Number(fields[1]), pgrp: Number(fields[2]) };
};

describe.skipIf(process.platform !== 'linux')('a process the sandbox’s host starts', () => {
  it('is the leader of its own group, a child of the host and not of Parley, and Parley has its pipes', async () => {
    const child = await host.start('sh', ['-c', 'echo early; echo said >&2; cat; echo after >&2; exit 3'], {
      cwd: '/',
      env: { PATH: process.env.PATH },
    });
    const pid = child.pid!;
    const { ppid, pgrp } = stat(pid);
    expect(pgrp).toBe(pid);
    expect(ppid).not.toBe(process.pid);
    const out = readAll(child.stdout!);
    const err = readAll(child.stderr!);
    child.stdin!.end('hello\n');
    // What it wrote before Parley had its pipes is there, then what it read.
    expect(await out).toBe('early\nhello\n');
    expect(await err).toBe('said\nafter\n');
    expect(await exited(child)).toEqual({ code: 3, signal: null });
  });

  it('tells how it ended when it is killed', async () => {
    const child = await host.start('sleep', ['30'], { cwd: '/', env: { PATH: process.env.PATH } });
    process.kill(-child.pid!, 'SIGTERM');
    expect(await exited(child)).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('waits on its input until Parley ends it', async () => {
    const child = await host.start('cat', [], { cwd: '/', env: {} });
    const out = readAll(child.stdout!);
    child.stdin!.write('one\n');
    child.stdin!.end('two\n');
    expect(await out).toBe('one\ntwo\n');
    expect((await exited(child)).code).toBe(0);
  });

  it('is refused, with the system’s code, when its program is not there or its folder is not', async () => {
    await expect(host.start('/nonexistent/program', [], { cwd: '/', env: {} })).rejects.toMatchObject({
      code: 'ENOENT',
    });
    await expect(
      host.start('true', [], { cwd: '/nonexistent-folder', env: { PATH: process.env.PATH } }),
    ).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('starts many at once, each with its own pipes', async () => {
    const children = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        host.start('sh', ['-c', `echo ${i}`], { cwd: '/', env: { PATH: process.env.PATH } }),
      ),
    );
    const said = await Promise.all(children.map((child) => readAll(child.stdout!)));
    expect(said).toEqual(Array.from({ length: 20 }, (_, i) => `${i}\n`));
    await Promise.all(children.map(exited));
  });
});

describe('a host that has ended', () => {
  it('refuses to start anything, saying so', async () => {
    const gone = new RuntimeHost(moduleUrl, null);
    await gone.close();
    await expect(gone.start('true', [], { cwd: '/', env: {} })).rejects.toThrow(/host ended/);
  });
});

describe('a host that ends without being closed', () => {
  it('is started again, and what is started after that starts', async () => {
    const before = sandboxHosts(process.pid);
    const again = new RuntimeHost(moduleUrl, null);
    try {
      await exited(await again.start('true', [], { cwd: '/', env: { PATH: process.env.PATH } }));
      const [pid] = sandboxHosts(process.pid).filter((other) => !before.includes(other));
      expect(pid).toBeGreaterThan(0);
      process.kill(pid!, 'SIGKILL');
      await until(() => !sandboxHosts(process.pid).includes(pid!), 'the killed host to be gone', 10_000);
      // A start sent to the host being replaced fails, saying so; the next ones start.
      const child = await until(
        () => again.start('sh', ['-c', 'echo back'], { cwd: '/', env: { PATH: process.env.PATH } }).catch(() => null),
        'a start on the host started again',
        10_000,
      );
      expect(await readAll(child.stdout!)).toBe('back\n');
      expect(sandboxHosts(process.pid)).not.toContain(pid);
    } finally {
      await again.close();
    }
  });

  it('takes what it was running as killed, saying why', async () => {
    const before = sandboxHosts(process.pid);
    const again = new RuntimeHost(moduleUrl, null);
    try {
      const child = await again.start('sleep', ['60'], { cwd: '/', env: { PATH: process.env.PATH } });
      expect(child.lost).toBeNull();
      const [pid] = sandboxHosts(process.pid).filter((other) => !before.includes(other));
      process.kill(pid!, 'SIGKILL');
      expect(await exited(child)).toEqual({ code: null, signal: 'SIGKILL' });
      expect(child.lost).toBe('the sandbox’s host ended (SIGKILL)');
      // The process itself is Parley's to end, through its group, as the run manager does.
      process.kill(-child.pid!, 'SIGKILL');
    } finally {
      await again.close();
    }
  });
});
