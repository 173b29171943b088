// @ts-check
// Lint for the whole repository. Besides the usual TypeScript checks it enforces the
// folder boundaries of docs/architecture.md:
//   shared/   imports nothing from the other folders;
//   renderer/ imports only shared/ (and npm packages);
//   preload/  imports only shared/ (types only: the sandboxed preload cannot load npm
//             packages at run time) and electron;
//   main/     never imports renderer/ or preload/;
//   electron  is imported only in main/app/ and preload/preload.ts; only
//             main/app/ipc.ts touches ipcMain and only preload/preload.ts ipcRenderer
//             (the stand-in electron module in main/testing/electron/ defines ipcMain
//             and imports no electron).
// e2e/lint-boundaries.test.ts proves these rules fire.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const root = import.meta.dirname;
const tsFiles = ['**/*.{ts,tsx,mts,cts}'];
const jsFiles = ['**/*.{js,mjs,cjs}'];

// Folders of this repository that application code may be fenced off from.
const everyFolder = ['main', 'preload', 'renderer', 'shared', 'e2e', 'bench', 'scripts', 'bin'];
const allBut = (...allowed) => everyFolder.filter((folder) => !allowed.includes(folder)).map((f) => `./${f}`);

const boundaryZones = [
  {
    target: './shared',
    from: allBut('shared'),
    message: 'shared/ is common ground: it imports nothing from the other folders.',
  },
  {
    target: './renderer',
    from: allBut('renderer', 'shared'),
    message: 'renderer/ may import only shared/ and npm packages; reach main through the app API client.',
  },
  {
    target: './preload',
    from: allBut('preload', 'shared'),
    message: 'preload/ may import only shared/ and electron.',
  },
  {
    target: './main',
    from: ['./renderer', './preload', './e2e'],
    message: 'main/ never imports renderer/, preload/ or tests.',
  },
];

const electronMessage = 'Only main/app/ and preload/preload.ts talk to Electron; go through the app API.';
const ipcMainMessage = 'Only main/app/ipc.ts may use ipcMain.';
const ipcRendererMessage = 'Only preload/preload.ts may use ipcRenderer.';

/** `no-restricted-imports` options: electron banned entirely, or only some of its exports. */
function restrictImports({ electron, bannedNames = [], sharedTypesOnly = false }) {
  const paths = [];
  const patterns = [{ group: ['electron/*'], message: electronMessage }];
  if (electron === 'banned') {
    paths.push({ name: 'electron', message: electronMessage });
  } else {
    for (const name of bannedNames) {
      paths.push({
        name: 'electron',
        importNames: [name],
        message: name === 'ipcMain' ? ipcMainMessage : ipcRendererMessage,
      });
    }
  }
  if (sharedTypesOnly) {
    patterns.push({
      // Any module of shared/ but the channel names, which import nothing: the bundle carries them whole.
      regex: '(^|/)shared(/(?!ipc-channels$).*)?$',
      allowTypeImports: true,
      message:
        'The sandboxed preload cannot load npm packages at run time, and shared/ pulls in zod: import types only.',
    });
  }
  return ['error', { paths, patterns }];
}

/** `no-restricted-syntax` options: catches what import rules cannot (require, import(), namespace access). */
function restrictSyntax({ electron, bannedNames = [] }) {
  const selectors = [];
  if (electron === 'banned') {
    // "\\u002F" is "/": esquery ends a regular expression at the first slash.
    for (const selector of [
      'ImportExpression[source.value=/^electron(\\u002F.*)?$/]',
      "CallExpression[callee.name='require'][arguments.0.value=/^electron(\\u002F.*)?$/]",
    ]) {
      selectors.push({ selector, message: electronMessage });
    }
  }
  for (const name of bannedNames) {
    selectors.push({
      selector: `Identifier[name='${name}']`,
      message: name === 'ipcMain' ? ipcMainMessage : ipcRendererMessage,
    });
  }
  return ['error', ...selectors];
}

function electronRules(options) {
  return {
    'no-restricted-imports': 'off',
    '@typescript-eslint/no-restricted-imports': restrictImports(options),
    'no-restricted-syntax': restrictSyntax(options),
  };
}

export default defineConfig(
  {
    ignores: ['dist/', 'release/', 'node_modules/', 'e2e/screenshots/', '.parley-data/', 'coverage/'],
  },
  js.configs.recommended,
  {
    files: tsFiles,
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: root },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    files: jsFiles,
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['main/**', 'e2e/**', 'bench/**', 'scripts/**', 'bin/**', '*.{js,ts}'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['renderer/**', 'preload/**'],
    languageOptions: { globals: { ...globals.browser } },
  },

  // Folder boundaries, resolved to real files (so `../../main/x` and `main/x` are alike).
  {
    files: [...tsFiles, ...jsFiles],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [
        createNodeResolver({ extensions: ['.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs', '.json', '.node'] }),
      ],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: root, zones: boundaryZones }],
    },
  },

  // Electron and IPC: banned everywhere, then opened up file by file.
  {
    files: tsFiles,
    rules: electronRules({ electron: 'banned', bannedNames: ['ipcMain', 'ipcRenderer'] }),
  },
  {
    files: ['main/app/**/*.ts'],
    rules: electronRules({ electron: 'allowed', bannedNames: ['ipcMain', 'ipcRenderer'] }),
  },
  {
    // The wrappers' own tests stand in for electron, so they name the same exports.
    files: ['main/app/ipc.ts', 'main/app/ipc.test.ts'],
    rules: electronRules({ electron: 'allowed', bannedNames: ['ipcRenderer'] }),
  },
  {
    // The stand-in `electron` module the desktop main process is tested on: it is the
    // module, so it defines ipcMain, but it never imports the real electron.
    files: ['main/testing/electron/**/*.ts'],
    rules: electronRules({ electron: 'banned', bannedNames: ['ipcRenderer'] }),
  },
  {
    files: ['preload/**/*.ts'],
    rules: electronRules({ electron: 'banned', bannedNames: ['ipcMain', 'ipcRenderer'], sharedTypesOnly: true }),
  },
  {
    files: ['preload/preload.ts', 'preload/preload.test.ts'],
    rules: electronRules({ electron: 'allowed', bannedNames: ['ipcMain'], sharedTypesOnly: true }),
  },
);
