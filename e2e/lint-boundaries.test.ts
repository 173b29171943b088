// Proves that `npm run lint` enforces the folder boundaries, the layers inside main/, the
// test kits' fence and the Electron/IPC fences of docs/architecture.md: each case lints a
// small fake file at a real path with the repository's own eslint.config.js and expects
// (or not) the boundary rule to fire.
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const boundaryRules = new Set([
  'import-x/no-restricted-paths',
  '@typescript-eslint/no-restricted-imports',
  'no-restricted-syntax',
]);

let eslint: ESLint;

beforeAll(() => {
  // The fake files do not exist, so the type-aware part of the config (which needs them
  // in the TypeScript project) is switched off; the boundary rules need no types.
  eslint = new ESLint({ cwd: root, overrideConfig: [{ files: ['**/*.ts'], ...tseslint.configs.disableTypeChecked }] });
});

/** The boundary findings for `code` placed at `filePath`; other rules are ignored. */
async function boundaryErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  const fatal = result?.messages.filter((message) => message.fatal) ?? [];
  expect(fatal, `parsing ${filePath} failed`).toEqual([]);
  return (result?.messages ?? [])
    .filter((message) => message.ruleId !== null && boundaryRules.has(message.ruleId))
    .map((message) => `${message.ruleId}: ${message.message}`);
}

describe('folder boundaries', () => {
  it('shared/ may not import main/', async () => {
    const errors = await boundaryErrors('shared/x.ts', "import { log } from '../main/log';\nlog.info('x');\n");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/import-x\/no-restricted-paths: .*"\.\.\/main\/log".*shared\//);
  });

  it('shared/ may not import the renderer, even for types', async () => {
    const errors = await boundaryErrors(
      'shared/deep/y.ts',
      "import type { ApiClient } from '../../renderer/api/client';\nexport type X = ApiClient;\n",
    );
    expect(errors.join('\n')).toMatch(/no-restricted-paths/);
  });

  it('renderer/ may not import main/ but may import shared/ and npm packages', async () => {
    const bad = await boundaryErrors('renderer/x.ts', "import { log } from '../main/log';\nlog.info('x');\n");
    expect(bad.join('\n')).toMatch(/no-restricted-paths: .*renderer\/ may import only shared\//);
    const good = await boundaryErrors(
      'renderer/y.ts',
      "import { methods } from '../shared/api-contract';\nimport { create } from 'zustand';\nexport const x = [methods, create];\n",
    );
    expect(good).toEqual([]);
  });

  it('main/ may not import renderer/', async () => {
    const errors = await boundaryErrors('main/x.ts', "import { App } from '../renderer/app';\nexport const x = App;\n");
    expect(errors.join('\n')).toMatch(/no-restricted-paths: .*main\/ never imports renderer\//);
  });

  it('preload/ may import shared/ types only', async () => {
    const errors = await boundaryErrors(
      'preload/x.ts',
      "import { ApiError } from '../shared/api-contract';\nexport const x = ApiError;\n",
    );
    expect(errors.join('\n')).toMatch(/import types only/);
    const ok = await boundaryErrors(
      'preload/y.ts',
      "import type { AppEvent } from '../shared/api-contract';\nexport type X = AppEvent;\n",
    );
    expect(ok).toEqual([]);
  });

  it('preload/ may import the IPC channel names, which import nothing', async () => {
    const ok = await boundaryErrors(
      'preload/z.ts',
      "import { INVOKE_CHANNEL } from '../shared/ipc-channels';\nexport const x = INVOKE_CHANNEL;\n",
    );
    expect(ok).toEqual([]);
  });
});

describe('layers inside main/', () => {
  // One case per layer boundary, lowest first: a production file of the layer may not
  // import the layer just above it (and so none above that), but may import the one below.
  const boundaries = [
    { file: 'main/net/x.ts', above: '../role-api/protocol', below: '../log', layer: 'the base' },
    { file: 'main/log.ts', above: './role-api/client', below: './startup-error', layer: 'the base' },
    { file: 'main/role-api/x.ts', above: '../store/database', below: '../net/limits', layer: 'role-api/' },
    { file: 'main/store/queries/x.ts', above: '../../access/rules', below: '../../one-line', layer: 'store/' },
    { file: 'main/access/x.ts', above: '../events', below: '../store/sql', layer: 'access/' },
    { file: 'main/events.ts', above: './search/snippet', below: './access/rules', layer: 'events.ts' },
    { file: 'main/search/x.ts', above: '../posting/post-line', below: '../events', layer: 'search/ and attention/' },
    { file: 'main/attention/x.ts', above: '../posting/post-line', below: '../events', layer: 'search/ and attention/' },
    { file: 'main/posting/x.ts', above: '../agents/types', below: '../search/snippet', layer: 'posting/' },
    { file: 'main/agents/x.ts', above: '../sandbox/policy', below: '../posting/post-line', layer: 'agents/' },
    { file: 'main/sandbox/x.ts', above: '../runs/run-manager', below: '../agents/types', layer: 'sandbox/' },
    { file: 'main/runs/x.ts', above: '../engine/engine', below: '../sandbox/policy', layer: 'runs/' },
    { file: 'main/engine/x.ts', above: '../role-api-server/server', below: '../runs/run-manager', layer: 'engine/' },
    {
      file: 'main/engine/y.ts',
      above: '../peer-listener/peer-network',
      below: '../role-api/protocol',
      layer: 'engine/',
    },
    { file: 'main/peer-listener/x.ts', above: '../api/handlers', below: '../engine/engine', layer: 'role-api-server/' },
    {
      file: 'main/role-api-server/x.ts',
      above: '../api/session',
      below: '../engine/errors',
      layer: 'role-api-server/',
    },
    { file: 'main/api/x.ts', above: '../installation', below: '../network/peer-network', layer: 'api/' },
    { file: 'main/installation.ts', above: './http/ui-server', below: './api/handlers', layer: 'installation.ts' },
  ];

  it.each(boundaries)('$layer: $file may not import $above', async ({ file, above, below, layer }) => {
    const bad = await boundaryErrors(file, `import type * as above from '${above}';\nexport type X = typeof above;\n`);
    expect(bad).toHaveLength(1);
    expect(bad[0]).toMatch(/^import-x\/no-restricted-paths: /);
    expect(bad[0]).toContain(`Layers inside main/: ${layer}`);
    const good = await boundaryErrors(file, `import type * as below from '${below}';\nexport type X = typeof below;\n`);
    expect(good).toEqual([]);
  });

  it('lets the entry points import the installation and each other', async () => {
    const serve = await boundaryErrors(
      'main/serve.ts',
      "import { openInstallation } from './installation';\nimport { startUiServer } from './http/ui-server';\nexport const x = [openInstallation, startUiServer];\n",
    );
    expect(serve).toEqual([]);
  });

  it('binds production code only: a test may import a layer above its own', async () => {
    const test = await boundaryErrors(
      'main/store/x.test.ts',
      "import { WireCounters } from '../engine/wire-counters';\nexport const x = WireCounters;\n",
    );
    expect(test).toEqual([]);
  });
});

describe('test kits', () => {
  it.each([
    ['main/api/x.ts', '../../test-support/installation'],
    ['main/agents/x.ts', '../../test-support/e2e-story'],
    ['main/agents/y.ts', '../../test-support/cli-test-kit'],
    ['main/x.ts', '../test-support/electron/index'],
    ['renderer/x.ts', '../test-support/renderer/test-summaries'],
    ['shared/x.ts', '../test-support/until'],
  ])('production code (%s) may not import %s', async (file, kit) => {
    const errors = await boundaryErrors(file, `import * as kit from '${kit}';\nexport const x = kit;\n`);
    expect(errors.join('\n')).toMatch(/no-restricted-paths: .*Test kits are for tests/);
  });

  it('tests and other kits may', async () => {
    const code = "import * as kit from '../../test-support/installation';\nexport const x = kit;\n";
    expect(await boundaryErrors('main/api/x.test.ts', code)).toEqual([]);
    expect(await boundaryErrors('e2e/x.test.ts', "import * as kit from '../test-support/installation';\n")).toEqual([]);
    expect(
      await boundaryErrors('test-support/x.ts', "import * as kit from './installation';\nexport const x = kit;\n"),
    ).toEqual([]);
    expect(
      await boundaryErrors(
        'renderer/x.test.ts',
        "import * as kit from '../test-support/renderer/test-summaries';\nexport const x = kit;\n",
      ),
    ).toEqual([]);
  });
});

describe('Electron and IPC fences', () => {
  it('bans electron outside main/app/ and preload/preload.ts', async () => {
    const errors = await boundaryErrors('main/store/x.ts', "import { app } from 'electron';\nexport const x = app;\n");
    expect(errors.join('\n')).toMatch(/Only main\/app\/ and preload\/preload\.ts talk to Electron/);
    const required = await boundaryErrors('renderer/x.ts', "export const x: unknown = await import('electron');\n");
    expect(required.join('\n')).toMatch(/talk to Electron/);
  });

  it('lets main/app/ import electron but not use ipcMain, except in ipc.ts', async () => {
    const window = await boundaryErrors(
      'main/app/window.ts',
      "import { BrowserWindow } from 'electron';\nexport const x = BrowserWindow;\n",
    );
    expect(window).toEqual([]);
    const menu = await boundaryErrors(
      'main/app/menu.ts',
      "import { ipcMain } from 'electron';\nexport const x = ipcMain;\n",
    );
    expect(menu.join('\n')).toMatch(/Only main\/app\/ipc\.ts may use ipcMain/);
    const namespace = await boundaryErrors(
      'main/app/menu.ts',
      "import * as electron from 'electron';\nexport const x = electron.ipcMain;\n",
    );
    expect(namespace.join('\n')).toMatch(/ipcMain/);
    const ipc = await boundaryErrors(
      'main/app/ipc.ts',
      "import { ipcMain } from 'electron';\nexport const x = ipcMain;\n",
    );
    expect(ipc).toEqual([]);
  });

  it('lets the stand-in electron module define ipcMain, but not import the real electron', async () => {
    const standIn = await boundaryErrors(
      'test-support/electron/ipc-main.ts',
      'class IpcMain {}\nexport const ipcMain = new IpcMain();\n',
    );
    expect(standIn).toEqual([]);
    const real = await boundaryErrors(
      'test-support/electron/app.ts',
      "import { app } from 'electron';\nexport const x = app;\n",
    );
    expect(real.join('\n')).toMatch(/talk to Electron/);
    const elsewhere = await boundaryErrors('test-support/other.ts', 'export const ipcMain = {};\n');
    expect(elsewhere.join('\n')).toMatch(/Only main\/app\/ipc\.ts may use ipcMain/);
  });

  it('keeps ipcRenderer in preload/preload.ts', async () => {
    const preload = await boundaryErrors(
      'preload/preload.ts',
      "import { ipcRenderer } from 'electron';\nexport const x = ipcRenderer;\n",
    );
    expect(preload).toEqual([]);
    const renderer = await boundaryErrors(
      'renderer/x.ts',
      "import { ipcRenderer } from 'electron';\nexport const x = ipcRenderer;\n",
    );
    expect(renderer.join('\n')).toMatch(/talk to Electron/);
    const otherPreload = await boundaryErrors(
      'preload/other.ts',
      "import { ipcRenderer } from 'electron';\nexport const x = ipcRenderer;\n",
    );
    expect(otherPreload.length).toBeGreaterThan(0);
  });
});
