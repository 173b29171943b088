// A person's no to an ask is said in Parley's own words, by whom, and what Parley told the
// agent about it is not shown as the agent's reply: alice denies her assistant's held ask
// ("Denied by alice" on its line), and bob declines one on arrival ("bob declined"); each
// time the built-in agent's next answer is its answer alone. Chromium against two real
// `parley serve` installations with the scripted agent; axe in light and dark.
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
  threadCard,
  threadsRegion,
  visible,
  type Node,
  type OpenedPage,
} from './support/ui-harness';
import { uiScene } from './support/ui-scene';

const scene = uiScene(['alice', 'bob'], { forAxe: true });
const { nodes, open } = scene;
let opened: OpenedPage | undefined;

const messages = (page: Page) => page.getByRole('region', { name: 'Messages' });
/** The agent's line that made the ask, with the ask's state under it. */
const askLine = (page: Page, words: string) => messages(page).locator('.message-role').filter({ hasText: words });

/** Resolves once `turns` (a conversation's, an agent conversation's) holds `count` and none runs. */
async function turnsDone(node: Node, turns: () => Promise<Array<{ status: string }>>, count: number, what: string) {
  await node.api.waitFor(
    async () => {
      const now = await turns();
      return now.length >= count && now.every((turn) => turn.status !== 'running') ? true : undefined;
    },
    30_000,
    what,
  );
}

/** The agent's reply to `text`, said now: only its own words. */
async function nextReplyIsOwn(page: Page, text: string): Promise<void> {
  await say(page, text);
  const reply = messages(page).locator('.message-role').last();
  await visible(reply.getByText(`echo: ${text}`, { exact: true }), 20_000);
  expect(await reply.locator('.markdown').innerText()).toBe(`echo: ${text}`);
}

describeInBrowser('a denied or declined ask', () => {
  beforeAll(async () => {
    assertReady();
    const { alice, bob } = await scene.start();
    await assistantAndResearcher(alice, bob);
  }, 120_000);

  it(
    'denied here: its line says “Denied by alice”, and no reply of the agent repeats what Parley told it',
    { timeout: 90_000 },
    async () => {
      const { alice } = nodes();
      const toBob = (await alice.api.call('connections.list', {})).find((c) => c.name === 'bob')!.id;
      await alice.api.call('connections.setPolicy', { id: toBob, outgoing: 'ask' });
      opened = await open(alice);
      const { page, problems } = opened;
      await openConversationWith(page, 'assistant');
      await say(page, 'ask bob/researcher: the salaries?');
      const line = askLine(page, 'asked bob/researcher (held for approval)');
      await visible(line.getByText('Held for your approval before it goes to bob'), 30_000);
      await line.getByRole('button', { name: 'Deny text #1 to bob/researcher' }).click();
      await visible(line.locator('.ask-state').getByText('Denied by alice: not sent', { exact: true }), 20_000);
      // The agent is told (a turn of its own takes the notice); the chat does not show it as its words.
      const conversationId = (await alice.api.call('conversations.list', {}))[0]!.id;
      const turns = async () => (await alice.api.call('conversations.get', { id: conversationId })).turns;
      await turnsDone(alice, turns, 2, 'the turn that took the notice to end');
      await nextReplyIsOwn(page, 'hello');
      expect(
        await messages(page)
          .getByText(/was denied by|Do not send it again/)
          .count(),
      ).toBe(0);
      // The text on the agent conversation's card names who denied it too.
      const card = threadCard(threadsRegion(page), 'bob', 'researcher');
      await card.getByRole('button', { expanded: false }).first().click();
      const denied = card.getByRole('list', { name: 'Texts with bob/researcher' }).locator('li').filter({
        hasText: 'the salaries?',
      });
      await visible(denied.getByText('Denied by alice', { exact: true }));
      await card.getByRole('button', { expanded: true }).first().click();
      await shoot(page, 'denied-ask');
      expect(await axeInBothSchemes(page, 'denied-ask')).toEqual({});
      expect(problems).toEqual([]);
    },
  );

  it(
    'declined at bob: its line says “bob declined”, and the agent’s next reply is its own words',
    { timeout: 90_000 },
    async () => {
      const { alice, bob } = nodes();
      const toAlice = (await bob.api.call('connections.list', {})).find((c) => c.name === 'alice')!.id;
      await bob.api.call('connections.setPolicy', { id: toAlice, incoming: 'ask' });
      const toBob = (await alice.api.call('connections.list', {})).find((c) => c.name === 'bob')!.id;
      await alice.api.call('connections.setPolicy', { id: toBob, outgoing: 'send' });
      const { page, problems } = opened!;
      const conversationId = (await alice.api.call('conversations.list', {}))[0]!.id;
      const thread = (
        await alice.api.call('threads.list', { root: { kind: 'conversation', id: conversationId } })
      ).find((t) => t.peerRole === 'researcher')!;
      const threadTurns = async () => (await alice.api.call('threads.get', { id: thread.id })).turns;
      const before = (await threadTurns()).length;
      await say(page, 'ask bob/researcher: the passwords?');
      const held = await bob.api.waitFor(
        async () => (await bob.api.call('approvals.list', {})).find((a) => a.kind === 'incoming'),
        30_000,
        'the text to be held at bob',
      );
      await bob.api.call('approvals.decide', { id: held.id, approve: false });
      await visible(messages(page).locator('.ask-state').getByText('bob declined', { exact: true }), 30_000);
      // The agent conversation's run is told of the decline, in a turn of its own.
      await turnsDone(alice, threadTurns, before + 1, 'the turn that took the decline to end');
      await nextReplyIsOwn(page, 'hello again');
      // Neither the chat nor the agent's notes in that agent conversation repeat the notice.
      const card = threadCard(threadsRegion(page), 'bob', 'researcher');
      await card.getByRole('button', { expanded: false }).first().click();
      await visible(card.getByRole('list', { name: 'Texts with bob/researcher' }).getByText('the passwords?'));
      expect(await page.getByText(/was rejected|declined it/).count()).toBe(0);
      expect(await axeInBothSchemes(page, 'declined-ask')).toEqual({});
      await bob.api.call('connections.setPolicy', { id: toAlice, incoming: 'run' });
      expect(problems).toEqual([]);
    },
  );
});
