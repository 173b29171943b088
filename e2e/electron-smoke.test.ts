// Smoke test of the Electron shell: the window loads the renderer from app://parley/,
// and app API calls go through the preload bridge and IPC to the installation, which
// listens for peers. It needs Electron's
// binary, which `npm ci` does not download (and cannot, without internet); where the
// binary or a display is missing the test says so and is skipped.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { _electron as electron, type ElectronApplication } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Where Electron's binary is, or why it is not there. This reads what
 * `require('electron')` reads, without calling it: that call starts a download when
 * the binary is missing.
 */
function findElectron(): { executable: string } | { missing: string } {
  const pkg = path.join(root, 'node_modules', 'electron');
  const pathFile = path.join(pkg, 'path.txt');
  if (!existsSync(pathFile)) {
    return { missing: 'Electron binary not downloaded (node_modules/electron/path.txt is missing; no internet here)' };
  }
  const relative = readFileSync(pathFile, 'utf8').trim();
  const distDir = process.env.ELECTRON_OVERRIDE_DIST_PATH ?? path.join(pkg, 'dist');
  const executable = path.join(distDir, relative);
  if (!existsSync(executable)) return { missing: `Electron binary not found at ${executable}` };
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    return { missing: 'no display for Electron (run the tests under xvfb-run)' };
  }
  return { executable };
}

describe('Electron shell', () => {
  let app: ElectronApplication | undefined;
  let dataDir: string | undefined;

  afterAll(async () => {
    await app?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('loads the window and answers an API call through the preload', async (ctx) => {
    const found = findElectron();
    if ('missing' in found) {
      console.log(`electron smoke test skipped: ${found.missing}`);
      ctx.skip(found.missing);
      return;
    }
    if (!existsSync(path.join(root, 'dist', 'electron', 'main.js'))) {
      throw new Error('The app is not built: run `npm run build` first (`npm test` does).');
    }
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-electron-'));
    app = await electron.launch({
      executablePath: found.executable,
      args: [root, `--data=${dataDir}`, '--name=smoke'],
      cwd: root,
      env: { ...process.env, PARLEY_LOG: 'silent' },
      timeout: 30_000,
    });
    const page = await app.firstWindow();
    expect(await page.title()).toBe('Parley');
    // Our own scheme, not file://.
    expect(page.url()).toMatch(/^app:\/\/parley\/index\.html/);
    await expect
      .poll(() => page.locator('.whoami').getAttribute('title'), { timeout: 20_000 })
      .toMatch(/^Signed in as/);

    const whoami = await page.evaluate(() => window.parley?.invoke('session.whoami', {}));
    expect(whoami?.person.kind).toBe('owner');
    expect(whoami?.installation.name).toBe('smoke');

    // An error keeps its stable code across the context bridge.
    const failure = await page.evaluate(() =>
      window.parley?.invoke('roles.remove', { id: 999_999 }).then(
        () => null,
        (error: { code?: string }) => error.code ?? null,
      ),
    );
    expect(failure).toBe('not_found');

    // The page is isolated: no Node, no raw IPC.
    expect(await page.evaluate(() => typeof (window as unknown as { require?: unknown }).require)).toBe('undefined');
    expect(await page.evaluate(() => Object.keys(window.parley ?? {}).sort())).toEqual(['invoke', 'onEvent']);

    // It listens for peers, so it can invite.
    const network = await page.evaluate(() => window.parley?.invoke('network.get', {}));
    expect(network?.listening).toMatch(/^127\.0\.0\.1:\d+$/);
    const invitation = await page.evaluate(() => window.parley?.invoke('connections.invite', { roles: [] }));
    expect(invitation?.address).toBe(network?.invitationAddress);
  });
});
