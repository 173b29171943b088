// Which DHT an installation joins, and that nothing the project runs joins the public one.
import { describe, expect, it } from 'vitest';
import { dhtBootstrapFromEnv } from './net/dht-bootstrap';
import { openTestInstallation } from '../test-support/installation';
import { makeDataDir, removeDataDir, runServeToExit, startServe } from '../test-support/serve-process';

describe('the DHT switches', () => {
  it('keeps every installation the suite starts off the public DHT', async () => {
    // The suite's environment (vitest.config.ts), which every in-process installation reads.
    const fromEnv = dhtBootstrapFromEnv();
    expect(fromEnv.ok && fromEnv.bootstrap.kind).not.toBe('public');
    expect(fromEnv.ok && fromEnv.bootstrap.kind === 'nodes' ? fromEnv.bootstrap.nodes : []).toEqual([]);
    const inProcess = await openTestInstallation({ name: 'alice', peerPort: 0 });
    try {
      expect((await inProcess.owner('network.get', {})).dht).toMatchObject({ state: 'off', key: null });
    } finally {
      await inProcess.close();
    }
    // A `parley serve` child the tests, the benchmarks and the demo start (testing/serve-process.ts).
    const serve = await startServe({ name: 'bob' });
    try {
      const api = await serve.connect();
      expect((await api.call('network.get', {})).dht).toMatchObject({ state: 'off', bootstrap: 'off' });
      api.close();
    } finally {
      await serve.stop();
      removeDataDir(serve.dataDir);
    }
  });

  it.each([
    [['--dht-bootstrap', 'somewhere'], {}, /--dht-bootstrap must be off or a comma-separated list of HOST:PORT/],
    [[], { PARLEY_DHT_BOOTSTRAP: 'localhost' }, /PARLEY_DHT_BOOTSTRAP must be off or a comma-separated list/],
  ])('exits with 2 on %j %j, saying why', async (args, env, message) => {
    const data = makeDataDir('parley-dht-args-');
    try {
      const result = await runServeToExit(['--data', data, ...args], env);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).not.toContain('#token=');
    } finally {
      removeDataDir(data);
    }
  });
});
