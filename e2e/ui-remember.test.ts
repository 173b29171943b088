// What people choose to remember, in Chromium against real `parley serve` installations:
// "Always allow…" beside Approve and Deny (a held ask in a conversation, a peer’s text held
// on arrival, a tool request in "Waiting on you"), the rules listed and revocable on the
// connection's card, notification preferences in Settings, and who paused or revoked a
// connection and on which day, in the page's own language. Each new screen is scanned by
// axe-core, light and dark.
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import type { ConnectionSummary } from '../shared/domain';
import {
  assertReady,
  axeInBothSchemes,
  describeInBrowser,
  openConversationWith,
  openSettings,
  pair,
  root,
  say,
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

async function scan(page: Page, name: string): Promise<void> {
  expect(await axeInBothSchemes(page, `remember-${name}`), `axe on ${name}`).toEqual({});
}

async function connectionId(node: Node, peer: string): Promise<number> {
  const connection = (await node.api.call('connections.list', {})).find((c) => c.name === peer);
  if (!connection) throw new Error(`${node.name} has no connection ${peer}`);
  return connection.id;
}

/** What alice's summary of carol says, once it says it. */
const carolAt = (node: Node, read: (c: ConnectionSummary) => string | null | undefined) =>
  node.api.waitFor(
    async () => {
      const carol = (await node.api.call('connections.list', {})).find((c) => c.name === 'carol');
      return carol ? read(carol) : undefined;
    },
    20_000,
    'the connection to carol to say it',
  );

const messages = (page: Page) => page.getByRole('region', { name: 'Messages' });
const askLines = (page: Page): Locator =>
  messages(page)
    .locator('.message-role')
    .filter({ hasText: /asked bob\/researcher/ });

describeInBrowser('always allow, notification preferences, who acted', () => {
  beforeAll(async () => {
    assertReady();
    const { alice, bob, carol } = await scene.start();
    await scriptedRole(alice, 'assistant', 'Helps alice with anything');
    await scriptedRole(bob, 'researcher', 'Finds and checks facts');
    await scriptedRole(carol, 'writer', 'Writes');
    await bob.api.call('roles.create', {
      name: 'builder',
      description: 'Runs tools, asking first',
      agent: {
        adapter: 'command',
        command: [process.execPath, path.join(root, 'dist', 'testing', 'permission-asker.js')],
      },
    });
    await pair(bob, ['researcher', 'builder'], alice, ['assistant']);
    await pair(carol, ['writer'], alice, ['assistant']);
  }, 120_000);

  it(
    'a held ask is approved with “Always allow… in this conversation”; the next one goes out unasked; the rule is on bob’s card until stopped',
    { timeout: 150_000 },
    async () => {
      const { alice } = nodes();
      await alice.api.call('connections.setPolicy', { id: await connectionId(alice, 'bob'), outgoing: 'ask' });
      const { page, problems } = await open(alice);
      await openConversationWith(page, 'assistant');
      await say(page, 'ask bob/researcher: what does the budget say?');
      const first = askLines(page).nth(0);
      await visible(first.getByText('asked bob/researcher (held for approval)'), 30_000);
      const menuButton = first.getByRole('button', { name: 'Always allow…' });
      await menuButton.click();
      const menu = page.getByRole('menu', { name: 'Always allow' });
      const here = menu.getByRole('menuitem', { name: 'Always allow texts to bob/researcher in this conversation' });
      await visible(here);
      await visible(menu.getByRole('menuitem', { name: 'Always allow texts to bob/researcher everywhere' }));
      // The first choice has the focus; Escape closes the menu and gives it back to its button.
      expect(await here.evaluate((el) => el === document.activeElement)).toBe(true);
      await scan(page, 'menu');
      await page.keyboard.press('Escape');
      await until(async () => (await menu.count()) === 0, 'the menu to close');
      expect(await menuButton.evaluate((el) => el === document.activeElement)).toBe(true);
      await menuButton.click();
      await here.click();
      await visible(
        messages(page).getByText('bob/researcher says: answer from researcher: what does the budget say?'),
        30_000,
      );

      // The next ask in this conversation goes without a person.
      await say(page, 'ask bob/researcher: and the forecast?');
      await visible(messages(page).getByText('bob/researcher says: answer from researcher: and the forecast?'), 30_000);
      expect(await alice.api.call('approvals.list', {})).toEqual([]);

      await openSettings(page, 'Connections');
      const card = page.getByRole('article', { name: 'Connection bob' });
      const allowed = card.getByRole('region', { name: 'Always allowed for bob' });
      await visible(allowed.getByText(/Texts your agents send to bob\/researcher in the conversation with assistant/));
      await visible(allowed.getByText(`by ${alice.owner.name}`, { exact: false }));
      await scan(page, 'settings-rule');
      await allowed.getByRole('button', { name: /^Stop allowing Texts your agents send to bob\/researcher/ }).click();
      await until(async () => (await allowed.count()) === 0, 'the rule to leave the card');
      expect(await alice.api.call('allowRules.list', {})).toEqual([]);
      await alice.api.call('connections.setPolicy', { id: await connectionId(alice, 'bob'), outgoing: 'send' });
      expect(problems).toEqual([]);
    },
  );

  it(
    'a tool request from a run working for alice is allowed everywhere from “Waiting on you”; the next one, from another of her tasks, is not asked',
    { timeout: 150_000 },
    async () => {
      const { alice, bob } = nodes();
      const assistant = (await alice.api.call('roles.list', {})).find((r) => r.name === 'assistant')!;
      const first = await alice.api.call('tasks.create', { roleId: assistant.id, title: 'Deploy' });
      await alice.api.call('tasks.comment', { id: first.id, text: 'ask bob/builder: deploy' });
      const { page, problems } = await open(bob);
      await page
        .getByRole('navigation', { name: 'Parley' })
        .getByRole('button', { name: /^Waiting on you\b/ })
        .click();
      const needs = page.getByRole('region', { name: 'Needs you' });
      await visible(needs.getByRole('button', { name: /builder asks for permission/ }), 30_000);
      const decision = needs.locator('.attention-decision');
      await decision.getByRole('button', { name: 'Always allow…' }).click();
      const everywhere = page
        .getByRole('menu', { name: 'Always allow' })
        .getByRole('menuitem', { name: 'Always allow execute for alice/assistant everywhere' });
      await visible(everywhere);
      await scan(page, 'waiting-on-you-menu');
      await everywhere.click();
      await until(
        async () => (await needs.getByRole('button', { name: /builder asks for permission/ }).count()) === 0,
        'the request to leave the list',
      );
      const answered = (taskId: number) =>
        alice.api.waitFor(
          async () =>
            (await alice.api.call('tasks.get', { id: taskId })).log.some((entry) =>
              entry.body.includes('approved by bob'),
            ),
          30_000,
          'builder’s answer on alice’s task',
        );
      await answered(first.id);

      const second = await alice.api.call('tasks.create', { roleId: assistant.id, title: 'Deploy again' });
      await alice.api.call('tasks.comment', { id: second.id, text: 'ask bob/builder: deploy' });
      await answered(second.id);
      expect(await bob.api.call('approvals.list', {})).toEqual([]);

      await openSettings(page, 'Connections');
      const allowed = page
        .getByRole('article', { name: 'Connection alice' })
        .getByRole('region', { name: 'Always allowed for alice' });
      await visible(allowed.getByText(/Use of execute for alice\/assistant, everywhere/));
      await scan(page, 'settings-tool-rule');
      expect(problems).toEqual([]);
    },
  );

  it(
    'a peer’s text held on arrival is let in with “Always allow… in this agent conversation”; the next one reaches the agent unasked; once the rule is stopped on alice’s card, the next one waits again',
    { timeout: 150_000 },
    async () => {
      const { alice, bob } = nodes();
      const toAlice = await connectionId(bob, 'alice');
      await bob.api.call('connections.setPolicy', { id: toAlice, incoming: 'ask' });
      const assistant = (await alice.api.call('roles.list', {})).find((r) => r.name === 'assistant')!;
      const conversation = await alice.api.call('conversations.open', { roleId: assistant.id });
      const answered = (question: string) =>
        alice.api.waitFor(
          async () =>
            (await alice.api.call('conversations.get', { id: conversation.id })).messages.some((m) =>
              m.body.includes(`answer from researcher: ${question}`),
            ),
          30_000,
          `bob’s answer to “${question}” at alice`,
        );
      const pendingAtBob = async () =>
        (await bob.api.call('approvals.list', {})).filter((a) => a.kind === 'incoming').map((a) => a.text?.preview);

      await alice.api.call('conversations.send', { id: conversation.id, text: 'ask bob/researcher: the rota?' });
      const { page, problems } = await open(bob);
      await page.getByRole('button', { name: 'Started by peers' }).click();
      const card = threadCard(threadsRegion(page), 'alice', 'assistant');
      const held = card.getByRole('listitem', { name: /alice\/assistant wrote to researcher/ });
      await visible(held, 30_000);
      await held.getByRole('button', { name: 'Always allow…' }).click();
      const menu = page.getByRole('menu', { name: 'Always allow' });
      const here = menu.getByRole('menuitem', {
        name: 'Always allow texts from alice/assistant in this agent conversation',
      });
      await visible(here);
      // Everywhere is an owner's choice, and bob is one.
      await visible(menu.getByRole('menuitem', { name: 'Always allow texts from alice/assistant everywhere' }));
      await scan(page, 'incoming-menu');
      await here.click();
      await answered('the rota?');

      // The next text in this agent conversation reaches the agent without a person.
      await alice.api.call('conversations.send', {
        id: conversation.id,
        text: 'ask bob/researcher: and the holidays?',
      });
      await answered('and the holidays?');
      expect(await pendingAtBob()).toEqual([]);

      await openSettings(page, 'Connections');
      const allowed = page
        .getByRole('article', { name: 'Connection alice' })
        .getByRole('region', { name: 'Always allowed for alice' });
      const words = await visible(allowed.getByText(/^Texts from alice\/assistant in the agent conversation with /));
      await visible(allowed.getByText(`by ${bob.owner.name}`, { exact: false }));
      await scan(page, 'settings-incoming-rule');
      expect(await bob.api.call('allowRules.list', {})).toContainEqual(
        expect.objectContaining({ kind: 'incoming', peer: 'alice/assistant' }),
      );
      await allowed
        .getByRole('button', { name: `Stop allowing ${(await words.innerText()).split(' · ')[0]!.trim()}` })
        .click();
      await until(
        async () => (await bob.api.call('allowRules.list', {})).every((rule) => rule.kind !== 'incoming'),
        'the rule to be removed',
      );
      await until(async () => (await words.count()) === 0, 'the rule to leave the card');

      // Without it, the next one waits for a person again, and the page says so.
      await alice.api.call('conversations.send', { id: conversation.id, text: 'ask bob/researcher: the budget?' });
      await bob.api.waitFor(
        async () => ((await pendingAtBob()).includes('the budget?') ? true : undefined),
        30_000,
        'the third text to be held at bob',
      );
      await page
        .getByRole('navigation', { name: 'Parley' })
        .getByRole('button', { name: /^Waiting on you\b/ })
        .click();
      await visible(
        page
          .getByRole('region', { name: 'Needs you' })
          .getByRole('button', { name: /alice\/assistant wrote to researcher/ }),
        30_000,
      );
      const approval = (await bob.api.call('approvals.list', {})).find((a) => a.text?.preview === 'the budget?')!;
      await bob.api.call('approvals.decide', { id: approval.id, approve: true });
      await answered('the budget?');
      await bob.api.call('connections.setPolicy', { id: toAlice, incoming: 'run' });
      expect(problems).toEqual([]);
    },
  );

  it(
    'notification preferences: a kind and a connection turned off in Settings, kept for this person only',
    { timeout: 90_000 },
    async () => {
      const { alice } = nodes();
      const { page, problems } = await open(alice);
      await openSettings(page, 'Connections');
      await page.getByRole('button', { name: 'Notifications…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Notifications' });
      const answers = dialog.getByRole('checkbox', { name: 'A role answered you' });
      await visible(answers);
      expect(await answers.isChecked()).toBe(true);
      await answers.uncheck();
      await dialog
        .getByRole('group', { name: 'About these connections' })
        .getByRole('checkbox', { name: 'carol' })
        .uncheck();
      await scan(page, 'notifications-dialog');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await until(async () => (await dialog.count()) === 0, 'the dialog to close');
      const prefs = await alice.api.call('notifications.get', {});
      expect(prefs.kinds.find((k) => k.kind === 'answer')).toEqual({ kind: 'answer', notify: false });
      expect(prefs.kinds.filter((k) => !k.notify)).toHaveLength(1);
      expect(prefs.connections.map((c) => [c.name, c.notify])).toEqual([
        ['bob', true],
        ['carol', false],
      ]);
      // Opened again, it shows what was saved.
      await page.getByRole('button', { name: 'Notifications…' }).click();
      expect(await dialog.getByRole('checkbox', { name: 'A role answered you' }).isChecked()).toBe(false);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect(problems).toEqual([]);
    },
  );

  it(
    'a paused and then revoked connection says who did it and on which day, in the page’s language on each side',
    { timeout: 90_000 },
    async () => {
      const { alice, carol } = nodes();
      const german = new Intl.DateTimeFormat('de-DE', { dateStyle: 'medium' });
      const english = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium' });
      const { page, problems } = await open(alice, { locale: 'de-DE' });
      await openSettings(page, 'Connections');
      const card = page.getByRole('article', { name: 'Connection carol' });
      await card.getByRole('button', { name: 'Pause' }).click();
      await page
        .getByRole('dialog', { name: 'Pause the connection to carol?' })
        .getByRole('button', { name: 'Pause' })
        .click();
      const pausedAt = await carolAt(alice, (c) => c.pausedBy?.at);
      await visible(card.getByText(`Paused by ${alice.owner.name} on ${german.format(new Date(pausedAt))}`));
      await scan(page, 'paused-by');

      await card.getByRole('button', { name: 'Revoke' }).click();
      await page
        .getByRole('dialog', { name: 'Revoke the connection to carol?' })
        .getByRole('button', { name: 'Revoke' })
        .click();
      const revokedAt = await carolAt(alice, (c) => c.revokedBy?.at);
      await visible(card.getByText(`Revoked by ${alice.owner.name} on ${german.format(new Date(revokedAt))}`));

      // carol's page, in English, says alice did it.
      const other = await open(carol, { locale: 'en-US' });
      await openSettings(other.page, 'Connections');
      const hers = other.page.getByRole('article', { name: 'Connection alice' });
      const heard = await carol.api.waitFor(
        async () => (await carol.api.call('connections.list', {})).find((c) => c.name === 'alice' && c.revokedBy),
        20_000,
        'carol to hear of the revoke',
      );
      await visible(hers.getByText(`Revoked by alice on ${english.format(new Date(heard.revokedBy!.at!))}`));
      await scan(other.page, 'revoked-by');
      expect(problems).toEqual([]);
      expect(other.problems).toEqual([]);
    },
  );
});
