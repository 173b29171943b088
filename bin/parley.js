#!/usr/bin/env node
// The `parley` command. The real code is bundled into dist/ by `npm run build`
// (npm ci runs it through the prepare script).
import('../dist/cli.cjs').catch((error) => {
  if (error && error.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('cli.cjs')) {
    process.stderr.write('parley: the app is not built yet; run `npm run build` first.\n');
    process.exit(70);
  }
  throw error;
});
