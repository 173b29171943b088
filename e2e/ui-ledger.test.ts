// "On your behalf" (DESIGN §12.8) in Chromium across two real installations: alice's
// assistant asks bob's researcher, the ask held until alice approves it; her
// conversation's record shows both texts, who approved the question and when, the turn of
// hers that sent the question and the one that took the answer with how each ended (the
// turns the store linked to each text, the same that posted the lines in the chat), and
// downloads as Markdown with bob's words quoted and as JSON.
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Ledger } from '../shared/ledger';
import {
  assertReady,
  assistantAndResearcher,
  axeInBothSchemes,
  describeInBrowser,
  launchChromium,
  openConversationWith,
  openUi,
  say,
  shoot,
  startNode,
  stopNodes,
  threadCard,
  threadsRegion,
  visible,
  type Node,
} from './support/ui-harness';

describeInBrowser('on your behalf', () => {
  let alice: Node | undefined;
  let bob: Node | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    assertReady();
    [alice, bob, browser] = await Promise.all([startNode('alice'), startNode('bob'), launchChromium()]);
    await assistantAndResearcher(alice, bob);
    const connection = (await alice.api.call('connections.list', {})).find((c) => c.name === 'bob')!;
    await alice.api.call('connections.setPolicy', { id: connection.id, outgoing: 'ask' });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await stopNodes([alice, bob]);
  });

  it(
    'shows every text with who approved it and how it was taken, and downloads as Markdown',
    { timeout: 120_000 },
    async () => {
      if (!alice || !browser) throw new Error('setup failed');
      const { page, context, problems } = await openUi(browser, alice, { forAxe: true });
      await openConversationWith(page, 'assistant');
      await say(page, 'ask bob/researcher: what does the budget say?');
      const card = threadCard(threadsRegion(page), 'bob', 'researcher');
      await (
        await visible(card.getByRole('button', { name: 'Approve text #1 to bob/researcher' }), 30_000)
      )
        .first()
        .click();
      await visible(
        page
          .getByRole('region', { name: 'Messages' })
          .getByText('bob/researcher says: answer from researcher: what does the budget say?'),
        30_000,
      );

      await page.getByRole('button', { name: 'On your behalf' }).click();
      const dialog = page.getByRole('dialog', { name: 'On your behalf' });
      const entry = dialog.getByRole('region', { name: 'assistant and bob/researcher' });
      await visible(entry);
      const texts = entry.locator('.ledger-text');
      expect(await texts.count()).toBe(2);
      expect(await texts.nth(0).locator('.ledger-body').innerText()).toBe('what does the budget say?');
      const time = String.raw`\d{1,2}:\d{2}(?:\s?[AP]M)?`;
      expect(await texts.nth(0).locator('.ledger-outcome').innerText()).toMatch(
        new RegExp(`^delivered; approved by alice at ${time}; sent by assistant’s turn of ${time}, finished$`),
      );
      expect(await texts.nth(1).locator('.ledger-body').innerText()).toBe(
        'answer from researcher: what does the budget say?',
      );
      expect(await texts.nth(1).locator('.ledger-outcome').innerText()).toMatch(
        new RegExp(`^taken by assistant’s turn of ${time}, finished$`),
      );
      await shoot(page, 'ledger-turns');
      expect(await axeInBothSchemes(page, 'ledger'), 'axe on the record').toEqual({});

      // The turns are the ones that posted the lines: the ask's, and the report's.
      const conversationId = Number(/conversation-(\d+)/.exec(page.url())?.[1]);
      const { messages } = await alice.api.call('conversations.get', { id: conversationId });
      const postedBy = (start: string) => messages.find((m) => m.body.startsWith(start))?.postedByTurnId;
      const [json] = await Promise.all([
        page.waitForEvent('download'),
        dialog.getByRole('button', { name: 'Download JSON' }).click(),
      ]);
      const record = JSON.parse(readFileSync(await json.path(), 'utf8')) as Ledger;
      const [question, answer] = record.entries[0]!.texts;
      expect(question!.sentBy).toMatchObject({
        id: postedBy('asked bob/researcher'),
        role: 'assistant',
        status: 'done',
      });
      expect(question!.takenBy).toEqual([]);
      expect(answer!.sentBy).toBeNull();
      expect(answer!.takenBy.map((turn) => [turn.id, turn.status])).toEqual([
        [postedBy('bob/researcher says:'), 'done'],
      ]);
      expect(postedBy('asked bob/researcher')).toEqual(expect.any(Number));

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        dialog.getByRole('button', { name: 'Download Markdown' }).click(),
      ]);
      const markdown = readFileSync(await download.path(), 'utf8');
      expect(download.suggestedFilename()).toMatch(/^parley-conversation-\d+-on-your-behalf\.md$/);
      expect(markdown).toContain('## assistant and bob/researcher');
      expect(markdown).toContain('> answer from researcher: what does the budget say?');
      expect(markdown).toMatch(
        /\*\*#1 assistant → bob\/researcher\*\*, \S+ — delivered; approved by alice at \S+; sent by assistant’s turn of \S+, finished\n/,
      );
      expect(markdown).toMatch(
        /\*\*#1 bob\/researcher → assistant\*\*, \S+ — taken by assistant’s turn of \S+, finished\n/,
      );
      expect(problems).toEqual([]);
      await context.close();
    },
  );
});
