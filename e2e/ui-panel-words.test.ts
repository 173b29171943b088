// Finding one's place and reading plainly: the "New" line and the jump to it in a
// conversation, the Agent conversations panel's filters and its one banner per peer, and
// the words on a card. Chromium against three real `parley serve` installations with
// scripted roles, paired over mutual TLS; axe-scanned light and dark.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  assertReady,
  axeInBothSchemes,
  describeInBrowser,
  launchChromium,
  onScreen,
  openUi,
  pair,
  scriptedRole,
  startNode,
  stopNodes,
  threadCard,
  threadsRegion,
  until,
  visible,
  type Node,
  type OpenedPage,
} from './support/ui-harness';

let alice: Node | undefined;
let bob: Node | undefined;
let carol: Node | undefined;
let browser: Browser | undefined;
const opened: OpenedPage[] = [];

function nodes() {
  if (!alice || !bob || !carol || !browser) throw new Error('setup failed');
  return { alice, bob, carol, browser };
}

async function open(node: Node): Promise<OpenedPage> {
  const page = await openUi(nodes().browser, node, { forAxe: true });
  opened.push(page);
  return page;
}

const sidebar = (page: Page) => page.getByRole('navigation', { name: 'Parley' });

/** Sends `text` to the role of conversation `id` through the API and waits for its answer. */
async function sayAndWait(node: Node, id: number, text: string): Promise<void> {
  const sent = await node.api.call('conversations.send', { id, text });
  await node.api.waitFor(
    async () =>
      (await node.api.call('conversations.get', { id })).messages.some(
        (m) => m.id > sent.id && m.author.kind === 'role',
      ),
    20_000,
    `an answer to “${text.slice(0, 20)}”`,
  );
}

describeInBrowser('finding one’s place, in plain words', () => {
  let assistantConversation = 0;
  let writerConversation = 0;

  beforeAll(async () => {
    assertReady();
    [alice, bob, carol, browser] = await Promise.all([
      startNode('alice'),
      startNode('bob'),
      startNode('carol'),
      launchChromium(),
    ]);
    const assistant = await scriptedRole(alice, 'assistant', 'Helps alice with anything');
    const writer = await scriptedRole(alice, 'writer', 'Drafts and edits text');
    await scriptedRole(bob, 'researcher', 'Finds and checks facts');
    await scriptedRole(carol, 'analyst', 'Numbers and charts');
    await pair(bob, ['researcher'], alice, ['assistant']);
    await pair(carol, ['analyst'], alice, ['assistant']);
    assistantConversation = (await alice.api.call('conversations.open', { roleId: assistant.id })).id;
    writerConversation = (await alice.api.call('conversations.open', { roleId: writer.id })).id;
  }, 90_000);

  afterAll(async () => {
    for (const { context } of opened) await context.close().catch(() => undefined);
    await browser?.close();
    await stopNodes([alice, bob, carol]);
  });

  it('draws a New line above what came while alice was away, and jumps to it', { timeout: 90_000 }, async () => {
    const { alice } = nodes();
    await sayAndWait(alice, writerConversation, 'the first draft, please');
    const { page, problems } = await open(alice);
    // The newest conversation opens, and reading it leaves nothing new in it.
    await visible(page.getByRole('heading', { name: 'writer', level: 1 }));
    await visible(page.getByText('echo: the first draft, please'));
    await until(
      async () =>
        !(
          await sidebar(page)
            .getByRole('button', { name: /^writer/ })
            .textContent()
        )?.includes('unread'),
      'the writer conversation read',
    );
    await sidebar(page)
      .getByRole('button', { name: /^assistant/ })
      .click();
    await visible(page.getByRole('heading', { name: 'assistant', level: 1 }));
    expect(await page.locator('.new-divider').count()).toBe(0);

    // While alice is elsewhere, three long answers come in the writer conversation.
    const long = (n: number) => Array.from({ length: 12 }, (_, i) => `draft ${n}, line ${i + 1}`).join('\n');
    for (const n of [1, 2, 3]) await sayAndWait(alice, writerConversation, long(n));
    await sidebar(page)
      .getByRole('button', { name: /^writer/ })
      .click();
    await visible(page.getByRole('heading', { name: 'writer', level: 1 }));
    const messages = page.getByRole('region', { name: 'Messages' });
    const jump = messages.getByRole('button', { name: 'Jump to the first unread' });
    await visible(jump);
    // The line sits just above the first new answer, after what was read before.
    const order = await messages.evaluate((region) => {
      const texts = [...region.querySelectorAll('.virtual-row')]
        .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
        .map((row) => (row.querySelector('.new-divider') ? 'NEW' : (row.textContent ?? '').slice(0, 40)));
      return texts;
    });
    expect(order.at(-1)).toContain('draft 3, line 1');
    await jump.click();
    const divider = messages.locator('.new-divider');
    await until(() => divider.evaluate((element) => element === document.activeElement), 'the focus on the New line');
    expect(await onScreen(divider)).toBe(true);
    await until(async () => (await jump.count()) === 0, 'the jump button gone once the line is in view');
    const rows = await messages.evaluate((region) =>
      [...region.querySelectorAll('.virtual-row')]
        .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
        .map((row) => (row.querySelector('.new-divider') ? 'NEW' : (row.textContent ?? '').replace(/\s+/g, ' '))),
    );
    const at = rows.indexOf('NEW');
    expect(rows[at - 1]).toContain('draft 1, line 1');
    expect(rows[at - 1]).not.toContain('echo');
    expect(rows[at + 1]).toContain('echo: draft 1, line 1');
    expect(await axeInBothSchemes(page, 'new-line'), 'axe on the New line').toEqual({});

    // Left and opened again with nothing new: no line.
    await sidebar(page)
      .getByRole('button', { name: /^assistant/ })
      .click();
    await sidebar(page)
      .getByRole('button', { name: /^writer/ })
      .click();
    await visible(page.getByText('echo: draft 3, line 1'));
    expect(await page.locator('.new-divider').count()).toBe(0);
    expect(problems).toEqual([]);
  });
});
