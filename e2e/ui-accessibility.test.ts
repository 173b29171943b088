// An axe-core scan (WCAG 2.2 A/AA and best practice, contrast included) of every screen
// and dialog, in light and in dark, against two real `parley serve` installations;
// each screen is also saved as e2e/screenshots/a11y-NAME-light.png and -dark.png.
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import {
  assertReady,
  axeInBothSchemes,
  openConversationWith,
  openSettings,
  pair,
  say,
  scriptedRole,
  SMALL,
  threadCard,
  threadsRegion,
  visible,
  describeInBrowser,
} from './support/ui-harness';
import { uiScene } from './support/ui-scene';

const scene = uiScene(['alice', 'bob'], { forAxe: true });
const { nodes, open } = scene;

/** Scans what the page shows in light and in dark; returns the violations found, by screen. */
async function scan(page: Page, name: string, found: Record<string, string>): Promise<void> {
  for (const [scheme, violations] of Object.entries(await axeInBothSchemes(page, `a11y-${name}`)))
    found[`${name} (${scheme})`] = violations;
}

async function openCard(page: Page, peer: string, role: string): Promise<void> {
  const card = threadCard(threadsRegion(page), peer, role).first();
  const toggle = card.getByRole('button', { expanded: false }).first();
  if ((await toggle.count()) > 0) await toggle.click();
  await visible(card.getByRole('list', { name: `Texts with ${peer}/${role}` }));
}

describeInBrowser('accessibility of every screen, light and dark', () => {
  beforeAll(async () => {
    assertReady();
    const { alice, bob } = await scene.start();
    await scriptedRole(alice, 'assistant', 'Helps alice with anything');
    await scriptedRole(alice, 'writer', 'Drafts and edits text');
    await scriptedRole(bob, 'researcher', 'Finds and checks facts');
    await pair(bob, ['researcher'], alice, ['assistant']);
  }, 90_000);

  it('sign-in, with and without an error', async () => {
    const found: Record<string, string> = {};
    const context = await nodes().browser.newContext({ bypassCSP: true, reducedMotion: 'reduce' });
    const page = await context.newPage();
    await page.goto(nodes().alice.serve.info.ui);
    await visible(page.getByRole('heading', { name: 'Sign in to Parley' }));
    await scan(page, 'sign-in', found);
    await page.getByLabel('Sign-in token').fill('not-a-real-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await visible(page.getByRole('alert'));
    await scan(page, 'sign-in-refused', found);
    await context.close();
    expect(found).toEqual({});
  });

  it('home, conversation with its agent conversations, the narrow layout, tasks', { timeout: 120_000 }, async () => {
    const { alice } = nodes();
    const found: Record<string, string> = {};
    const { page, problems } = await open(alice);
    await visible(page.getByRole('heading', { name: 'Start a conversation' }));
    await scan(page, 'home', found);

    await openConversationWith(page, 'assistant');
    await scan(page, 'conversation-empty', found);
    await say(page, 'ask bob/researcher: what is new?');
    await visible(page.getByRole('region', { name: 'Messages' }).getByText('Answered', { exact: true }), 30_000);
    await say(page, 'Some **Markdown**:\n```\nnpm test\n```');
    await visible(page.getByRole('button', { name: 'Copy code' }), 30_000);
    await openCard(page, 'bob', 'researcher');
    await page.locator('.run-log summary').click();
    await scan(page, 'conversation', found);

    await page.setViewportSize(SMALL);
    await scan(page, 'conversation-narrow', found);
    await page.getByRole('tab', { name: /Agent conversations/ }).click();
    await scan(page, 'conversation-narrow-threads', found);
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.getByRole('button', { name: 'New conversation' }).click();
    await visible(page.getByRole('dialog', { name: 'Start a conversation' }));
    await scan(page, 'dialog-new-conversation', found);
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Delete conversation' }).click();
    await visible(page.getByRole('dialog'));
    await scan(page, 'dialog-delete-conversation', found);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: /^Tasks/ }).click();
    await visible(page.getByRole('heading', { name: 'Tasks', level: 1 }));
    await scan(page, 'tasks-empty', found);
    await page.getByRole('button', { name: 'New task' }).click();
    const dialog = page.getByRole('dialog', { name: 'New task' });
    await dialog.getByLabel('Title').fill('Quarterly report');
    await dialog.getByLabel(/Details/).fill('Collect the **Q3** numbers.');
    await scan(page, 'dialog-new-task', found);
    await dialog.getByRole('button', { name: 'Create task' }).click();
    await visible(page.getByRole('heading', { name: 'Quarterly report', level: 1 }));
    await page.getByRole('textbox', { name: 'Comment' }).fill('ask bob/researcher: Q3 numbers?');
    await page.getByRole('button', { name: 'Comment', exact: true }).click();
    await visible(threadCard(threadsRegion(page), 'bob', 'researcher').getByText(/answer from researcher/), 30_000);
    await scan(page, 'task', found);
    expect(problems).toEqual([]);
    expect(found).toEqual({});
  });

  it('Settings tabs and their dialogs', { timeout: 120_000 }, async () => {
    const { alice } = nodes();
    const found: Record<string, string> = {};
    const { page, problems } = await open(alice);
    await openSettings(page, 'Connections');
    await scan(page, 'settings-connections', found);
    const connection = page.getByRole('article', { name: 'Connection bob' });

    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    await scan(page, 'dialog-invite', found);
    await page.getByRole('dialog').getByRole('button', { name: 'Create invitation' }).click();
    await visible(page.getByRole('dialog').getByLabel('Invitation code'));
    await scan(page, 'dialog-invitation', found);
    await page.getByRole('dialog').getByRole('button', { name: 'Done' }).click();

    await page.getByRole('button', { name: 'Accept', exact: true }).click();
    const accept = page.getByRole('dialog', { name: 'Accept an invitation' });
    await accept.getByLabel('Invitation code').fill('not an invitation at all');
    await accept.getByRole('button', { name: 'Accept', exact: true }).click();
    await visible(accept.locator('.field-error'));
    await scan(page, 'dialog-accept-error', found);
    await accept.getByRole('button', { name: 'Cancel' }).click();

    await connection.getByRole('button', { name: 'Choose roles' }).click();
    await scan(page, 'dialog-expose', found);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await connection.getByRole('button', { name: 'Change limit' }).click();
    await scan(page, 'dialog-queue-limit', found);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await connection.getByRole('button', { name: 'Revoke', exact: true }).click();
    await scan(page, 'dialog-revoke', found);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await connection.getByRole('button', { name: 'Pause', exact: true }).click();
    await scan(page, 'dialog-pause', found);
    await page.getByRole('dialog').getByRole('button', { name: 'Pause', exact: true }).click();
    await visible(connection.getByRole('button', { name: 'Unpause', exact: true }));
    await scan(page, 'settings-connections-paused', found);
    await connection.getByRole('button', { name: 'Unpause', exact: true }).click();
    await visible(connection.getByRole('button', { name: 'Pause', exact: true }));

    await page.getByRole('tab', { name: 'People' }).click();
    const form = page.getByRole('form', { name: 'Add a person' });
    await form.getByLabel('Name').fill('dana');
    await form.getByRole('button', { name: 'Add person' }).click();
    await visible(page.getByLabel('Sign-in token for dana'));
    await scan(page, 'settings-people', found);

    await page.getByRole('tab', { name: 'Roles' }).click();
    await visible(page.getByRole('heading', { name: 'Roles', level: 2 }));
    await scan(page, 'settings-roles', found);
    await page.getByRole('button', { name: 'New role' }).click();
    const editor = page.getByRole('dialog', { name: 'New role' });
    await editor.getByLabel('Name').fill('Not Valid');
    await editor.getByRole('button', { name: 'Create role' }).click();
    await visible(editor.locator('.field.has-error').first());
    await scan(page, 'dialog-role-editor', found);
    await editor.getByRole('button', { name: 'Cancel' }).click();
    expect(problems).toEqual([]);
    expect(found).toEqual({});
  });

  it('started by peers, orphaned, a member’s view, the lost link', { timeout: 120_000 }, async () => {
    const { alice, bob } = nodes();
    const found: Record<string, string> = {};
    const peer = await open(bob);
    await peer.page.getByRole('button', { name: 'Started by peers' }).click();
    await visible(threadCard(threadsRegion(peer.page), 'alice', 'assistant'));
    await openCard(peer.page, 'alice', 'assistant');
    await scan(peer.page, 'started-by-peers', found);

    const conversation = (await alice.api.call('conversations.list', {}))[0]!;
    await alice.api.call('conversations.delete', { id: conversation.id });
    const owner = await open(alice);
    await owner.page.getByRole('button', { name: 'From deleted chats' }).click();
    await visible(threadCard(threadsRegion(owner.page), 'bob', 'researcher'));
    await openCard(owner.page, 'bob', 'researcher');
    await scan(owner.page, 'orphaned', found);

    const { token } = await alice.api.call('people.add', { name: 'erin', kind: 'member' });
    const member = await open(alice, { token });
    await openSettings(member.page, 'Connections');
    await scan(member.page, 'member-settings', found);

    // Revoked: the connection's card and the agent conversations' cards on both sides.
    const bobSide = (await bob.api.call('connections.list', {})).find((c) => c.name === 'alice')!;
    await bob.api.call('connections.revoke', { id: bobSide.id });
    await visible(threadCard(threadsRegion(peer.page), 'alice', 'assistant').getByText('Revoked', { exact: true }));
    await scan(peer.page, 'started-by-peers-revoked', found);
    await openSettings(owner.page, 'Connections');
    await visible(owner.page.getByRole('article', { name: 'Connection bob' }).getByText('Revoked', { exact: true }));
    await scan(owner.page, 'settings-connections-revoked', found);

    // Last: alice's server goes away under the owner's page.
    await alice.serve.crash();
    await visible(owner.page.getByRole('alert').filter({ hasText: 'Connection to Parley lost' }), 30_000);
    await scan(owner.page, 'link-lost', found);
    expect(peer.problems).toEqual([]);
    expect(found).toEqual({});
  });
});
