// Ctrl/Cmd+K and full-text search in Chromium, against two real `parley serve`
// installations (alice and bob) paired over mutual TLS with scripted roles: the
// switcher finds by name and by what was said, works from the keyboard alone, opens
// what is chosen, and shows a member nothing of what only the owner reads.
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { axeInBothSchemes } from './support/axe-scan';
import {
  assertReady,
  pair,
  scriptedRole,
  shoot,
  shootVariants,
  threadCard,
  threadsRegion,
  until,
  visible,
  describeInBrowser,
} from './support/ui-harness';
import { uiScene } from './support/ui-scene';

const scene = uiScene(['alice', 'bob'], { forAxe: true });
const { nodes, open } = scene;
let memberToken = '';

const switcher = (page: Page) => page.getByRole('dialog', { name: 'Go to' });
const field = (page: Page) => switcher(page).getByRole('combobox');
const option = (page: Page, name: string | RegExp) => switcher(page).getByRole('option', { name });

/** Opens the switcher with the keyboard and types `query`. */
async function find(page: Page, query: string): Promise<void> {
  await page.keyboard.press('Control+K');
  await visible(switcher(page));
  expect(await field(page).evaluate((el) => el === document.activeElement)).toBe(true);
  await page.keyboard.type(query);
}

/** The option the combobox points at (aria-activedescendant). */
async function activeOption(page: Page): Promise<string> {
  const id = await field(page).getAttribute('aria-activedescendant');
  if (!id) return '';
  return (await page.locator(`[id="${id}"]`).textContent()) ?? '';
}

/** Presses ArrowDown until the active option holds `text`. */
async function arrowTo(page: Page, text: string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    if ((await activeOption(page)).includes(text)) return;
    await page.keyboard.press('ArrowDown');
  }
  throw new Error(`no option holding "${text}"; the last was "${await activeOption(page)}"`);
}

describeInBrowser('search and the Ctrl+K switcher', () => {
  beforeAll(async () => {
    assertReady();
    const { alice, bob } = await scene.start();
    await scriptedRole(alice, 'assistant', 'Helps alice with anything');
    await scriptedRole(alice, 'writer', 'Drafts and edits text');
    await scriptedRole(bob, 'researcher', 'Finds and checks facts');
    await pair(bob, ['researcher'], alice, ['assistant']);
    const [assistant] = (await alice.api.call('roles.list', {})).filter((r) => r.name === 'assistant');
    const conversation = await alice.api.call('conversations.open', { roleId: assistant!.id });
    await alice.api.call('conversations.send', {
      id: conversation.id,
      text: 'ask bob/researcher: where do the penguins nest?',
    });
    await alice.api.waitFor(
      async () =>
        (await alice.api.call('conversations.get', { id: conversation.id })).messages.some((m) =>
          m.body.startsWith('bob/researcher says:'),
        ),
      30_000,
      'the answer from bob',
    );
    const writer = (await alice.api.call('roles.list', {})).find((r) => r.name === 'writer')!;
    await alice.api.call('tasks.create', { roleId: writer.id, title: 'Plan the lighthouse visit' });
    memberToken = (await alice.api.call('people.add', { name: 'mia', kind: 'member' })).token;
  }, 120_000);

  it('finds roles, tasks and peers by name and opens them, from the keyboard alone', { timeout: 90_000 }, async () => {
    const { alice } = nodes();
    const { page, problems } = await open(alice);

    // A role with no conversation yet: Enter opens one.
    await find(page, 'wri');
    await visible(option(page, /^writer/));
    expect(await activeOption(page)).toMatch(/^writer/);
    await page.keyboard.press('Enter');
    await visible(page.getByRole('heading', { name: 'writer', level: 1 }));
    expect(await switcher(page).count()).toBe(0);

    await find(page, 'lighth');
    await visible(option(page, /Plan the lighthouse visit/));
    await page.keyboard.press('Enter');
    await visible(page.getByRole('heading', { name: 'Plan the lighthouse visit', level: 1 }));

    await find(page, 'bob');
    await visible(switcher(page).getByRole('group', { name: 'Peers' }).getByRole('option', { name: /^bob/ }));
    await arrowTo(page, 'Connection');
    await page.keyboard.press('Enter');
    await visible(page.getByRole('heading', { name: 'Connections', level: 2 }));

    // Up from the first wraps to the last; Esc closes and gives focus back.
    const searchButton = page.getByRole('button', { name: /^Search/ });
    await searchButton.focus();
    await page.keyboard.press('Control+K');
    await visible(switcher(page));
    const first = await activeOption(page);
    await page.keyboard.press('ArrowUp');
    expect(await activeOption(page)).not.toBe(first);
    await page.keyboard.press('ArrowDown');
    expect(await activeOption(page)).toBe(first);
    await page.keyboard.press('Escape');
    await until(async () => (await switcher(page).count()) === 0, 'the switcher to close');
    expect(await searchButton.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(problems).toEqual([]);
  });

  it(
    'finds what was said in an agent conversation and opens it, unfolded, where it lives',
    { timeout: 90_000 },
    async () => {
      const { alice } = nodes();
      const { page, problems } = await open(alice);
      await find(page, 'penguins');
      const texts = switcher(page).getByRole('group', { name: 'In messages and texts' });
      const hit = texts.getByRole('option', { name: /Agent conversation · bob\/researcher/ });
      await visible(hit);
      await visible(hit.locator('mark', { hasText: /^penguins$/i }));
      await visible(texts.getByRole('option', { name: /Conversation · assistant/ }));
      await visible(
        switcher(page)
          .getByRole('status')
          .getByText(/results?\./),
      );
      await shoot(page, 'switcher-search');
      await shootVariants(page, 'switcher-search', ['dark', 'small']);
      expect(await axeInBothSchemes(page)).toBe('');

      await arrowTo(page, 'Agent conversation');
      await page.keyboard.press('Enter');
      await visible(page.getByRole('heading', { name: 'assistant', level: 1 }));
      const card = threadCard(threadsRegion(page), 'bob', 'researcher');
      await visible(card.getByRole('list', { name: 'Texts with bob/researcher' }));
      await visible(card.getByText('where do the penguins nest?', { exact: true }));
      // Chosen again from inside its conversation, the keyboard lands on the card, not the sidebar.
      await find(page, 'penguins');
      await visible(
        switcher(page)
          .getByRole('group', { name: 'In messages and texts' })
          .getByRole('option', { name: /Agent conversation · bob\/researcher/ }),
      );
      await arrowTo(page, 'Agent conversation');
      await page.keyboard.press('Enter');
      await until(
        () => card.locator('.thread-toggle').evaluate((element) => element === document.activeElement),
        'the focus on the agent conversation',
      );
      expect(problems).toEqual([]);
    },
  );

  it('finds a peer’s role by its name and starts an ask to it in a conversation', { timeout: 60_000 }, async () => {
    const { alice } = nodes();
    const { page, problems } = await open(alice);
    await find(page, 'researcher');
    const ask = switcher(page)
      .getByRole('group', { name: 'Peers’ roles' })
      .getByRole('option', { name: /^Ask bob\/researcher…/ });
    await visible(ask);
    await arrowTo(page, 'Ask bob/researcher');
    await page.keyboard.press('Enter');
    const composer = page.getByRole('textbox', { name: 'Message' });
    await until(async () => (await composer.inputValue()) === 'ask bob/researcher: ', 'the ask to be started');
    expect(await composer.evaluate((element) => element === document.activeElement)).toBe(true);
    expect(problems).toEqual([]);
  });

  it('shows a member nothing of what only the owner reads', { timeout: 60_000 }, async () => {
    const { alice } = nodes();
    const { page, problems } = await open(alice, { token: memberToken });
    await find(page, 'penguins');
    await visible(switcher(page).getByRole('status').getByText('Nothing found.'));
    expect(await switcher(page).getByRole('option').count()).toBe(0);
    // The task is everyone's.
    await field(page).fill('lighthouse');
    await visible(option(page, /Plan the lighthouse visit/));
    // Found by its title, and not offered a second time among the full-text hits.
    await visible(switcher(page).getByRole('status').getByText('1 result.'));
    await shoot(page, 'switcher-member');
    expect(problems).toEqual([]);
  });
});
