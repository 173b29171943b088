// @ts-check
// Lint for the whole repository. Besides the usual TypeScript checks it enforces the
// folder boundaries of docs/architecture.md:
//   shared/   imports nothing from the other folders;
//   renderer/ imports only shared/ (and npm packages);
//   preload/  imports only shared/ (types only: the sandboxed preload cannot load npm
//             packages at run time) and electron;
//   main/     never imports renderer/ or preload/;
//   inside main/, each layer imports only the layers below it (mainLayers);
//   production code never imports the test kits (testKits);
//   electron  is imported only in main/app/ and preload/preload.ts; only
//             main/app/ipc.ts touches ipcMain and only preload/preload.ts ipcRenderer
//             (the stand-in electron module in test-support/electron/ defines ipcMain
//             and imports no electron).
// e2e/lint-boundaries.test.ts proves these rules fire; e2e/folder-cycles.test.ts adds that
// no two folders of main/ import each other round about, and that every one is in a layer.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const root = import.meta.dirname;
const tsFiles = ['**/*.{ts,tsx,mts,cts}'];
const jsFiles = ['**/*.{js,mjs,cjs}'];

// Folders of this repository that application code may be fenced off from.
const everyFolder = ['main', 'preload', 'renderer', 'shared', 'test-support', 'e2e', 'bench', 'scripts', 'bin'];
const allBut = (...allowed) => everyFolder.filter((folder) => !allowed.includes(folder)).map((f) => `./${f}`);

const boundaryZones = [
  {
    target: './shared',
    from: allBut('shared'),
    message: 'shared/ is common ground: it imports nothing from the other folders.',
  },
  {
    target: './renderer',
    from: allBut('renderer', 'shared', 'test-support'),
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

// The layers inside main/, lowest first (docs/architecture.md, "Layers inside main/"): a
// folder or a file directly under main/ may import its own layer and those below, never
// one above. Test files may reach anywhere to set up a scene, so these bind production
// code only.
const mainLayers = [
  {
    name: 'the base (log, paths, tokens, startup errors, one-line text, net/)',
    parts: ['log.ts', 'paths.ts', 'tokens.ts', 'startup-error.ts', 'one-line.ts', 'net'],
    why: 'it is what every other part stands on and knows none of them',
  },
  {
    name: 'role-api/ (the role API contract and client)',
    parts: ['role-api'],
    why: 'the parley CLI and agent processes load it, so it stays free of the database and the engine; the server is role-api-server/',
  },
  { name: 'store/', parts: ['store'], why: 'the database knows no rule, index or engine built on it' },
  { name: 'access/', parts: ['access'], why: 'the access rules read the store and nothing built on them' },
  { name: 'events.ts', parts: ['events.ts'], why: 'change events carry their audience (access/) and nothing else' },
  {
    name: 'search/ and attention/',
    parts: ['search', 'attention'],
    why: 'the search index and what waits on people are read from the store, the rules and the events',
  },
  {
    name: 'posting/',
    parts: ['posting'],
    why: 'a line posted to a conversation or a task is written to the store and told to its readers (the events), whoever posts it',
  },
  {
    name: 'agents/',
    parts: ['agents'],
    why: 'agent adapters and their types know the store and the role API client, not who runs them',
  },
  { name: 'sandbox/', parts: ['sandbox'], why: 'the OS sandbox wraps an agent and knows nothing of runs' },
  {
    name: 'runs/',
    parts: ['runs'],
    why: 'the run manager reaches the engine only through the hooks it is given (ThreadHooks)',
  },
  {
    name: 'engine/',
    parts: ['engine'],
    why: 'the engine implements the role API port (agents/types.ts) and is composed by installation.ts',
  },
  {
    name: 'role-api-server/ and peer-listener/',
    parts: ['role-api-server', 'peer-listener'],
    why: 'they stand on the engine and are composed by installation.ts',
  },
  { name: 'api/', parts: ['api'], why: 'the app API is given the installation (ApiSocketHost), never imports it' },
  { name: 'installation.ts', parts: ['installation.ts'], why: 'only the entry points start an installation' },
  {
    name: 'the entry points (http/, serve-args.ts, serve.ts, app/, cli.ts)',
    parts: ['http', 'serve-args.ts', 'serve.ts', 'app', 'cli.ts'],
  },
];
const mainPath = (part) => `./main/${part}`;
const layerZones = mainLayers.slice(0, -1).map((layer, index) => ({
  target: layer.parts.map(mainPath),
  from: mainLayers.slice(index + 1).flatMap((above) => above.parts.map(mainPath)),
  message: `Layers inside main/: ${layer.name} may not import a layer above it, since ${layer.why}.`,
}));

// Test-only kits live in test-support/: tests, benchmarks and scripts use them,
// production code never does (packaging leaves them out).
const testKits = ['./test-support'];
const testKitZones = [
  {
    target: ['./main', './renderer', './preload', './shared'],
    from: testKits,
    message: 'Test kits are for tests: production code may not import them.',
  },
];
const productionFiles = ['{main,renderer,preload,shared}/**/*.{ts,tsx}'];
const notProduction = ['**/*.test.{ts,tsx}'];

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
  {
    files: productionFiles,
    ignores: notProduction,
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        { basePath: root, zones: [...boundaryZones, ...layerZones, ...testKitZones] },
      ],
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
    files: ['test-support/electron/**/*.ts'],
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
