// A stopped turn shows as stopped, in Parley's own words, and what Parley told the agent
// about it is not shown as the agent's reply: after Stop, the chat says "Stopped by alice."
// and the built-in agent's next answer is its answer alone. Chromium against a real
// `parley serve` with the scripted agent; axe in light and dark.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  assertReady,
  axeInBothSchemes,
  describeInBrowser,
  launchChromium,
  openConversationWith,
  openUi,
  say,
  scriptedRole,
  shoot,
  startNode,
  stopNodes,
  visible,
  type Node,
} from './support/ui-harness';

describeInBrowser('a stopped turn', () => {
  let alice: Node | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    assertReady();
    [alice, browser] = await Promise.all([startNode('alice'), launchChromium()]);
    await scriptedRole(alice, 'assistant', 'Helps alice with anything');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stopNodes([alice]);
  });

  it('says it was stopped, and the next reply is only the agent’s own words', { timeout: 60_000 }, async () => {
    if (!alice || !browser) throw new Error('setup failed');
    const { page, context, problems } = await openUi(browser, alice, { forAxe: true });
    await openConversationWith(page, 'assistant');
    const messages = page.getByRole('region', { name: 'Messages' });
    await say(page, 'sleep 30');
    await visible(messages.getByRole('status').getByText('assistant is working…'), 20_000);
    await page.getByRole('button', { name: 'Stop' }).first().click();
    await visible(messages.locator('.message-system').getByText('Stopped by alice.', { exact: true }), 20_000);

    await say(page, 'hello');
    const reply = messages.locator('.message-role').last();
    await visible(reply.getByText('echo: hello', { exact: true }), 20_000);
    expect(await reply.locator('.markdown').innerText()).toBe('echo: hello');
    expect(await messages.getByText(/You were stopped/).count()).toBe(0);
    await shoot(page, 'stopped-turn');
    expect(await axeInBothSchemes(page, 'stopped-turn')).toEqual({});
    expect(problems).toEqual([]);
    await context.close();
  });
});
