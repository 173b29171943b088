// The built UI in real Chromium against a real `parley serve` child process: the page
// signs in with the token from the address fragment, removes the token from the address
// bar, and shows who is signed in and the installation's roles.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { BrowserTransport, type SocketLike } from '../renderer/api/browser-transport';

const root = fileURLToPath(new URL('..', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

interface Serve {
  child: ChildProcess;
  dataDir: string;
  /** The address printed on stdout: http://HOST:PORT/#token=TOKEN */
  address: string;
  stderr: () => string;
}

/** Starts `parley serve` and waits for the line with the UI address and token. */
async function startServe(name: string): Promise<Serve> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `parley-ui-${name}-`));
  const child = spawn(
    process.execPath,
    [
      path.join(root, 'bin', 'parley.js'),
      'serve',
      '--data',
      dataDir,
      '--name',
      name,
      '--ui-port',
      '0',
      '--peer-port',
      '0',
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PARLEY_LOG: 'silent' } },
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const address = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`parley serve printed no address in 20 s.\n${stderr}`)), 20_000);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /(https?:\/\/\S+#token=\S+)/.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`parley serve exited (${code ?? signal}) before printing its address.\n${stderr}`));
    });
  });
  return { child, dataDir, address, stderr: () => stderr };
}

async function stopServe(serve: Serve | undefined): Promise<void> {
  if (!serve) return;
  const { child } = serve;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  rmSync(serve.dataDir, { recursive: true, force: true });
}

describe('placeholder UI in Chromium against parley serve', () => {
  let serve: Serve | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `${CHROMIUM} is missing: the UI tests need Debian's Chromium (apt-get install -y chromium); .ci/run installs it.`,
      );
    }
    if (
      !existsSync(path.join(root, 'dist', 'renderer', 'index.html')) ||
      !existsSync(path.join(root, 'dist', 'cli.js'))
    ) {
      throw new Error('The app is not built: run `npm run build` first (`npm test` does).');
    }
    serve = await startServe('alice');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });

  afterAll(async () => {
    await browser?.close();
    await stopServe(serve);
  });

  it('signs in from the address fragment, hides the token and lists the roles', async () => {
    if (!serve || !browser) throw new Error('setup failed');
    const address = new URL(serve.address);
    const token = new URLSearchParams(address.hash.slice(1)).get('token') ?? '';
    expect(token).not.toBe('');

    // A role made through the same API (by the renderer's own transport, from Node).
    const api = new BrowserTransport({
      url: `ws://${address.host}/api`,
      token,
      storage: null,
      openSocket: (url): SocketLike => new WebSocket(url),
    });
    await api.invoke('roles.create', {
      name: 'assistant',
      description: 'Answers questions',
      agent: { adapter: 'scripted' },
    });
    api.disconnect();

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
    });

    await page.goto(serve.address);
    await expect.poll(() => page.locator('.whoami').textContent(), { timeout: 15_000 }).toMatch(/^Signed in as \S+/);
    await expect.poll(() => page.getByRole('list', { name: 'Roles' }).textContent()).toContain('assistant');
    expect(await page.title()).toBe('Parley');

    // The token left the address bar but stays with the tab: a reload still signs in.
    expect(page.url()).not.toContain(token);
    expect(page.url()).not.toContain('#');
    await page.reload();
    await expect.poll(() => page.locator('.whoami').textContent(), { timeout: 15_000 }).toMatch(/^Signed in as/);

    mkdirSync(path.join(root, 'e2e', 'screenshots'), { recursive: true });
    await page.screenshot({ path: path.join(root, 'e2e', 'screenshots', 'placeholder.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: path.join(root, 'e2e', 'screenshots', 'placeholder-dark.png') });
    expect(problems).toEqual([]);
  });

  it('asks for a token when the address has none, and refuses a wrong one', async () => {
    if (!serve || !browser) throw new Error('setup failed');
    const page = await browser.newPage();
    await page.goto(new URL(serve.address).origin + '/');
    await page.getByLabel('Sign-in token').fill('not-a-real-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 15_000 }).toBeTruthy();
    expect(await page.locator('.whoami').count()).toBe(0);
    await page.screenshot({ path: path.join(root, 'e2e', 'screenshots', 'placeholder-sign-in.png') });

    const token = new URLSearchParams(new URL(serve.address).hash.slice(1)).get('token') ?? '';
    await page.getByLabel('Sign-in token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('.whoami').textContent(), { timeout: 15_000 }).toMatch(/^Signed in as/);
  });
});
