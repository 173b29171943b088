// Signing in to the UI of a real `parley serve` in Chromium: the token from the address
// fragment (taken out of the address bar, kept for the tab), and the sign-in form for a
// tab without one.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  assertReady,
  launchChromium,
  shoot,
  shootVariants,
  startNode,
  stopNodes,
  visible,
  type Node,
  describeInBrowser,
} from './support/ui-harness';

describeInBrowser('signing in', () => {
  let node: Node | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    assertReady();
    [node, browser] = await Promise.all([startNode('alice'), launchChromium()]);
  });

  afterAll(async () => {
    await browser?.close();
    await stopNodes([node]);
  });

  it('signs in from the address fragment, hides the token and stays signed in on reload', async () => {
    if (!node || !browser) throw new Error('setup failed');
    const { token } = node.serve.info;
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
    });
    await page.goto(`${node.serve.info.ui}#token=${token}`);
    await visible(page.getByRole('button', { name: 'Settings', exact: true }));
    expect(await page.locator('.whoami').getAttribute('title')).toBe(`Signed in as ${node.owner.name} (owner)`);
    expect(await page.title()).toBe('Parley');
    expect(page.url()).not.toContain(token);

    await page.reload();
    await visible(page.getByRole('button', { name: 'Settings', exact: true }));
    expect(page.url()).not.toContain(token);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('says so on the sign-in screen when the link’s token is not accepted', async () => {
    if (!node || !browser) throw new Error('setup failed');
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${node.serve.info.ui}#token=pst_not-a-real-token`);
    await visible(page.getByRole('heading', { name: 'Sign in to Parley' }));
    const alert = page.getByRole('alert');
    await visible(alert);
    expect(await alert.innerText()).toMatch(/link/i);
    expect(page.url()).not.toContain('pst_not-a-real-token');
    await page.close();
  });

  it('asks for a token when the address has none, and refuses a wrong one', async () => {
    if (!node || !browser) throw new Error('setup failed');
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(node.serve.info.ui);
    await visible(page.getByRole('heading', { name: 'Sign in to Parley' }));
    await page.getByLabel('Sign-in token').fill('not-a-real-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await visible(page.getByRole('alert'));
    expect(await page.getByRole('button', { name: 'Settings', exact: true }).count()).toBe(0);
    await shootVariants(page, 'sign-in', ['small', 'dark']);
    await shoot(page, 'sign-in');

    await page.getByLabel('Sign-in token').fill(node.serve.info.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await visible(page.getByRole('button', { name: 'Settings', exact: true }));
    await page.close();
  });
});
