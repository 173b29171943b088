// What system programs this machine gives the tests, as `scripts/test-setup.mjs` found or
// installed them before the run (`npm test` runs it first). A test that needs one that is
// missing skips and prints why, rather than failing for a package the machine lacks.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe } from 'vitest';

interface Part {
  ok?: boolean;
  path?: string | null;
  why?: string;
}
interface SystemParts {
  browser: Part;
  sandbox: Part;
  nat: Part;
}

const root = fileURLToPath(new URL('..', import.meta.url));
const SYSTEM_CHROMIUM = '/usr/bin/chromium';

function read(): SystemParts {
  const file = path.join(root, 'dist', 'test-environment.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as SystemParts;
  // `npx vitest` without the setup step: look for the usual Chromium only.
  const browser = process.env.PARLEY_CHROMIUM ?? SYSTEM_CHROMIUM;
  return {
    browser: existsSync(browser)
      ? { path: browser }
      : { path: null, why: `${browser} is missing; \`npm test\` finds or installs a browser first` },
    sandbox: { ok: true },
    nat: { ok: true },
  };
}

const parts = read();

/** The Chromium the UI tests drive, or null when this machine has none. */
export const browserPath: string | null = parts.browser.path ?? null;

const printed = new Set<string>();
function skipping(what: string, why: string | undefined): true {
  const line = `skipped: ${what}: ${why ?? 'not available here'}`;
  if (!printed.has(line)) {
    printed.add(line);
    console.warn(line);
  }
  return true;
}

/** True, with the reason printed once, when tests that drive a browser cannot run here. */
export function noBrowser(what: string): boolean {
  return browserPath === null && skipping(`${what} (needs a browser)`, parts.browser.why);
}

/** `describe` for tests that drive the browser: skipped, with the reason printed, where there is none. */
export function describeInBrowser(name: string, body: () => void): void {
  describe.skipIf(noBrowser(name))(name, body);
}

/** True, with the reason printed once, when the agents' OS sandbox cannot run here. */
export function noSandbox(what: string): boolean {
  return parts.sandbox.ok === false && skipping(`${what} (needs the agents’ sandbox)`, parts.sandbox.why);
}

/** `describe` for tests of the real sandbox: skipped, with the reason printed, where it cannot run. */
export function describeWithSandbox(name: string, body: () => void): void {
  describe.skipIf(noSandbox(name))(name, body);
}
