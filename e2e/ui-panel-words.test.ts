// Finding one's place and reading plainly: the "New" line and the jump to it in a
// conversation, the Agent conversations panel's filters and its one banner per peer, and
// the words on a card. Chromium against three real `parley serve` installations with
// scripted roles, paired over mutual TLS; axe-scanned light and dark.
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import {
  assertReady,
  axeInBothSchemes,
  describeInBrowser,
  onScreen,
  pair,
  scriptedRole,
  threadCard,
  threadsRegion,
  until,
  visible,
  type Node,
} from './support/ui-harness';
import { uiScene } from './support/ui-scene';

const scene = uiScene(['alice', 'bob', 'carol'], { forAxe: true });
const { nodes, open } = scene;

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

/** Every Approve and Deny on the page lies inside the box of the row it decides. */
async function buttonsInsideRows(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const outside: string[] = [];
    for (const button of document.querySelectorAll<HTMLElement>('.approval-item button')) {
      if (!/^(Approve|Deny)/.test(button.textContent ?? '')) continue;
      const row = button.closest('.approval-item')!.getBoundingClientRect();
      const box = button.getBoundingClientRect();
      if (
        box.left < row.left - 0.5 ||
        box.right > row.right + 0.5 ||
        box.top < row.top - 0.5 ||
        box.bottom > row.bottom + 0.5
      )
        outside.push(
          `${button.getAttribute('aria-label') ?? button.textContent}: ${JSON.stringify(box)} outside ${JSON.stringify(row)}`,
        );
    }
    return outside;
  });
}

/** A held ask's Approve and Deny, on its card and in Waiting on you, wide and narrow. */
async function approvalButtonsInTheirRows(node: Node): Promise<void> {
  const { page, problems } = await open(node);
  await sidebar(page)
    .getByRole('button', { name: /^assistant/ })
    .click();
  const card = threadCard(threadsRegion(page), 'bob', 'critic');
  await visible(card.getByRole('button', { name: /^Approve/ }));
  expect(await buttonsInsideRows(page), 'on the card, 1280×800').toEqual([]);
  await page.setViewportSize({ width: 1100, height: 700 });
  await visible(card.getByRole('button', { name: /^Approve/ }));
  expect(await buttonsInsideRows(page), 'on the card, 1100×700').toEqual([]);
  await sidebar(page)
    .getByRole('button', { name: /^Waiting on you/ })
    .click();
  await visible(
    page
      .getByRole('main')
      .getByRole('button', { name: /^Approve/ })
      .first(),
  );
  expect(await buttonsInsideRows(page), 'in Waiting on you').toEqual([]);
  expect(await axeInBothSchemes(page, 'approval-rows'), 'axe on Waiting on you').toEqual({});
  await page.setViewportSize({ width: 1280, height: 800 });
  expect(problems).toEqual([]);
}

describeInBrowser('finding one’s place, in plain words', () => {
  let assistantConversation = 0;
  let writerConversation = 0;
  /** Alice's connection to bob. */
  let bobHere = 0;

  beforeAll(async () => {
    assertReady();
    const { alice, bob, carol } = await scene.start();
    const assistant = await scriptedRole(alice, 'assistant', 'Helps alice with anything');
    const writer = await scriptedRole(alice, 'writer', 'Drafts and edits text');
    await scriptedRole(bob, 'researcher', 'Finds and checks facts');
    await scriptedRole(bob, 'critic', 'Reads drafts closely');
    await scriptedRole(carol, 'analyst', 'Numbers and charts');
    bobHere = (await pair(bob, ['researcher', 'critic'], alice, ['assistant', 'writer'])).acceptorSide;
    await pair(carol, ['analyst'], alice, ['assistant']);
    assistantConversation = (await alice.api.call('conversations.open', { roleId: assistant.id })).id;
    writerConversation = (await alice.api.call('conversations.open', { roleId: writer.id })).id;
  }, 90_000);

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
    const lastRow = () =>
      messages.evaluate((region) => {
        const texts = [...region.querySelectorAll('.virtual-row')]
          .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
          .map((row) => (row.querySelector('.new-divider') ? 'NEW' : (row.textContent ?? '').slice(0, 40)));
        return texts.at(-1) ?? '';
      });
    // The turn's end reaches the page a moment after its answer: "writer is working…" goes then.
    await until(async () => (await lastRow()).includes('draft 3, line 1'), 'the third answer last on screen');
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

  it('offers what is left of deleted conversations only when there is some', { timeout: 90_000 }, async () => {
    const { alice } = nodes();
    const { page, problems } = await open(alice);
    const leftovers = sidebar(page).getByRole('button', { name: 'From deleted chats' });
    await visible(sidebar(page).getByRole('button', { name: 'Started by peers' }));
    expect(await leftovers.count()).toBe(0);
    await alice.api.call('conversations.send', { id: writerConversation, text: 'ask bob/researcher: for the draft?' });
    await alice.api.waitFor(
      async () =>
        (await alice.api.call('threads.list', { root: { kind: 'conversation', id: writerConversation } })).length > 0,
      20_000,
      'the writer’s agent conversation',
    );
    await alice.api.call('conversations.delete', { id: writerConversation });
    await visible(leftovers);
    await leftovers.click();
    await visible(page.getByRole('heading', { name: 'From deleted chats and tasks', level: 1 }));
    await visible(threadCard(threadsRegion(page), 'bob', 'researcher'));
    expect(problems).toEqual([]);
  });

  it(
    'filters the panel, says once per peer that it is away, and gives each card one status',
    { timeout: 120_000 },
    async () => {
      const { alice, carol } = nodes();
      const root = { kind: 'conversation' as const, id: assistantConversation };
      for (const ask of [
        'ask bob/researcher: first question',
        'ask bob/critic: review this',
        'ask carol/analyst: numbers?',
      ])
        await sayAndWait(alice, assistantConversation, ask);
      await alice.api.waitFor(
        async () => {
          const threads = await alice.api.call('threads.list', { root });
          return threads.length === 3 && threads.every((t) => t.lastText?.direction === 'in' && t.run.state === 'idle');
        },
        30_000,
        'three answers in',
      );
      // An ask to bob/critic held for alice's approval, bob's connection then paused here, and carol gone offline.
      await alice.api.call('connections.setPolicy', { id: bobHere, outgoing: 'ask' });
      await alice.api.call('conversations.send', { id: assistantConversation, text: 'ask bob/critic: still there?' });
      await alice.api.waitFor(
        async () => (await alice.api.call('approvals.list', {})).find((a) => a.thread !== null && a.text !== null),
        20_000,
        'the ask to bob/critic held',
      );
      await approvalButtonsInTheirRows(nodes().alice);
      await alice.api.call('connections.pause', { id: bobHere });
      await carol.serve.crash();
      await alice.api.waitFor(
        async () => (await alice.api.call('connections.list', {})).find((c) => c.name === 'carol' && !c.online),
        20_000,
        'carol offline',
      );

      const { page, problems } = await open(alice);
      await sidebar(page)
        .getByRole('button', { name: /^assistant/ })
        .click();
      const region = threadsRegion(page);
      await visible(threadCard(region, 'carol', 'analyst'));
      // One sentence per peer, above the cards, not one per card.
      await visible(region.getByText(/^The connection to bob is paused here/));
      expect(await region.getByText(/bob is paused here/).count()).toBe(1);
      expect(await region.getByText(/^carol is offline/).count()).toBe(1);
      // One status per card: Paused, never Paused and Open.
      for (const role of ['researcher', 'critic']) {
        const badges = await threadCard(region, 'bob', role).locator('.thread-state .badge').allTextContents();
        expect(badges.filter((b) => !/unread/.test(b))).toEqual(['Paused']);
      }
      const carolBadges = await threadCard(region, 'carol', 'analyst')
        .locator('.thread-state .badge')
        .allTextContents();
      expect(carolBadges.filter((b) => !/unread/.test(b))).toEqual(['Offline']);
      expect(await axeInBothSchemes(page, 'panel-banners'), 'axe on the banners').toEqual({});

      const filters = region.getByRole('group', { name: 'Filter agent conversations' });
      const cards = region.getByRole('article');
      await filters.getByLabel('Peer').selectOption('carol');
      await until(async () => (await cards.count()) === 1, 'only carol’s card');
      await visible(threadCard(region, 'carol', 'analyst'));
      await filters.getByLabel('State').selectOption('closed');
      await visible(region.getByText('No agent conversation here matches these filters.'));
      await filters.getByRole('button', { name: 'Clear filters' }).click();
      await until(async () => (await cards.count()) === 3, 'every card again');
      await filters.getByRole('button', { name: 'Waiting on you' }).click();
      await until(async () => (await cards.count()) === 1, 'only what waits on alice');
      await visible(threadCard(region, 'bob', 'critic'));
      expect(await filters.getByRole('button', { name: 'Waiting on you' }).getAttribute('aria-pressed')).toBe('true');
      expect(await axeInBothSchemes(page, 'panel-filters'), 'axe on the filters').toEqual({});
      await filters.getByRole('button', { name: 'Clear filters' }).click();

      // Opened, a card says what the agent did with the answer in plain words, and no internal id.
      const card = threadCard(region, 'bob', 'researcher');
      await card.locator('.thread-toggle').click();
      const texts = card.getByRole('list', { name: 'Texts with bob/researcher' });
      await visible(
        texts
          .getByRole('listitem')
          .filter({ hasText: 'answer from researcher' })
          .filter({ hasText: 'Read by the agent' }),
      );
      expect(await card.getByText('Handled', { exact: true }).count()).toBe(0);
      expect(await card.locator('dt', { hasText: 'Thread' }).count()).toBe(0);
      expect(await axeInBothSchemes(page, 'panel-card-words'), 'axe on an opened card').toEqual({});
      expect(problems).toEqual([]);
    },
  );
});
