// Proves that `npm run lint` enforces the folder boundaries and the Electron/IPC fences
// of docs/architecture.md: each case lints a small fake file at a real path with the
// repository's own eslint.config.js and expects (or not) the boundary rule to fire.
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
      'main/testing/electron/ipc-main.ts',
      'class IpcMain {}\nexport const ipcMain = new IpcMain();\n',
    );
    expect(standIn).toEqual([]);
    const real = await boundaryErrors(
      'main/testing/electron/app.ts',
      "import { app } from 'electron';\nexport const x = app;\n",
    );
    expect(real.join('\n')).toMatch(/talk to Electron/);
    const elsewhere = await boundaryErrors('main/testing/other.ts', 'export const ipcMain = {};\n');
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
