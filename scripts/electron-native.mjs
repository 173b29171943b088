// Builds better-sqlite3 for Electron into .electron-native/, apart from the Node
// build in node_modules that the tests and `parley serve` use, so `npm start` and
// `npm test` work from one checkout. Packaged apps get theirs from electron-builder.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const target = path.join(root, '.electron-native');
const electronVersion = require('electron/package.json').version;
const sqlite = require('better-sqlite3/package.json');
const stampFile = path.join(target, 'stamp.json');
const stamp = JSON.stringify({ electron: electronVersion, betterSqlite3: sqlite.version });
const binary = path.join(target, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');

if (existsSync(binary) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) process.exit(0);

console.error(`Building better-sqlite3 ${sqlite.version} for Electron ${electronVersion} (once)…`);
rmSync(target, { recursive: true, force: true });
const moduleDir = path.join(target, 'node_modules', 'better-sqlite3');
mkdirSync(moduleDir, { recursive: true });
const source = path.dirname(require.resolve('better-sqlite3/package.json'));
cpSync(source, moduleDir, {
  recursive: true,
  filter: (file) => !file.includes(`${path.sep}build${path.sep}`) && !file.endsWith(`${path.sep}build`),
});
writeFileSync(
  path.join(target, 'package.json'),
  JSON.stringify({ name: 'parley-electron-native', private: true, dependencies: { 'better-sqlite3': sqlite.version } }),
);
try {
  const { rebuild } = await import('@electron/rebuild');
  await rebuild({
    buildPath: target,
    electronVersion,
    onlyModules: ['better-sqlite3'],
    force: true,
    buildFromSource: true,
  });
} catch (error) {
  console.error(`Could not build better-sqlite3 for Electron: ${error.message}`);
  console.error(
    'Electron needs its headers from the internet for this. Without them, run Parley headless: npm run serve',
  );
  process.exit(1);
}
writeFileSync(stampFile, stamp);
