// What the UI tests share: real `parley serve` installations set up through the app API,
// Debian's Chromium driven by playwright-core, and screenshots under e2e/screenshots/.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';
import type { Person, RoleView } from '../../shared/domain';
import type { ApiClient } from '../../main/testing/api-client';
import { removeDataDir, startServe, type ServeProcess } from '../../main/testing/serve-process';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const screenshotDir = path.join(root, 'e2e', 'screenshots');

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

/** Fails clearly when the browser or the build is missing. */
export function assertReady(): void {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: the UI tests need Debian's Chromium (apt-get install -y chromium); .ci/run installs it.`,
    );
  for (const file of ['dist/renderer/index.html', 'dist/cli.js', 'dist/scripted-agent.js'])
    if (!existsSync(path.join(root, file)))
      throw new Error(`${file} is missing: run \`npm run build\` first (\`npm test\` does).`);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

export interface Node {
  name: string;
  serve: ServeProcess;
  /** The owner's API client, for setup and for checking what the UI claims. */
  api: ApiClient;
  owner: Person;
}

export async function startNode(name: string, dataDir?: string): Promise<Node> {
  const serve = await startServe({ name, ...(dataDir ? { dataDir } : {}) });
  const api = await serve.connect();
  const { person } = await api.call('session.whoami', {});
  return { name, serve, api, owner: person };
}

export async function stopNodes(nodes: Array<Node | undefined>): Promise<void> {
  await Promise.all(
    nodes.map(async (node) => {
      if (!node) return;
      await node.serve.stop();
      removeDataDir(node.serve.dataDir);
    }),
  );
}

export function scriptedRole(node: Node, name: string, description: string): Promise<RoleView> {
  return node.api.call('roles.create', { name, description, agent: { adapter: 'scripted' } });
}

/** `inviter` invites `acceptor` through the API; resolves once both see each other online. */
export async function pair(inviter: Node, inviterRoles: string[], acceptor: Node, acceptorRoles: string[]) {
  const { code } = await inviter.api.call('connections.invite', { roles: inviterRoles });
  await acceptor.api.call('connections.accept', { code, roles: acceptorRoles });
  const side = (node: Node, peer: Node, roles: string[]) =>
    node.api.waitFor(
      async () =>
        (await node.api.call('connections.list', {})).find(
          (c) => c.name === peer.name && c.online && c.peerRoles.length === roles.length,
        ),
      20_000,
      `${node.name} to see ${peer.name} online`,
    );
  const [inviterSide, acceptorSide] = await Promise.all([
    side(inviter, acceptor, acceptorRoles),
    side(acceptor, inviter, inviterRoles),
  ]);
  return { inviterSide: inviterSide.id, acceptorSide: acceptorSide.id };
}

export interface Viewport {
  width: number;
  height: number;
}
export const DESKTOP: Viewport = { width: 1280, height: 800 };
export const SMALL: Viewport = { width: 800, height: 600 };

export interface OpenedPage {
  page: Page;
  context: BrowserContext;
  /** Page errors and console errors seen so far; a test ends with none. */
  problems: string[];
}

/** Opens the installation's UI signed in with `token` (the owner's by default). */
export async function openUi(
  browser: Browser,
  node: Node,
  options: { token?: string; viewport?: Viewport; colorScheme?: 'light' | 'dark'; view?: string } = {},
): Promise<OpenedPage> {
  const context = await browser.newContext({
    viewport: options.viewport ?? DESKTOP,
    colorScheme: options.colorScheme ?? 'light',
    reducedMotion: 'reduce',
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  const fragment = `${options.view ? `view=${options.view}&` : ''}token=${options.token ?? node.serve.info.token}`;
  await page.goto(`${node.serve.info.ui}#${fragment}`);
  await page.getByRole('button', { name: 'Settings', exact: true }).waitFor({ timeout: 15_000 });
  return { page, context, problems };
}

/** Saves a screenshot as e2e/screenshots/NAME.png. */
export async function shoot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  // Let transitions and the virtualized lists settle.
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  await page.screenshot({ path: path.join(screenshotDir, `${name}.png`) });
}

/** The same page at other sizes and in dark mode, then back. */
export async function shootVariants(page: Page, name: string, variants: Array<'small' | 'dark'>): Promise<void> {
  const original = page.viewportSize() ?? DESKTOP;
  for (const variant of variants) {
    if (variant === 'small') await page.setViewportSize(SMALL);
    else await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForTimeout(150);
    await shoot(page, `${name}-${variant === 'small' ? '800x600' : 'dark'}`);
    if (variant === 'small') await page.setViewportSize(original);
    else await page.emulateMedia({ colorScheme: 'light' });
  }
  await page.waitForTimeout(100);
}

/** The region "Agent conversations" of the view. */
export const threadsRegion = (page: Page | Locator) => page.getByRole('region', { name: 'Agent conversations' });

/** A thread card in a region, by its peer and peer role. */
export const threadCard = (scope: Page | Locator, peer: string, role: string) =>
  scope.getByRole('article', { name: `Agent conversation with ${peer}/${role}` });

/** Waits until the locator has a match (and it is visible). */
export async function visible(locator: Locator, timeout = 20_000): Promise<Locator> {
  await locator.first().waitFor({ state: 'visible', timeout });
  return locator;
}

/** Polls until `probe` is truthy. */
export async function until<T>(probe: () => Promise<T> | T, what: string, timeout = 20_000): Promise<T> {
  let value: T | undefined;
  await expect
    .poll(
      async () => {
        value = await probe();
        return Boolean(value);
      },
      { timeout, interval: 100, message: what },
    )
    .toBe(true);
  return value as T;
}

export async function openSettings(page: Page, tab: 'Connections' | 'People' | 'Roles'): Promise<void> {
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  await page.getByRole('tab', { name: tab }).click();
  await visible(page.getByRole('heading', { name: tab, level: 2 }));
}

export async function openConversationWith(page: Page, roleName: string): Promise<void> {
  const item = page
    .getByRole('navigation', { name: 'Parley' })
    .getByRole('button', { name: new RegExp(`^${roleName}\\b`) });
  if ((await item.count()) > 0) {
    await item.first().click();
  } else {
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page
      .getByRole('dialog')
      .getByRole('button', { name: new RegExp(`\\b${roleName}\\b`) })
      .click();
  }
  await visible(page.getByRole('heading', { name: roleName, level: 1 }));
}

/** Types into the composer and sends with Enter. */
export async function say(page: Page, text: string): Promise<void> {
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill(text);
  await box.press('Enter');
  await visible(page.getByRole('region', { name: 'Messages' }).getByText(text, { exact: true }));
}
