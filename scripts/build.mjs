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

// Chunk names carry a content hash: stale ones would pile up (and be packaged) without this.
for (const dir of ['dist/chunks', 'dist/testing/chunks']) rmSync(dir, { recursive: true, force: true });

await Promise.all([
  build({
    ...common,
    format: 'esm',
    entryPoints: {
      cli: 'main/cli.ts',
      'scripted-agent': 'main/agents/scripted-agent.ts',
      'openai-worker': 'main/agents/openai-worker.ts',
      'acp-worker': 'main/agents/acp-worker.ts',
      'electron/main': 'main/app/electron-main.ts',
    },
    outdir: 'dist',
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    external: ['electron'],
  }),
  build({
    ...common,
    format: 'esm',
    entryPoints: {
      'bench/run': 'bench/run.ts',
      'bench/ui': 'bench/ui.ts',
      demo: 'scripts/demo.ts',
      // The wire peer driver: the wire benchmark's two installations, and fault tests'.
      'testing/wire-peer': 'main/testing/wire-peer.ts',
      // The stand-in `electron` module the desktop main process runs on under plain Node.
      'testing/electron/index': 'main/testing/electron/index.ts',
      'testing/electron/hooks': 'main/testing/electron/hooks.ts',
      'testing/electron/register': 'main/testing/electron/register.ts',
    },
    outdir: 'dist',
    splitting: true,
    chunkNames: 'testing/chunks/[name]-[hash]',
  }),
  // A sandboxed preload must be CommonJS.
  build({
    ...common,
    format: 'cjs',
    entryPoints: { 'electron/preload': 'preload/preload.ts' },
    outdir: 'dist',
    outExtension: { '.js': '.cjs' },
    external: ['electron'],
  }),
]);
chmodSync('bin/parley.js', 0o755);
