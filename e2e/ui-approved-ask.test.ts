// A person's yes to a held ask is said in Parley's own words, by whom, and what Parley told
// the agent about it is not shown as the agent's reply: alice approves her assistant's held
// ask, its line says "Approved by alice" once it goes, and the built-in agent's next answer
// is its answer alone. Chromium against two real `parley serve` installations with the
// scripted agent; axe in light and dark.
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import {
  assertReady,
  assistantAndResearcher,
  axeInBothSchemes,
  describeInBrowser,
  openConversationWith,
  say,
  shoot,
  visible,
} from './support/ui-harness';
import { uiScene } from './support/ui-scene';

const scene = uiScene(['alice', 'bob'], { forAxe: true });

const messages = (page: Page) => page.getByRole('region', { name: 'Messages' });

describeInBrowser('an approved ask', () => {
  beforeAll(async () => {
    assertReady();
    const { alice, bob } = await scene.start();
    await assistantAndResearcher(alice, bob);
  }, 120_000);

  it(
    'its line says “Approved by alice”, and no reply of the agent repeats what Parley told it',
    { timeout: 90_000 },
    async () => {
      const { alice } = scene.nodes();
      const toBob = (await alice.api.call('connections.list', {})).find((c) => c.name === 'bob')!.id;
      await alice.api.call('connections.setPolicy', { id: toBob, outgoing: 'ask' });
      const { page, problems } = await scene.open(alice);
      await openConversationWith(page, 'assistant');
      await say(page, 'ask bob/researcher: the budget?');
      const line = messages(page)
        .locator('.message-role')
        .filter({ hasText: 'asked bob/researcher (held for approval)' });
      await visible(line.getByText('Held for your approval before it goes to bob'), 30_000);
      await line.getByRole('button', { name: 'Approve text #1 to bob/researcher' }).click();
      const state = line.locator('.ask-state');
      await visible(state.getByText('Answered', { exact: true }), 30_000);
      await visible(state.getByText('Approved by alice', { exact: true }));
      await visible(messages(page).getByText('bob/researcher says: answer from researcher: the budget?'));
      // The agent is told at its next turn; that turn's reply is its own words only.
      await say(page, 'hello');
      const reply = messages(page).locator('.message-role').last();
      await visible(reply.getByText('echo: hello', { exact: true }), 20_000);
      expect(await reply.locator('.markdown').innerText()).toBe('echo: hello');
      expect(
        await messages(page)
          .getByText(/was approved by|goes out as usual/)
          .count(),
      ).toBe(0);
      await shoot(page, 'approved-ask');
      expect(await axeInBothSchemes(page, 'approved-ask')).toEqual({});
      expect(problems).toEqual([]);
    },
  );
});
