// The window opens at once: index.html paints the splash itself before any script has
// run, and the first view's script leaves out what that view does not show — Settings,
// the switcher with search, and the Markdown parser load when they are needed.
import type { Browser, Request } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { initialScripts } from '../bench/ui-open';
import {
  assertReady,
  describeInBrowser,
  launchChromium,
  openUi,
  scriptedRole,
  shoot,
  startNode,
  stopNodes,
  visible,
  type Node,
} from './support/ui-harness';

describeInBrowser('opening the window', () => {
  let node: Node | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    assertReady();
    [node, browser] = await Promise.all([startNode('alice'), launchChromium()]);
    await scriptedRole(node, 'assistant', 'Echoes');
  });

  afterAll(async () => {
    await browser?.close();
    await stopNodes([node]);
  });

  it('shows the splash before any script has run', async () => {
    if (!node || !browser) throw new Error('setup failed');
    const context = await browser.newContext();
    // The page as it is before its scripts arrive: none of them ever does.
    await context.route('**/*.js', (route) => route.abort());
    const page = await context.newPage();
    await page.goto(`${node.serve.info.ui}#token=${node.serve.info.token}`);
    expect(await page.getByRole('status').textContent()).toBe('Opening Parley…');
    // Styled as the app's own splash (the stylesheet loads before the first paint).
    const mark = page.locator('.brand-mark');
    expect(await mark.evaluate((element) => getComputedStyle(element).borderRadius)).toBe('14px');
    await shoot(page, 'open-splash');
    await context.close();
  });

  it('loads Settings and the switcher only when they are opened', async () => {
    if (!node || !browser) throw new Error('setup failed');
    const scripts: string[] = [];
    const { page, context, problems } = await openUi(browser, node);
    page.on('request', (request: Request) => {
      if (request.resourceType() === 'script') scripts.push(new URL(request.url()).pathname);
    });
    const initial = initialScripts().map((script) => script.file.replace(/^\.\//, '/'));
    expect(initial.some((file) => /settings|switcher|markdown-render/.test(file))).toBe(false);

    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await visible(page.getByRole('tab', { name: 'Connections' }));
    expect(scripts.some((file) => /\/assets\/settings-[^/]+\.js$/.test(file))).toBe(true);

    await page.keyboard.press('Control+k');
    await visible(page.getByRole('combobox'));
    expect(scripts.some((file) => /\/assets\/switcher-[^/]+\.js$/.test(file))).toBe(true);
    expect(problems).toEqual([]);
    await context.close();
  });
});
