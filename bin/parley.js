#!/usr/bin/env node
// The `parley` command. The real code is bundled into dist/ by `npm run build` (npm ci
// runs it through the prepare script). This file is CommonJS (bin/package.json), like
// dist/cli.cjs, so the command starts without Node's ES module loader.
let cli;
try {
  cli = require.resolve('../dist/cli.cjs');
} catch {
  process.stderr.write('parley: the app is not built yet; run `npm run build` first.\n');
  process.exit(70);
}
require(cli);
