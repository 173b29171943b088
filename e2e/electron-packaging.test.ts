// The packaging configuration, checked the way electron-builder itself checks it:
// `npm run dist` cannot run here (it downloads Electron), so this loads
// electron-builder.yml with app-builder-lib's own loader, validates it against
// electron-builder's JSON schema, and runs its own file matcher over the built tree to
// see exactly which files an installer would carry.
import { existsSync, readdirSync, readFileSync, statSync, type Stats } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

type Config = Record<string, unknown> & {
  files?: unknown;
  asarUnpack?: string[];
  electronFuses?: Record<string, boolean>;
  linux?: Record<string, unknown>;
  mac?: Record<string, unknown>;
  win?: Record<string, unknown>;
};
interface FileMatcher {
  createFilter(): (file: string, stat: Stats) => boolean;
}
const builderConfig = require('app-builder-lib/out/util/config/config.js') as {
  getConfig(projectDir: string, configPath: string | null, configFromOptions: unknown): Promise<Config>;
  validateConfiguration(config: Config, debugLogger: { isEnabled: boolean; add(): void }): Promise<void>;
};
const fileMatcher = require('app-builder-lib/out/fileMatcher.js') as {
  getFileMatchers(
    config: Config,
    name: 'files',
    defaultDestination: string,
    options: {
      macroExpander: (pattern: string) => string;
      customBuildOptions: Record<string, unknown>;
      globalOutDir: string;
      defaultSrc: string;
    },
  ): FileMatcher[] | null;
};
const quietLogger = { isEnabled: false, add: () => undefined };

let config: Config;

beforeAll(async () => {
  if (!existsSync(path.join(root, 'dist', 'electron', 'main.js')))
    throw new Error('The app is not built: run `npm run build` first (`npm test` does).');
  config = await builderConfig.getConfig(root, null, null);
});

/** Every file under the project (node_modules aside: electron-builder copies production dependencies itself) that the platform's `files` let through. */
function packagedFiles(platform: 'linux' | 'mac' | 'win'): string[] {
  const matchers = fileMatcher.getFileMatchers(config, 'files', '/app', {
    macroExpander: (pattern) => pattern.replaceAll('${os}', platform).replaceAll('${arch}', 'x64'),
    customBuildOptions: config[platform] ?? {},
    globalOutDir: path.join(root, 'release'),
    defaultSrc: root,
  });
  if (!matchers) throw new Error('electron-builder.yml lists no files');
  const filters = matchers.map((matcher) => matcher.createFilter());
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (dir === root && (name === 'node_modules' || name === '.git')) continue;
      const full = path.join(dir, name);
      const stat = statSync(full);
      // electron-builder's walker does not descend into a folder its filter refuses.
      if (!filters.some((filter) => filter(full, stat))) continue;
      if (stat.isDirectory()) walk(full);
      else found.push(path.relative(root, full).split(path.sep).join('/'));
    }
  };
  walk(root);
  return found.sort();
}

/** Packages the app depends on at run time, the whole tree (node_modules is flat here). */
function productionPackages(): string[] {
  const seen = new Set<string>();
  const readDeps = (dir: string) => {
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    return Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies });
  };
  const queue = readDeps(root);
  while (queue.length > 0) {
    const name = queue.shift()!;
    const dir = path.join(root, 'node_modules', name);
    if (seen.has(name) || !existsSync(path.join(dir, 'package.json'))) continue;
    seen.add(name);
    queue.push(...readDeps(dir));
  }
  return [...seen].sort();
}

/** Whether a package brings a native addon: prebuilt binaries or a build of its own. */
function isNative(name: string): boolean {
  const dir = path.join(root, 'node_modules', name);
  return existsSync(path.join(dir, 'binding.gyp')) || existsSync(path.join(dir, 'prebuilds'));
}

describe('electron-builder.yml', () => {
  it('unpacks every native module from the asar (the DHT carrier’s udx-native and sodium-native among them)', () => {
    const native = productionPackages().filter(isNative);
    expect(native).toEqual(expect.arrayContaining(['better-sqlite3', 'sodium-native', 'udx-native']));
    const unpacked = new Set(
      (config.asarUnpack ?? []).map((pattern) => /^node_modules\/(.+)\/\*\*$/.exec(pattern)?.[1]).filter(Boolean),
    );
    expect(native.filter((name) => !unpacked.has(name))).toEqual([]);
  });

  it('unpacks the agents’ sandbox runtime, every package it imports and the helpers it runs by path', () => {
    const unpacked = (config.asarUnpack ?? [])
      .map((pattern) => /^(node_modules\/.+)\/\*\*$/.exec(pattern)?.[1])
      .filter((dir): dir is string => dir !== undefined);
    const covered = (dir: string) => unpacked.some((pattern) => dir === pattern || dir.startsWith(`${pattern}/`));
    // The package and what it imports, each found where Node would find it (its own node_modules first).
    const missing: string[] = [];
    const seen = new Set<string>();
    const visit = (dir: string) => {
      if (seen.has(dir)) return;
      seen.add(dir);
      if (!covered(dir)) missing.push(dir);
      const pkg = JSON.parse(readFileSync(path.join(root, dir, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
      };
      for (const name of Object.keys(pkg.dependencies ?? {})) {
        const nested = `${dir}/node_modules/${name}`;
        visit(existsSync(path.join(root, nested, 'package.json')) ? nested : `node_modules/${name}`);
      }
    };
    visit('node_modules/@anthropic-ai/sandbox-runtime');
    expect(seen.size).toBeGreaterThan(1);
    expect(missing).toEqual([]);
    // What main/sandbox/sandbox.ts names to the runtime by path.
    for (const file of ['vendor/seccomp/x64/apply-seccomp', 'vendor/java-proxy-agent/srt-proxy-agent.jar'])
      expect(existsSync(path.join(root, 'node_modules/@anthropic-ai/sandbox-runtime', file))).toBe(true);
    // Parley's own, which the runtime starts for its relays: unpacked, and a program.
    expect(config.asarUnpack).toContain('bin/**');
    expect(statSync(path.join(root, 'bin/parley-socat')).mode & 0o111).toBe(0o111);
  });

  it('passes electron-builder’s own schema check, which does refuse a misspelt option', async () => {
    await expect(builderConfig.validateConfiguration(config, quietLogger)).resolves.toBeUndefined();
    await expect(
      builderConfig.validateConfiguration({ ...config, electronFuses: { runAsNod: true } }, quietLogger),
    ).rejects.toThrow(/does not match the API schema/);
  });

  it('builds AppImage and deb on Linux, dmg on macOS and nsis on Windows, through `npm run dist`', () => {
    expect(config.linux?.target).toEqual(['AppImage', 'deb']);
    expect(config.mac?.target).toBe('dmg');
    expect(config.win?.target).toBe('nsis');
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.dist).toMatch(/npm run build && .*electron-builder/);
  });

  it('flips the fuses: no NODE_OPTIONS, no --inspect, no file:// extras; asar only and checked; cookies encrypted', () => {
    expect(config.electronFuses).toEqual({
      // The `parley` CLI that agents run is the app's own binary as Node (see the comment in the file).
      runAsNode: true,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      grantFileProtocolExtraPrivileges: false,
    });
  });

  for (const platform of ['linux', 'mac', 'win'] as const) {
    it(`packs the app for ${platform} and leaves test helpers, benchmarks and source maps out`, () => {
      const files = packagedFiles(platform);
      for (const needed of [
        'package.json',
        'bin/parley.js',
        'bin/parley-socat',
        'dist/electron/main.js',
        'dist/electron/preload.cjs',
        'dist/renderer/index.html',
        'dist/cli.cjs',
        'dist/commands/mcp.cjs',
        'dist/commands/serve.js',
        'dist/scripted-agent.cjs',
        'dist/openai-worker.js',
        'dist/acp-worker.js',
      ])
        expect(files).toContain(needed);
      expect(files.some((file) => file.startsWith('dist/chunks/'))).toBe(true);
      const unwanted = files.filter(
        (file) =>
          /^dist\/(testing|bench)\//.test(file) ||
          file === 'dist/demo.js' ||
          file.endsWith('.map') ||
          !/^(package\.json$|bin\/|dist\/)/.test(file),
      );
      expect(unwanted).toEqual([]);
    });
  }

  it('ships no code from test-support, the tests, the benchmarks or the scripts inside the bundles it packs', () => {
    const leaks: string[] = [];
    for (const file of packagedFiles('linux').filter((f) => f.endsWith('.js') || f.endsWith('.cjs'))) {
      if (!existsSync(path.join(root, `${file}.map`))) continue;
      const { sources } = JSON.parse(readFileSync(path.join(root, `${file}.map`), 'utf8')) as { sources: string[] };
      for (const source of sources) {
        const fromRoot = path.relative(root, path.resolve(path.dirname(path.join(root, file)), source));
        if (/^(main[\\/]testing|e2e|bench|scripts)[\\/]/.test(fromRoot)) leaks.push(`${file} ← ${fromRoot}`);
      }
    }
    expect(leaks).toEqual([]);
  });
});
