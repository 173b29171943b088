// Finding one's way back: Home in the sidebar leads back to the first-run checklist from
// anywhere (Settings, a reload there) until it is done, and then shows what waits and
// what is recent; at 200% zoom (640×400 CSS pixels) the sidebar folds into a rail whose
// menu opens it over the page with room for the conversations. Chromium against a real
// `parley serve`, axe-scanned light and dark.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServe } from '../test-support/serve-process';
import {
  assertReady,
  axeInBothSchemes,
  describeInBrowser,
  launchChromium,
  openSettings,
  openUi,
  scriptedRole,
  stopNodes,
  until,
  visible,
  type Node,
  type OpenedPage,
} from './support/ui-harness';

let alice: Node | undefined;
let browser: Browser | undefined;
const opened: OpenedPage[] = [];

function nodes() {
  if (!alice || !browser) throw new Error('setup failed');
  return { alice, browser };
}

async function open(options: Parameters<typeof openUi>[2] = {}): Promise<OpenedPage> {
  const page = await openUi(nodes().browser, nodes().alice, { ...options, forAxe: true });
  opened.push(page);
  return page;
}

const sidebar = (page: Page) => page.getByRole('navigation', { name: 'Parley' });
const checklist = (page: Page) => page.getByRole('region', { name: 'Get started' });

describeInBrowser('finding one’s way', () => {
  beforeAll(async () => {
    assertReady();
    // A fresh installation whose first run made its `assistant`: the checklist is offered.
    const serve = await startServe({ name: 'alice', env: { PARLEY_DEFAULT_ROLE: 'on', PATH: '/usr/bin:/bin' } });
    const api = await serve.connect();
    const { person } = await api.call('session.whoami', {});
    alice = { name: 'alice', serve, api, owner: person };
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    for (const { context } of opened) await context.close().catch(() => undefined);
    await browser?.close();
    await stopNodes([alice]);
  });

  it('Home leads back to the checklist after Settings and after a reload there', { timeout: 60_000 }, async () => {
    const { page, problems } = await open();
    await visible(checklist(page));
    await openSettings(page, 'Connections');
    expect(await checklist(page).count()).toBe(0);
    await page.reload();
    await visible(page.getByRole('heading', { name: 'Connections', level: 2 }));
    await sidebar(page).getByRole('button', { name: 'Home' }).click();
    await visible(checklist(page));
    expect(await sidebar(page).getByRole('button', { name: 'Home' }).getAttribute('aria-current')).toBe('page');
    expect(await axeInBothSchemes(page, 'home-checklist'), 'axe on Home').toEqual({});
    expect(problems).toEqual([]);
  });

  it('once the checklist is hidden, Home shows what was said recently', { timeout: 60_000 }, async () => {
    const { alice } = nodes();
    const role = (await alice.api.call('roles.list', {})).find((r) => r.name === 'assistant')!;
    const conversation = await alice.api.call('conversations.open', { roleId: role.id });
    await alice.api.call('conversations.send', { id: conversation.id, text: 'what is on today?' });
    await alice.api.call('firstRun.dismiss', {});
    const { page, problems } = await open();
    // Opening lands in the newest conversation; Home is a click away.
    await visible(page.getByRole('heading', { name: 'assistant', level: 1 }));
    await sidebar(page).getByRole('button', { name: 'Home' }).click();
    const recent = page.getByRole('region', { name: 'Recent' });
    await visible(recent.getByRole('button', { name: /^assistant/ }));
    expect(await checklist(page).count()).toBe(0);
    await recent.getByRole('button', { name: /^assistant/ }).click();
    await visible(page.getByRole('heading', { name: 'assistant', level: 1 }));
    expect(problems).toEqual([]);
  });

  it(
    'at 200% zoom the sidebar folds into a rail and opens over the page with its conversations in view',
    {
      timeout: 90_000,
    },
    async () => {
      const { alice } = nodes();
      for (let n = 1; n <= 7; n++) {
        const role = await scriptedRole(alice, `helper${n}`, `Helper number ${n}`);
        await alice.api.call('conversations.open', { roleId: role.id });
      }
      const { page, context, problems } = await open();
      await until(async () => (await sidebar(page).locator('.conversation-item').count()) >= 8, 'the conversations');
      // 1280×800 at 200% zoom is what a 640×400 window of CSS pixels at twice the density shows.
      await page.setViewportSize({ width: 640, height: 400 });
      await until(async () => !(await sidebar(page).isVisible()), 'the sidebar to fold');
      const menu = page.getByRole('button', { name: 'Show the sidebar' });
      await visible(menu);
      await menu.click();
      await visible(sidebar(page));
      const inView = await sidebar(page)
        .locator('.conversation-item')
        .evaluateAll((items) =>
          items.filter((item) => {
            const box = item.getBoundingClientRect();
            const list = item.closest('.conversation-list')!.getBoundingClientRect();
            return box.top >= list.top - 1 && box.bottom <= list.bottom + 1 && box.bottom <= window.innerHeight;
          }),
        );
      expect(inView.length).toBeGreaterThanOrEqual(4);
      // The places and Settings are still there, by name.
      await visible(sidebar(page).getByRole('button', { name: /^Tasks/ }));
      await visible(sidebar(page).getByRole('button', { name: 'Settings', exact: true }));
      expect(await axeInBothSchemes(page, 'sidebar-200-percent'), 'axe on the open sidebar').toEqual({});
      // Choosing a conversation closes it over the page.
      await sidebar(page)
        .getByRole('button', { name: /^helper3/ })
        .click();
      await visible(page.getByRole('heading', { name: 'helper3', level: 1 }));
      await until(async () => !(await sidebar(page).isVisible()), 'the sidebar to close');
      expect(problems).toEqual([]);
      await context.close();
    },
  );
});
