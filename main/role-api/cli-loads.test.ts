// Every agent action starts the `parley` CLI, so what it loads is what every action
// waits for (bench/cli-start.ts measures it). These guard the shape that keeps it close
// to a bare `node`: the agent commands load one file of ours and nothing else — no
// package (zod alone doubles the start), no `node:http`, not the ES module loader — and
// `parley mcp` loads its one bundled file, not the packages' files one by one; and the
// launcher on the agents' PATH leaves out NODE_EXTRA_CA_CERTS, which Node would read and
// parse on every start although the CLI never speaks TLS.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distPaths, projectRoot } from '../paths';
import { openTestInstallation } from '../../test-support/installation';
import { exitCodes } from './errors';

interface Loaded {
  code: number;
  files: string[];
  builtins: string[];
}

describe('what the parley CLI loads', () => {
  let dir: string;
  let probe: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'parley-cli-loads-'));
    probe = path.join(dir, 'probe.cjs');
    // Preloaded: when the process exits, writes the files it required and the built-in modules it loaded.
    writeFileSync(
      probe,
      `process.on('exit', () => require('node:fs').writeFileSync(process.env.PROBE_OUT, JSON.stringify({
        files: Object.keys(require.cache).filter((file) => file !== __filename),
        builtins: process.moduleLoadList,
      })));`,
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function run(args: string[], stdin = ''): Promise<Loaded> {
    const out = path.join(dir, `${args[0]}.json`);
    return new Promise((resolve, reject) => {
      const child = execFile(
        process.execPath,
        ['--require', probe, distPaths.cli, ...args],
        {
          env: {
            PATH: process.env.PATH,
            PARLEY_TOKEN: 'prt_x',
            PARLEY_API: path.join(dir, 'none.sock'),
            PROBE_OUT: out,
          },
        },
        (error) => {
          try {
            const loaded = JSON.parse(readFileSync(out, 'utf8')) as Omit<Loaded, 'code'>;
            resolve({ code: error ? (error.code as number) : 0, ...loaded });
          } catch (problem) {
            reject(problem instanceof Error ? problem : new Error(String(problem)));
          }
        },
      );
      child.stdin!.end(stdin);
    });
  }

  it.each([
    ['context'],
    ['peers'],
    ['report', 'done'],
    ['reply', 'an answer'],
    ['history', 'bob/researcher'],
    ['send', '--to', 'bob/researcher', 'a question'],
  ])('parley %s loads only dist/cli.cjs: no package, no node:http, no ES module loader', async (...args) => {
    const loaded = await run(args);
    expect(loaded.code, 'it tried to call Parley (and found no socket)').toBe(exitCodes.connect);
    expect(loaded.files).toEqual([distPaths.cli]);
    expect(loaded.builtins).not.toContain('NativeModule http');
    expect(loaded.builtins).not.toContain('NativeModule internal/modules/esm/loader');
  });

  it('the parley launcher on the agents’ PATH starts the CLI without NODE_EXTRA_CA_CERTS, and with the rest', async () => {
    const t = await openTestInstallation();
    try {
      const out = path.join(dir, 'launcher.json');
      const seen = path.join(dir, 'env-probe.cjs');
      writeFileSync(
        seen,
        `require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({ ca: process.env.NODE_EXTRA_CA_CERTS ?? null, path: process.env.PATH, token: process.env.PARLEY_TOKEN }));`,
      );
      const code = await new Promise<number>((resolve) => {
        execFile(
          path.join(t.installation.dataDir, 'bin', 'parley'),
          ['context'],
          {
            env: {
              PATH: process.env.PATH,
              PARLEY_TOKEN: 'prt_x',
              PARLEY_API: path.join(dir, 'none.sock'),
              NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt',
              NODE_OPTIONS: `--require ${seen}`,
            },
          },
          (error) => resolve(error ? (error.code as number) : 0),
        );
      });
      expect(code).toBe(exitCodes.connect);
      expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual({ ca: null, path: process.env.PATH, token: 'prt_x' });
    } finally {
      await t.close();
    }
  });

  it('parley mcp loads its one bundled file, without the ES module loader (which would scan all of it first)', async () => {
    const loaded = await run(['mcp']);
    expect(loaded.code).toBe(0);
    expect(loaded.builtins).not.toContain('NativeModule internal/modules/esm/loader');
    expect(loaded.files.map((file) => path.relative(projectRoot, file)).sort()).toEqual([
      path.join('dist', 'cli.cjs'),
      path.join('dist', 'commands', 'mcp.cjs'),
    ]);
  });
});
