// How peers reach an installation, in the UI: the real page in Chromium, once served by
// a desktop main process (under the stand-in electron module, the page under the
// desktop's CSP header, its API calls through the process's IPC handler) where an owner
// changes the address, and once by `parley serve`, whose flags decide and are only shown.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDesktop, type DesktopProcess } from '../test-support/desktop-process';
import { removeDataDir } from '../test-support/serve-process';
import { openDesktopPage, type DesktopPage } from './support/desktop-page';
import {
  assertReady,
  launchChromium,
  openSettings,
  openUi,
  shoot,
  startNode,
  stopNodes,
  visible,
  type Node,
  describeInBrowser,
} from './support/ui-harness';

let browser: Browser | undefined;
let desktop: DesktopProcess | undefined;
let server: Node | undefined;
const pages: DesktopPage[] = [];

beforeAll(async () => {
  assertReady();
  [browser, desktop, server] = await Promise.all([launchChromium(), startDesktop({ name: 'alice' }), startNode('bob')]);
}, 60_000);

afterAll(async () => {
  for (const page of pages) await page.close().catch(() => undefined);
  await browser?.close();
  await desktop?.quit();
  if (desktop) removeDataDir(desktop.dataDir);
  await stopNodes([server]);
});

function setup() {
  if (!browser || !desktop || !server) throw new Error('setup failed');
  return { browser, desktop, server };
}

const card = (page: Page) => page.getByRole('article', { name: 'How peers reach you' });

describeInBrowser('the peer address in the desktop app', () => {
  it(
    'is shown in Settings, changed there by the owner, and carried by the invitation',
    { timeout: 90_000 },
    async () => {
      const { browser, desktop } = setup();
      const opened = await openDesktopPage(browser, desktop);
      pages.push(opened);
      const { page, problems } = opened;

      // The menu's Settings… (Cmd/Ctrl+,) opens Settings in the page.
      const { menu } = await desktop.inspect();
      const top = menu!.find((item) => item.submenu?.some((sub) => sub.label === 'Settings…'))!;
      await desktop.control({ op: 'menu-click', path: [top.label ?? top.role!, 'Settings…'] });
      await visible(page.getByRole('heading', { name: 'Connections', level: 2 }));

      const status = await desktop.invoke('network.get', {});
      const address = card(page);
      await visible(address.getByText(status.invitationAddress!, { exact: true }));
      await visible(address.getByText('Reachable', { exact: true }));
      await visible(address.getByText(/Only programs on this computer can dial/));
      await shoot(page, 'settings-peer-address');

      // A value that cannot work is refused in the dialog, which keeps what was typed.
      await address.getByRole('button', { name: 'Change address' }).click();
      const dialog = page.getByRole('dialog', { name: 'Where peers reach you' });
      await dialog.getByLabel('Advertised address').fill('0.0.0.0:4180');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await visible(dialog.getByRole('alert').getByText(/cannot be dialled/));
      expect(await dialog.getByLabel('Advertised address').inputValue()).toBe('0.0.0.0:4180');
      await shoot(page, 'settings-peer-address-dialog');

      // A new port: it listens there, and the card says so.
      await dialog.getByLabel('Advertised address').fill('');
      await dialog.getByLabel('Port').fill('0');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.waitFor({ state: 'detached' });
      const moved = await desktop.waitFor(async () => {
        const now = await desktop.invoke('network.get', {});
        return now.listening !== status.listening && now;
      }, 'the listener to move');
      await visible(address.getByText(moved.invitationAddress!, { exact: true }));

      await page.getByRole('button', { name: 'Invite' }).click();
      const invite = page.getByRole('dialog', { name: 'Invite an installation' });
      await visible(invite.getByText(moved.invitationAddress!, { exact: true }));
      await invite.getByRole('button', { name: 'Create invitation' }).click();
      await visible(invite.getByText('They will dial'));
      expect(await invite.locator('.invite-address code').first().textContent()).toBe(moved.invitationAddress);
      await shoot(page, 'invite-address');
      await invite.getByRole('button', { name: 'Done' }).click();
      // The page ran under the desktop's CSP (connect-src 'none') without a violation.
      expect(problems).toEqual([]);
    },
  );
});

describeInBrowser('the peer address of `parley serve`', () => {
  it('is shown as its flags set it, with a check but no way to change it', { timeout: 60_000 }, async () => {
    const { browser, server } = setup();
    const { page, context, problems } = await openUi(browser, server);
    try {
      await openSettings(page, 'Connections');
      const address = card(page);
      await visible(address.getByText(server.serve.info.peer!.replace('wss://', ''), { exact: true }));
      await visible(address.getByText(/parley serve’s flags/));
      expect(await address.getByRole('button', { name: 'Change address' }).count()).toBe(0);
      await address.getByRole('button', { name: 'Check now' }).click();
      await visible(address.getByText('Reachable', { exact: true }));
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
