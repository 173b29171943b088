// Bundles the Node-side entry points with esbuild. Dependencies stay external (they
// load from node_modules); our own code becomes one file per entry so the agent-facing
// `parley` CLI and the scripted agent start as fast as a bare `node` script.
//
// Two builds, so that what ships never carries test code: the app's entries share
// dist/chunks/, while the benchmarks, the demo and the test helpers (dist/testing/:
// the wire peer driver and the stand-in `electron` module) share chunks of their own
// under dist/testing/chunks/. electron-builder.yml leaves those out.
import { build } from 'esbuild';
import { chmodSync, rmSync } from 'node:fs';

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
};

/** One CommonJS file in dist/, named .cjs (the package is "type": "module"). */
const commonJs = { ...common, format: 'cjs', outdir: 'dist', outExtension: { '.js': '.cjs' } };

/**
 * The CLI's commands that need more than the role API client are entries of their own,
 * which the CLI imports on demand instead of bundling them: `serve` (an ES module, like
 * the rest of the app) and `mcp` (one CommonJS file with the MCP SDK and zod inside, see
 * below).
 */
const lazyCommands = {
  './serve': './commands/serve.js',
  './role-api/mcp-server': './commands/mcp.cjs',
};
const lazyCommandsPlugin = {
  name: 'lazy-commands',
  setup(builder) {
    builder.onResolve({ filter: /^\.\// }, (args) =>
      args.importer.endsWith('main/cli.ts') && lazyCommands[args.path]
        ? { path: lazyCommands[args.path], external: true }
        : undefined,
    );
  },
};

// Chunk names carry a content hash: stale ones would pile up (and be packaged) without this.
for (const dir of ['dist/chunks', 'dist/testing/chunks']) rmSync(dir, { recursive: true, force: true });

await Promise.all([
  build({
    ...common,
    format: 'esm',
    entryPoints: {
      'commands/serve': 'main/serve.ts',
      'openai-worker': 'main/agents/openai-worker.ts',
      'acp-worker': 'main/agents/acp-worker.ts',
      'electron/main': 'main/app/electron-main.ts',
    },
    outdir: 'dist',
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    external: ['electron'],
  }),
  // The `parley` CLI, which every agent action starts: CommonJS, because Node starts a
  // CommonJS file without initialising its ES module loader (about 7 ms here, a quarter
  // of a bare `node` start).
  build({
    ...commonJs,
    entryPoints: { cli: 'main/cli.ts' },
    plugins: [lazyCommandsPlugin],
    // The lazy commands load with require(): import() of a CommonJS file first scans all of
    // it for its exports (a second of CPU here for mcp's 1.4 MB), and Node >= 20.19
    // requires an ES module (serve) as well.
    supported: { 'dynamic-import': false },
  }),
  // The scripted agent, which each of its turns starts: CommonJS for the same reason as
  // the CLI (about 9 ms of a 120 ms start here).
  build({
    ...commonJs,
    entryPoints: { 'scripted-agent': 'main/agents/scripted-agent.ts' },
    supported: { 'dynamic-import': false },
  }),
  // `parley mcp`, which each turn of an MCP agent starts: its packages bundled in. From
  // node_modules the MCP SDK's server loads ~150 files of its own, zod's and ajv's, and
  // resolving and compiling them one by one costs more than the code itself (about 300 ms
  // of CPU per start here through the ES module loader, 200 through CommonJS, 130 bundled).
  build({
    ...commonJs,
    packages: undefined,
    entryPoints: { 'commands/mcp': 'main/role-api/mcp-server.ts' },
  }),
  build({
    ...common,
    format: 'esm',
    entryPoints: {
      'bench/run': 'bench/run.ts',
      'bench/ui': 'bench/ui.ts',
      demo: 'scripts/demo.ts',
      // The wire peer driver: the wire benchmark's two installations, and fault tests'.
      'testing/wire-peer': 'test-support/wire-peer.ts',
      // A command agent that asks for a tool through the role API, as the acp worker does.
      'testing/permission-asker': 'test-support/permission-asker.ts',
      // The stand-in `electron` module the desktop main process runs on under plain Node.
      'testing/electron/index': 'test-support/electron/index.ts',
      'testing/electron/hooks': 'test-support/electron/hooks.ts',
      'testing/electron/register': 'test-support/electron/register.ts',
    },
    outdir: 'dist',
    splitting: true,
    chunkNames: 'testing/chunks/[name]-[hash]',
  }),
  // A sandboxed preload must be CommonJS.
  build({
    ...commonJs,
    entryPoints: { 'electron/preload': 'preload/preload.ts' },
    external: ['electron'],
  }),
]);
chmodSync('bin/parley.js', 0o755);
