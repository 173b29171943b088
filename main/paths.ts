// Where Parley's own files are, from source (vitest, tsx) and from the dist bundle alike.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'bin', 'parley.js'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the Parley installation folder');
    dir = parent;
  }
}

export const projectRoot = findRoot().replace(/app\.asar(?=$|[\\/])/, 'app.asar.unpacked');

/** socat tied to the process that starts it (bin/parley-socat), for the sandbox's relays. */
export const socatWithParent = path.join(projectRoot, 'bin', 'parley-socat');

export const distPaths = {
  cli: path.join(projectRoot, 'dist', 'cli.cjs'),
  scriptedAgent: path.join(projectRoot, 'dist', 'scripted-agent.cjs'),
  renderer: path.join(projectRoot, 'dist', 'renderer'),
};

/** Fails early with a clear message when the agent-facing bundles were never built. */
export function assertBuilt(): void {
  for (const file of [distPaths.cli, distPaths.scriptedAgent]) {
    if (!existsSync(file))
      throw new Error(`${path.relative(projectRoot, file)} is missing: run \`npm run build\` first`);
  }
}
