// The CLI writes its answer straight to its standard output and ends there (cli.ts says
// why). Here a stand-in for Parley's role API answers with 2 MB, more than any pipe holds
// at once, so the CLI must wait on its reader: one that reads it all gets all of it, and
// one that stops early (`parley history … | head`) ends it quietly, and one whose pipe
// was made non-blocking still gets all of it.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distPaths } from '../paths';

// Python holds that pipe: Node has no way to make one, or to set O_NONBLOCK on it; its size is read the Linux way.
const nonBlockingSkip =
  process.platform !== 'linux'
    ? 'it reads the pipe size with a Linux fcntl'
    : spawnSync('python3', ['--version']).status !== 0
      ? 'python3 is not installed'
      : null;
if (nonBlockingSkip) console.log(`cli-output: the non-blocking pipe case is skipped: ${nonBlockingSkip}`);

describe('the parley CLI’s answer on its standard output', () => {
  let dir: string;
  let server: http.Server;
  let env: NodeJS.ProcessEnv;
  const big = 'x'.repeat(2_000_000);

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'parley-cli-output-'));
    const socketPath = path.join(dir, 'api.sock');
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const body = JSON.stringify({ ok: true, result: { big } });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    env = { PATH: process.env.PATH, PARLEY_TOKEN: 'prt_x', PARLEY_API: socketPath, CLI: distPaths.cli, DIR: dir };
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const sh = (script: string) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile('sh', ['-c', script], { env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
        resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
      );
    });

  it('reaches a reader whole, however much more it is than the pipe holds', async () => {
    const ran = await sh(`${JSON.stringify(process.execPath)} "$CLI" context | wc -c`);
    expect(ran.stderr).toBe('');
    // Pretty-printed: {, the field on its own line, }, and the closing newline.
    const expected = JSON.stringify({ big }, null, 2).length + 1;
    expect(Number(ran.stdout.trim())).toBe(expected);
  });

  it.skipIf(nonBlockingSkip !== null)(
    'gets all of it through to a reader whose pipe someone made non-blocking',
    async () => {
      const reader = `
import fcntl, os, subprocess, sys, termios, array
r, w = os.pipe()
fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
child = subprocess.Popen([sys.argv[1], sys.argv[2], 'context'], stdout=w, stderr=subprocess.PIPE)
os.close(w)
# Read nothing until the pipe is full, so the CLI's write has met EAGAIN.
capacity = fcntl.fcntl(r, 1032)  # F_GETPIPE_SZ
pending = array.array('i', [0])
while pending[0] < capacity and child.poll() is None:
    fcntl.ioctl(r, termios.FIONREAD, pending)
data = b''
while True:
    chunk = os.read(r, 1 << 16)
    if not chunk: break
    data += chunk
print(len(data), child.wait(), repr(child.stderr.read().decode()))
`;
      const ran = await new Promise<string>((resolve, reject) =>
        execFile('python3', ['-c', reader, process.execPath, distPaths.cli], { env }, (error, stdout) => {
          if (error) reject(new Error(`the reader failed: ${error.message}`));
          else resolve(stdout.trim());
        }),
      );
      expect(ran).toBe(`${JSON.stringify({ big }, null, 2).length + 1} 0 ''`);
    },
  );

  it('ends quietly, with success, when its reader stops early', async () => {
    const ran = await sh(
      `{ ${JSON.stringify(process.execPath)} "$CLI" context 2>"$DIR/err"; echo $? > "$DIR/code"; } | head -c 10`,
    );
    expect(ran.stdout).toBe('{\n  "big":');
    expect(readFileSync(path.join(dir, 'err'), 'utf8')).toBe('');
    expect(readFileSync(path.join(dir, 'code'), 'utf8').trim()).toBe('0');
  });
});
