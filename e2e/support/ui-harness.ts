// What the UI tests share: real `parley serve` installations set up through the app API,
// a Chromium driven by playwright-core (the one `npm test`'s setup found or installed), and
// screenshots under e2e/screenshots/.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';
import type { Person, RoleView } from '../../shared/domain';
import type { ApiClient } from '../../test-support/api-client';
import { removeDataDir, startServe, type ServeProcess } from '../../test-support/serve-process';
import { browserPath } from '../../test-support/system-parts';

export { describeInBrowser, noBrowser } from '../../test-support/system-parts';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const screenshotDir = path.join(root, 'e2e', 'screenshots');

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** Fails clearly when the build is missing (a missing browser skips the tests: `describeInBrowser`). */
export function assertReady(): void {
  if (browserPath === null) throw new Error('no browser: wrap the test in describeInBrowser');
  for (const file of ['dist/renderer/index.html', 'dist/cli.cjs', 'dist/scripted-agent.cjs'])
    if (!existsSync(path.join(root, file)))
      throw new Error(`${file} is missing: run \`npm run build\` first (\`npm test\` does).`);
}

export function launchChromium(): Promise<Browser> {
  if (browserPath === null) throw new Error('no browser on this machine: `npm test` says why');
  return chromium.launch({ executablePath: browserPath, args: CHROMIUM_ARGS });
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

/**
 * Where most UI tests start: alice's `assistant` and bob's `researcher`, both scripted, and
 * the two paired, bob's `researcher` exposed to alice and `aliceExposes` to bob.
 */
export async function assistantAndResearcher(alice: Node, bob: Node, aliceExposes = ['assistant']): Promise<void> {
  await scriptedRole(alice, 'assistant', 'Helps alice with anything');
  await scriptedRole(bob, 'researcher', 'Finds and checks facts');
  await pair(bob, ['researcher'], alice, aliceExposes);
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
  options: {
    token?: string;
    viewport?: Viewport;
    colorScheme?: 'light' | 'dark';
    view?: string;
    /** Lets the accessibility scan inject axe-core into a page whose CSP forbids inline scripts. */
    forAxe?: boolean;
    /** Browser permissions granted to the page's origin (e.g. notifications). */
    permissions?: string[];
    /** Runs in the page before its own scripts (a test's stand-ins for what a browser cannot be made to do). */
    initScript?: string;
    /** The page's language (navigator.language, Intl's default), e.g. 'de-DE'; Chromium's own otherwise. */
    locale?: string;
  } = {},
): Promise<OpenedPage> {
  const context = await browser.newContext({
    viewport: options.viewport ?? DESKTOP,
    colorScheme: options.colorScheme ?? 'light',
    reducedMotion: 'reduce',
    ...(options.forAxe ? { bypassCSP: true } : {}),
    ...(options.locale ? { locale: options.locale } : {}),
  });
  if (options.permissions)
    await context.grantPermissions(options.permissions, { origin: new URL(node.serve.info.ui).origin });
  if (options.initScript) await context.addInitScript(options.initScript);
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

/**
 * Whether a person sees the element without scrolling: its middle is inside the window
 * and nothing (an ancestor's clipping, an overlay) hides it there.
 */
export function onScreen(locator: Locator): Promise<boolean> {
  return locator.evaluate((element) => {
    const rect = element.getBoundingClientRect();
    if (rect.width === 0 || rect.height === 0) return false;
    const x = rect.left + rect.width / 2;
    const y = rect.top + Math.min(rect.height / 2, 10);
    if (x < 0 || y < 0 || x > window.innerWidth || y > window.innerHeight) return false;
    const hit = document.elementFromPoint(x, y);
    return hit !== null && (hit === element || element.contains(hit));
  });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

/**
 * Runs axe-core (WCAG 2.x A and AA, contrast included) on what the page shows now.
 * Needs a page opened with `forAxe` (the page's CSP forbids injected scripts).
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  const loaded = await page.evaluate(() => 'axe' in window);
  if (!loaded) await page.addScriptTag({ path: path.join(root, 'node_modules', 'axe-core', 'axe.min.js') });
  // Transitions off and fonts in, so contrast is measured on the final colours.
  await page.evaluate(() => document.fonts.ready.then(() => undefined));
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<unknown> } }).axe;
    const result = (await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
      resultTypes: ['violations'],
    })) as { violations: AxeViolation[] };
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  });
}

/** One line per violation and element, for a failure message people can act on. */
export function describeViolations(violations: AxeViolation[]): string {
  return violations
    .flatMap((v) =>
      v.nodes.map((n) => `${v.id} (${v.impact}): ${v.help} — ${JSON.stringify(n.target)}: ${n.failureSummary ?? ''}`),
    )
    .join('\n');
}

/**
 * Shoots and scans what the page shows in light and in dark (e2e/screenshots/SHOT-light.png
 * and -dark.png), then goes back to light: the axe violations found, by scheme.
 */
export async function axeInBothSchemes(page: Page, shot: string): Promise<Partial<Record<'light' | 'dark', string>>> {
  const found: Partial<Record<'light' | 'dark', string>> = {};
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    await shoot(page, `${shot}-${scheme}`);
    const violations = await axeViolations(page);
    if (violations.length > 0) found[scheme] = describeViolations(violations);
  }
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'reduce' });
  return found;
}

/** Stops the installation (SIGTERM, or SIGKILL with `crash`) and starts it again on the same data folder. */
export async function restartNode(
  node: Node,
  options: { crash?: boolean; uiPort?: number; beforeStart?: () => Promise<void> } = {},
): Promise<void> {
  if (options.crash) await node.serve.crash();
  else await node.serve.stop();
  await options.beforeStart?.();
  const serve = await startServe({
    name: node.name,
    dataDir: node.serve.dataDir,
    ...(options.uiPort ? { extraArgs: ['--ui-port', String(options.uiPort)] } : {}),
  });
  node.serve = serve;
  // The owner's `serve` token is issued anew on every start.
  node.api = await serve.connect();
}

/** The port of an installation's UI address. */
export const uiPortOf = (node: Node): number => Number(new URL(node.serve.info.ui).port);

/**
 * A `command` role run by Node: in a conversation or task, `ask PEER/ROLE: Q` sends Q
 * with the real `parley` CLI and says `asked PEER/ROLE`; in an agent conversation
 * (an answer came back) it works for two minutes, so its card shows it working.
 */
export async function slowAnswerRole(node: Node, name: string, dir: string): Promise<RoleView> {
  const script = path.join(dir, `${name}.mjs`);
  writeFileSync(
    script,
    `import { execFileSync } from 'node:child_process';
let data = '';
process.stdin.on('data', (chunk) => (data += chunk));
process.stdin.on('end', () => {
  const turn = JSON.parse(data);
  if (turn.context.kind === 'thread') {
    setTimeout(() => console.log('read the answer'), 120_000);
    return;
  }
  const out = [];
  for (const input of turn.inputs) {
    const ask = /^ask\\s+(\\S+?):\\s*([\\s\\S]+)$/.exec(input.body.trim());
    if (ask) {
      execFileSync('parley', ['send', '--to', ask[1], ask[2]]);
      out.push('asked ' + ask[1]);
    } else out.push('echo: ' + input.body);
  }
  console.log(out.join('\\n'));
});
`,
  );
  return node.api.call('roles.create', {
    name,
    description: 'Takes its time over every answer',
    agent: { adapter: 'command', command: [process.execPath, script], input: 'json' },
  });
}
