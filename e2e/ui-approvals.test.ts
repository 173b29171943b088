// Approvals where people work (DESIGN §11.9): an owner sets a connection to ask first in
// Settings; a held ask shows Approve and Deny under the chat line (or a task's log line)
// that made it; approved,
// it goes out and its answer comes back; denied, the agent is told. A peer's text held
// before the agent takes it (denied, its sender's line says so), and an agent's request
// to use a tool, wait the same way.
// Chromium against two real `parley serve` installations; each new screen is scanned by
// axe-core and saved, light and dark.
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import {
  assertReady,
  axeInBothSchemes,
  openConversationWith,
  openSettings,
  pair,
  root,
  say,
  scriptedRole,
  shoot,
  threadCard,
  threadsRegion,
  until,
  visible,
  type Node,
  describeInBrowser,
} from './support/ui-harness';
import { uiScene } from './support/ui-scene';

const scene = uiScene(['alice', 'bob'], { forAxe: true });
const { nodes, open } = scene;

/** Scans the page in light and in dark, saving each as e2e/screenshots/approvals-NAME-SCHEME.png. */
async function scan(page: Page, name: string): Promise<void> {
  expect(await axeInBothSchemes(page, `approvals-${name}`), `axe on ${name}`).toEqual({});
}

/** The role's chat line that says `asked PEER/ROLE…`, the n-th one (from 0). */
function askLine(page: Page, n: number): Locator {
  return page
    .getByRole('region', { name: 'Messages' })
    .locator('.message-role')
    .filter({ hasText: /asked bob\/researcher/ })
    .nth(n);
}

async function connectionId(node: Node, peer: string): Promise<number> {
  const connection = (await node.api.call('connections.list', {})).find((c) => c.name === peer);
  if (!connection) throw new Error(`${node.name} has no connection ${peer}`);
  return connection.id;
}

describeInBrowser('approvals where people work', () => {
  beforeAll(async () => {
    assertReady();
    const { alice, bob } = await scene.start();
    await scriptedRole(alice, 'assistant', 'Helps alice with anything');
    await scriptedRole(bob, 'researcher', 'Finds and checks facts');
    await alice.api.call('roles.create', {
      name: 'builder',
      description: 'Runs tools, asking first',
      agent: {
        adapter: 'command',
        command: [process.execPath, path.join(root, 'dist', 'testing', 'permission-asker.js')],
      },
    });
    await pair(bob, ['researcher'], alice, ['assistant']);
  }, 90_000);

  it(
    'an owner sets bob’s connection to ask first in Settings; a held ask is approved under its chat line, goes out and is answered',
    { timeout: 120_000 },
    async () => {
      const { alice } = nodes();
      const { page, problems } = await open(alice);
      await openSettings(page, 'Connections');
      const card = page.getByRole('article', { name: 'Connection bob' });
      await visible(card.getByText('Sends go out at once'));
      await card.getByRole('button', { name: 'Change approval' }).click();
      const dialog = page.getByRole('dialog', { name: 'Approval for bob' });
      await visible(dialog);
      await dialog
        .getByRole('group', { name: 'What your agents send to bob' })
        .getByRole('radio', { name: /Wait for approval/ })
        .check();
      await scan(page, 'policy-dialog');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await visible(card.getByText('Sends wait for approval'));
      expect((await alice.api.call('connections.list', {}))[0]!.policy).toEqual({ outgoing: 'ask', incoming: 'run' });
      await scan(page, 'settings-connections');

      await openConversationWith(page, 'assistant');
      await say(page, 'ask bob/researcher: what does the budget say?');
      const line = askLine(page, 0);
      await visible(line.getByText('asked bob/researcher (held for approval)'), 30_000);
      await visible(line.getByText('Held for your approval before it goes to bob'));
      // What it would send is there to read beside the choice.
      expect(await (await visible(line.getByRole('figure', { name: 'Text #1 to send' }))).innerText()).toBe(
        'what does the budget say?',
      );
      // The card in the agent conversations says so as well, with the same choice.
      const thread = threadCard(threadsRegion(page), 'bob', 'researcher');
      await visible(thread.getByText('Held', { exact: true }));
      await visible(thread.getByText('assistant wants to send text #1 to bob/researcher'));
      await scan(page, 'conversation-held');
      // Nothing reached bob yet.
      expect(await nodes().bob.api.call('threads.list', { peerStarted: true })).toEqual([]);

      // It waits in "Waiting on you" as well; opening it shows the agent conversation, where the choice is.
      await page
        .getByRole('navigation', { name: 'Parley' })
        .getByRole('button', { name: /^Waiting on you\b/ })
        .click();
      const item = page
        .getByRole('region', { name: 'Needs you' })
        .getByRole('button', { name: /assistant wants to send to bob\/researcher/ });
      await visible(item, 30_000);
      // The decision can be made from the list too, beside the text it lets out, in one box;
      // here it is made where the ask is.
      const decision = page
        .getByRole('region', { name: 'Needs you' })
        .locator('.attention-decision')
        .filter({ has: page.getByRole('button', { name: /assistant wants to send to bob\/researcher/ }) });
      const held = decision.getByRole('figure', { name: 'Text #1 to send' });
      expect(await (await visible(held)).innerText()).toBe('what does the budget say?');
      await visible(decision.getByRole('button', { name: 'Approve text #1 to bob/researcher' }));
      await visible(decision.getByRole('button', { name: 'Deny text #1 to bob/researcher' }));
      await scan(page, 'waiting-on-you');
      await item.click();
      await visible(page.getByRole('heading', { name: 'assistant', level: 1 }));
      await visible(thread.getByText('Held', { exact: true }));

      await line.getByRole('button', { name: 'Approve text #1 to bob/researcher' }).click();
      await visible(line.getByText('Answered', { exact: true }), 30_000);
      await visible(
        page
          .getByRole('region', { name: 'Messages' })
          .getByText('bob/researcher says: answer from researcher: what does the budget say?'),
      );
      await until(async () => (await thread.getByText('assistant wants to send').count()) === 0, 'the card to clear');
      expect(await alice.api.call('approvals.list', {})).toEqual([]);
      // Decided, it waits on nobody.
      expect((await alice.api.call('attention.list', {})).items.filter((i) => i.kind === 'held')).toEqual([]);
      expect(problems).toEqual([]);
    },
  );

  it(
    'a task’s held ask waits under its log line and on its card; approved there, it is answered in the log',
    { timeout: 90_000 },
    async () => {
      const { alice } = nodes();
      const roles = await alice.api.call('roles.list', {});
      const assistant = roles.find((r) => r.name === 'assistant')!;
      const task = await alice.api.call('tasks.create', { roleId: assistant.id, title: 'Check the budget' });
      await alice.api.call('tasks.comment', { id: task.id, text: 'ask bob/researcher: is the budget final?' });
      const { page, problems } = await open(alice, { view: `task-${task.id}` });
      const activity = page.getByRole('region', { name: 'Activity' });
      const line = activity.locator('.log-entry').filter({ hasText: 'asked bob/researcher (held for approval)' });
      await visible(line.locator('.ask-state').getByText('Held for your approval before it goes to bob'), 30_000);
      await visible(line.locator('.ask-state').getByText('bob/researcher', { exact: true }));
      expect(await (await visible(line.getByRole('figure', { name: 'Text #1 to send' }))).innerText()).toBe(
        'is the budget final?',
      );
      await visible(threadCard(threadsRegion(page), 'bob', 'researcher').getByText('Held', { exact: true }));
      // It has a line to sit under, so nothing waits above the comment box.
      expect(await page.getByRole('region', { name: 'Waiting for approval' }).count()).toBe(0);
      await scan(page, 'task-held');
      await line.getByRole('button', { name: 'Approve text #1 to bob/researcher' }).click();
      await visible(line.locator('.ask-state').getByText('Answered', { exact: true }), 30_000);
      await visible(activity.getByText('bob/researcher says: answer from researcher: is the budget final?'), 30_000);
      // The answer's report made no ask of its own.
      const report = activity.locator('.log-entry').filter({ hasText: 'bob/researcher says:' });
      expect(await report.locator('.ask-state').count()).toBe(0);
      await shoot(page, 'task-ask-answered');
      await scan(page, 'task-answered');
      // The task's record says who let the ask out and which of its turns sent and took what.
      await page.getByRole('button', { name: 'On your behalf' }).click();
      const record = page.getByRole('dialog', { name: 'On your behalf' });
      const outcomes = record.getByRole('region', { name: 'assistant and bob/researcher' }).locator('.ledger-outcome');
      await visible(outcomes.first());
      expect(await outcomes.nth(0).innerText()).toMatch(
        /^delivered; approved by alice at .+; sent by assistant’s turn of .+, finished$/,
      );
      expect(await outcomes.nth(1).innerText()).toMatch(/^taken by assistant’s turn of .+, finished$/);
      await record.getByRole('button', { name: 'Close' }).click();
      expect(problems).toEqual([]);
    },
  );

  it('a denied ask is never sent, and its line says who denied it', { timeout: 90_000 }, async () => {
    const { alice, bob } = nodes();
    const { page, problems } = await open(alice, { view: 'conversation-1' });
    await say(page, 'ask bob/researcher: and the salaries?');
    const line = askLine(page, 1);
    await visible(line.getByText('Held for your approval before it goes to bob'), 30_000);
    await line.getByRole('button', { name: 'Deny text #2 to bob/researcher' }).click();
    // The agent is told too; the chat does not show that as its reply (e2e/ui-denied-ask.test.ts).
    await visible(line.getByText('Denied by alice: not sent'), 30_000);
    const [atBob] = await bob.api.call('threads.list', { peerStarted: true });
    const texts = (await bob.api.call('threads.get', { id: atBob!.id })).texts.map((t) => t.body);
    expect(texts).not.toContain('and the salaries?');
    // The card's detail shows the text as denied, by whom, not failed.
    const card = threadCard(threadsRegion(page), 'bob', 'researcher');
    await card.getByRole('button', { expanded: false }).first().click();
    const denied = card.getByRole('list', { name: 'Texts with bob/researcher' }).locator('li').filter({
      hasText: 'and the salaries?',
    });
    await visible(denied.getByText('Denied by alice', { exact: true }));
    await shoot(page, 'approvals-denied');
    await alice.api.call('connections.setPolicy', { id: await connectionId(alice, 'bob'), outgoing: 'send' });
    expect(problems).toEqual([]);
  });

  it(
    'bob’s texts from alice wait for approval: the card in “Started by peers” lets bob approve one and deny another',
    { timeout: 120_000 },
    async () => {
      const { alice, bob } = nodes();
      await bob.api.call('connections.setPolicy', { id: await connectionId(bob, 'alice'), incoming: 'ask' });
      await alice.api.call('conversations.send', { id: 1, text: 'ask bob/researcher: may I ask something?' });
      const { page, problems } = await open(bob);
      await page.getByRole('button', { name: 'Started by peers' }).click();
      const card = threadCard(threadsRegion(page), 'alice', 'assistant');
      const held = card.getByRole('listitem', { name: /alice\/assistant wrote to researcher/ });
      await visible(held, 30_000);
      await visible(card.getByText('may I ask something?'));
      await scan(page, 'incoming-held');
      await held.getByRole('button', { name: /^Approve text #\d+ from alice\/assistant$/ }).click();
      await alice.api.waitFor(
        async () =>
          (await alice.api.call('conversations.get', { id: 1 })).messages.some((m) =>
            m.body.includes('answer from researcher: may I ask something?'),
          ),
        30_000,
        'bob’s answer at alice',
      );

      await alice.api.call('conversations.send', { id: 1, text: 'ask bob/researcher: the passwords?' });
      await visible(card.getByText('the passwords?'), 30_000);
      await visible(card.getByRole('listitem', { name: /alice\/assistant wrote to researcher/ }));
      // Opened, the held text itself carries the choice.
      await card.getByRole('button', { expanded: false }).first().click();
      const text = card.getByRole('list', { name: 'Texts with alice/assistant' }).locator('li').filter({
        hasText: 'the passwords?',
      });
      await visible(text.getByText('Held', { exact: true }));
      await scan(page, 'incoming-held-detail');
      await text.getByRole('button', { name: /^Deny text #\d+ from alice\/assistant$/ }).click();
      await visible(text.getByText('Denied by bob', { exact: true }));
      await visible(text.getByText('Never given to the agent: bob denied it.'));
      // alice is told (revision 2's `declined`): her ask line says so, where it had said delivered.
      const asker = await open(alice, { view: 'conversation-1' });
      await visible(asker.page.locator('.ask-state').filter({ hasText: 'bob declined' }), 30_000);
      await scan(asker.page, 'ask-declined');
      expect(asker.problems).toEqual([]);
      await bob.api.call('connections.setPolicy', { id: await connectionId(bob, 'alice'), incoming: 'run' });
      expect(problems).toEqual([]);
    },
  );

  it(
    'an agent’s request to use a tool waits above the composer; approved, the agent hears it',
    { timeout: 90_000 },
    async () => {
      const { alice } = nodes();
      const { page, problems } = await open(alice);
      await openConversationWith(page, 'builder');
      await say(page, 'npm test');
      const waiting = page.getByRole('region', { name: 'Waiting for approval' });
      const request = waiting.getByRole('listitem', { name: 'builder asks to use npm test' });
      await visible(request, 30_000);
      await visible(request.getByText('npm test (asked by a test agent)'));
      await visible(page.getByRole('status').getByText('builder is waiting for your approval'));
      await scan(page, 'permission');
      await request.getByRole('button', { name: 'Approve builder using npm test' }).click();
      await visible(
        page.getByRole('region', { name: 'Messages' }).getByText('approved by alice', { exact: true }),
        30_000,
      );
      await until(async () => (await waiting.count()) === 0, 'the request to leave');
      expect(problems).toEqual([]);
    },
  );
  it(
    'a decision is made from “Waiting on you” too: a tool request approved there reaches the agent and leaves the list',
    { timeout: 90_000 },
    async () => {
      const { alice } = nodes();
      const { page, problems } = await open(alice);
      await openConversationWith(page, 'builder');
      await say(page, 'npm run build');
      await page
        .getByRole('navigation', { name: 'Parley' })
        .getByRole('button', { name: /^Waiting on you\b/ })
        .click();
      const needs = page.getByRole('region', { name: 'Needs you' });
      await visible(needs.getByRole('button', { name: /builder asks for permission/ }), 30_000);
      // The tool and what it would be given, read before deciding.
      const decision = needs.locator('.attention-decision');
      await visible(decision.getByText('Tool npm run build (execute)'));
      const args = decision.getByLabel('What npm run build would be given');
      expect(await (await visible(args)).innerText()).toBe('npm run build (asked by a test agent)');
      await scan(page, 'waiting-on-you-permission');
      await needs.getByRole('button', { name: 'Approve builder using npm run build' }).click();
      await until(
        async () => (await needs.getByRole('button', { name: /builder asks for permission/ }).count()) === 0,
        'the request to leave the list',
      );
      await alice.api.waitFor(
        async () => {
          const conversations = await alice.api.call('conversations.list', {});
          const builder = conversations.find((c) => c.roleName === 'builder')!;
          return (await alice.api.call('conversations.get', { id: builder.id })).messages.some(
            (m) => m.body === 'approved by alice',
          );
        },
        30_000,
        'the agent to hear it',
      );
      expect(problems).toEqual([]);
    },
  );
});
