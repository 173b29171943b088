// An ask's state shows under the line of the turn that made it, because Parley keeps which
// turn sent each text and which turn posted each line: a follow-up whose line never names
// the peer puts its state under that line (not under an earlier one that named it), and a
// turn that posts no line at all still gets a row saying whom it asked. Chromium against
// two real `parley serve` installations and the scripted agent, driven to ask "quietly"
// (its line says only "sent it") and "silently" (no line); scanned by axe, light and dark.
import type { Locator, Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import {
  assertReady,
  assistantAndResearcher,
  axeInBothSchemes,
  describeInBrowser,
  openConversationWith,
  say,
  shoot,
  until,
  visible,
} from './support/ui-harness';
import { uiScene } from './support/ui-scene';

const scene = uiScene(['alice', 'bob'], { forAxe: true });

/** The role's chat lines that read exactly `body`. */
function roleLines(page: Page, body: string): Locator {
  return page
    .getByRole('region', { name: 'Messages' })
    .locator('.message-role')
    .filter({ has: page.locator('.markdown p', { hasText: new RegExp(`^${body}$`) }) });
}

describeInBrowser('asks under the line of the turn that made them', () => {
  beforeAll(async () => {
    assertReady();
    const { alice, bob } = await scene.start();
    await assistantAndResearcher(alice, bob, []);
  }, 90_000);

  it(
    'a follow-up that names no peer, and a turn that writes no line, each show their own ask',
    { timeout: 90_000 },
    async () => {
      const { alice } = scene.nodes();
      const { page, problems } = await scene.open(alice);
      await openConversationWith(page, 'assistant');
      const messages = page.getByRole('region', { name: 'Messages' });

      // The first ask: its line says only "sent it"; the answer comes back and is reported.
      await say(page, 'quietly ask bob/researcher: what is new?');
      const first = roleLines(page, 'sent it').nth(0);
      await visible(first.locator('.ask-state').getByText('Answered', { exact: true }), 30_000);
      await visible(first.locator('.ask-state').getByText('bob/researcher', { exact: true }));
      await visible(messages.locator('.message-role').filter({ hasText: 'bob/researcher says:' }).nth(0), 30_000);

      // The follow-up, in the same agent conversation: its state is under its own line.
      await say(page, 'quietly ask bob/researcher: and since then?');
      const second = roleLines(page, 'sent it').nth(1);
      await visible(second.locator('.ask-state'), 30_000);
      await visible(messages.locator('.message-role').filter({ hasText: 'bob/researcher says:' }).nth(1), 30_000);
      await visible(second.locator('.ask-state').getByText('Answered', { exact: true }), 30_000);
      expect(await first.locator('.ask-state').count()).toBe(1);
      // The reported answers made no ask.
      const reports = messages.locator('.message-role').filter({ hasText: 'bob/researcher says:' });
      expect(await reports.locator('.ask-state').count()).toBe(0);

      // A turn that posts nothing: a row of its own says whom the role asked.
      await say(page, 'silently ask bob/researcher: anything else?');
      const lone = messages.locator('.message-asks');
      await visible(lone.getByText('asked bob/researcher', { exact: true }), 30_000);
      await visible(lone.locator('.ask-state').getByText('Answered', { exact: true }), 30_000);
      expect(await roleLines(page, 'sent it').count()).toBe(2);

      await shoot(page, 'asks-by-turn');
      expect(await axeInBothSchemes(page, 'asks-by-turn')).toEqual({});
      expect(problems).toEqual([]);
    },
  );

  it('asks show as they are sent, while the turn that sent them still works', { timeout: 90_000 }, async () => {
    const { alice } = scene.nodes();
    const { page, problems } = await scene.open(alice);
    await openConversationWith(page, 'assistant');
    const conversationId = Number(/conversation-(\d+)/.exec(page.url())?.[1]);
    const answers = async () => {
      const [thread] = await alice.api.call('threads.list', { root: { kind: 'conversation', id: conversationId } });
      if (!thread) return 0;
      const { texts } = await alice.api.call('threads.get', { id: thread.id });
      return texts.filter((text) => text.direction === 'in').length;
    };
    const answered = await answers();
    // One turn takes all three: two asks to the same peer role (its agent takes its time
    // answering, so no answer comes back meanwhile), then a long wait.
    await say(page, 'sleep 2');
    for (const text of ['silently ask bob/researcher: sleep 15', 'silently ask bob/researcher: sleep 1', 'sleep 20'])
      await alice.api.call('conversations.send', { id: conversationId, text });
    const messages = page.getByRole('region', { name: 'Messages' });
    const working = messages.getByRole('status').getByText('assistant is working…');
    await until(async () => (await roleLines(page, 'slept 2').count()) === 1, 'the first turn to end', 30_000);
    const asked = messages.locator('.message-asks').last().getByText('asked bob/researcher', { exact: true });
    await until(async () => (await asked.count()) === 2, 'both asks on the page', 30_000);
    // Shown while the turn works and before any answer: nothing it posted, and nothing
    // that came back, made the page read them.
    expect(await answers()).toBe(answered);
    expect(await working.count()).toBe(1);
    expect(await roleLines(page, 'slept 20').count()).toBe(0);
    await shoot(page, 'asks-while-working');
    expect(await axeInBothSchemes(page, 'asks-while-working')).toEqual({});
    await alice.api.call('conversations.stop', { id: conversationId });
    expect(problems).toEqual([]);
  });
});
