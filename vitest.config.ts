import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{main,test-support,shared,preload,renderer,e2e}/**/*.test.{ts,tsx}'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Tests spawn real agents and servers; two cores do not gain from more workers.
    maxWorkers: 2,
    reporters: ['default'],
    // Installations made by tests (also `parley serve` children) get no first-run `assistant` role,
    // and never join the public DHT: a test that wants the DHT gives its own loopback testnet.
    // Agents run without the OS sandbox unless a test asks for it (main/sandbox/ does, with the
    // real bubblewrap): the others look at agents' processes and files from outside.
    env: { PARLEY_DEFAULT_ROLE: 'off', PARLEY_DHT_BOOTSTRAP: 'off', PARLEY_SANDBOX: 'off' },
  },
});
