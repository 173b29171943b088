// Every way the project starts an installation keeps it off the public DHT by itself,
// whatever environment it runs in: the suite's config sets PARLEY_DHT_BOOTSTRAP=off, but
// the benchmarks and the demo run outside it. Checked without going near any network:
// here the environment holds a value every installation refuses, so a starter that hands
// the environment on unchanged fails to start instead of reaching out.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DHT_BOOTSTRAP_ENV } from './net/dht-bootstrap';
import { projectRoot } from './paths';
import { startDesktop } from '../test-support/desktop-process';
import { makeDataDir, removeDataDir, startServe } from '../test-support/serve-process';
import { startWirePeer } from '../test-support/wire-peer';

const REFUSED = 'not-a-bootstrap-list';
let before: string | undefined;
beforeAll(() => {
  before = process.env[DHT_BOOTSTRAP_ENV];
  process.env[DHT_BOOTSTRAP_ENV] = REFUSED;
});
afterAll(() => {
  if (before === undefined) delete process.env[DHT_BOOTSTRAP_ENV];
  else process.env[DHT_BOOTSTRAP_ENV] = before;
});

describe('the starters of installations', () => {
  it('start `parley serve` off the DHT whatever the environment says', async () => {
    const serve = await startServe({ name: 'alice' });
    try {
      const api = await serve.connect();
      expect((await api.call('network.get', {})).dht).toMatchObject({ state: 'off', bootstrap: 'off' });
      api.close();
    } finally {
      await serve.stop();
      removeDataDir(serve.dataDir);
    }
  });

  it('start the desktop main process off the DHT whatever the environment says', async () => {
    const desktop = await startDesktop({ name: 'bob' });
    try {
      expect((await desktop.invoke('network.get', {})).dht).toMatchObject({ state: 'off', bootstrap: 'off' });
    } finally {
      await desktop.quit();
      removeDataDir(desktop.dataDir);
    }
  });

  it('start a wire peer (the wire benchmarks’ and the crash tests’ installations) off the DHT', async () => {
    const dataDir = makeDataDir('parley-starter-wire-');
    try {
      const peer = await startWirePeer({ dataDir, name: 'carol' }).catch((error: Error) => {
        throw new Error(`the wire peer handed on ${DHT_BOOTSTRAP_ENV}=${REFUSED}: ${error.message}`);
      });
      const { result } = await peer.request<{ result: { dht: { state: string; bootstrap: string } } }>('call', {
        method: 'network.get',
        params: {},
      });
      expect(result.dht).toMatchObject({ state: 'off', bootstrap: 'off' });
      await peer.exit();
    } finally {
      removeDataDir(dataDir);
    }
  });

  it('set the benchmarks’ and the demo’s own default before they start anything', () => {
    const build = readFileSync(path.join(projectRoot, 'scripts', 'build.mjs'), 'utf8');
    // The programs the build makes that start installations themselves.
    const programs = [...build.matchAll(/(?:'(?:bench\/[\w-]+)'|demo): '([\w/.-]+\.ts)'/g)].map((m) => m[1]!);
    expect(programs.sort()).toEqual(['bench/run.ts', 'bench/ui.ts', 'scripts/demo.ts']);
    for (const program of programs) {
      const source = readFileSync(path.join(projectRoot, program), 'utf8');
      expect(source, program).toContain(`process.env.${DHT_BOOTSTRAP_ENV} ??= 'off';`);
    }
  });
});
