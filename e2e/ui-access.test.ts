// Trust boundaries in the window, in Chromium against a real `parley serve`: a role's
// stored secrets show as set and never reach the page, and reissuing a sign-in token
// signs the old one's tabs out, saying why, while an owner who reissues their own stays in.
import { createHash } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  assertReady,
  launchChromium,
  openSettings,
  openUi,
  shoot,
  startNode,
  stopNodes,
  until,
  visible,
  type Node,
  describeInBrowser,
} from './support/ui-harness';

const SECRET = 'sk-ui-4b1d9e7f3a2c';
const REPLACED = 'sk-ui-replaced-88e0';
const sha = (value: string) => createHash('sha256').update(value).digest('hex');
/** Prints the hash of what the agent got in API_KEY, never the key. */
const HASH_KEY = 'printf %s "$API_KEY" | sha256sum | cut -d " " -f 1';

describeInBrowser('trust boundaries in the window', () => {
  let node: Node | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    assertReady();
    [node, browser] = await Promise.all([startNode('alice'), launchChromium()]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stopNodes([node]);
  });

  /** The hash of API_KEY as the role's agent gets it in a turn. */
  async function keySeenByAgent(roleId: number): Promise<string> {
    const api = node!.api;
    const conversation = await api.call('conversations.open', { roleId });
    const before = (await api.call('conversations.get', { id: conversation.id })).messages.length;
    await api.call('conversations.send', { id: conversation.id, text: 'go' });
    return api.waitFor(
      async () =>
        (await api.call('conversations.get', { id: conversation.id })).messages
          .slice(before)
          .find((m) => m.author.kind === 'role')
          ?.body.trim(),
      15_000,
      'the agent’s answer',
    );
  }

  it('edits a role whose environment values are stored: names show as set, one replaced, one removed', async () => {
    const role = await node!.api.call('roles.create', {
      name: 'keyed',
      agent: { adapter: 'command', command: ['sh', '-c', HASH_KEY], env: { API_KEY: SECRET, REGION: 'eu-west-1' } },
    });
    const { page, context, problems } = await openUi(browser!, node!);
    await openSettings(page, 'Roles');
    await page.getByRole('listitem', { name: 'Role keyed' }).getByRole('button', { name: 'Edit' }).click();
    const editor = await visible(page.getByRole('dialog', { name: 'Edit keyed' }));
    const stored = editor.getByRole('list', { name: 'Stored environment values' });
    await visible(stored.getByText('API_KEY'));
    await visible(stored.getByText('REGION'));
    expect(await stored.getByText('set', { exact: true }).count()).toBe(2);
    const html = await page.content();
    expect(html).not.toContain(SECRET);
    expect(html).not.toContain('eu-west-1');

    await editor.getByRole('button', { name: 'Remove REGION' }).click();
    await visible(stored.getByText('will be removed'));
    await editor.getByLabel('New or replaced values').fill(`API_KEY=${REPLACED}`);
    await shoot(page, 'settings-role-editor-stored-env');
    await editor.getByRole('button', { name: 'Save role' }).click();
    await page.getByRole('dialog', { name: 'Edit keyed' }).waitFor({ state: 'detached' });

    const saved = (await node!.api.call('roles.list', {})).find((r) => r.id === role.id)!;
    expect(saved.agent).toEqual({
      adapter: 'command',
      command: ['sh', '-c', HASH_KEY],
      input: 'text',
      env: { API_KEY: { set: true } },
    });
    expect(await keySeenByAgent(role.id)).toBe(sha(REPLACED));

    // Saved again with only the instructions changed: the stored value stays.
    await page.getByRole('listitem', { name: 'Role keyed' }).getByRole('button', { name: 'Edit' }).click();
    const again = await visible(page.getByRole('dialog', { name: 'Edit keyed' }));
    await again.getByLabel('Instructions').fill('be brief');
    await again.getByRole('button', { name: 'Save role' }).click();
    await page.getByRole('dialog', { name: 'Edit keyed' }).waitFor({ state: 'detached' });
    expect(await keySeenByAgent(role.id)).toBe(sha(REPLACED));
    expect(await page.content()).not.toContain(REPLACED);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('reissues a member’s token: their tab is signed out and says why, and the new token signs in', async () => {
    const bob = await node!.api.call('people.add', { name: 'bob', kind: 'member' });
    const bobTab = await openUi(browser!, node!, { token: bob.token });
    const ownerTab = await openUi(browser!, node!);
    await openSettings(ownerTab.page, 'People');
    await ownerTab.page.getByRole('button', { name: 'Reissue token for bob' }).click();
    await ownerTab.page.getByRole('dialog').getByRole('button', { name: 'Reissue' }).click();
    const field = await visible(ownerTab.page.getByLabel('New sign-in token for bob'));
    const token = await field.inputValue();
    expect(token).toMatch(/^pst_/);

    await visible(bobTab.page.getByRole('heading', { name: 'Sign in to Parley' }));
    await visible(bobTab.page.getByText('You were signed out: your sign-in token was replaced.'));
    await bobTab.page.getByLabel('Sign-in token').fill(token);
    await bobTab.page.getByRole('button', { name: 'Sign in' }).click();
    await visible(bobTab.page.getByRole('button', { name: 'Settings', exact: true }));
    expect(await bobTab.page.locator('.whoami').getAttribute('title')).toBe('Signed in as bob (member)');
    expect(ownerTab.problems).toEqual([]);
    await bobTab.context.close();
    await ownerTab.context.close();
  });

  it('lets an owner reissue their own token and stay signed in, here and after a reload', async () => {
    const dana = await node!.api.call('people.add', { name: 'dana', kind: 'owner' });
    const { page, context, problems } = await openUi(browser!, node!, { token: dana.token });
    await openSettings(page, 'People');
    await page.getByRole('button', { name: 'Reissue token for dana' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Reissue' }).click();
    const token = await (await visible(page.getByLabel('New sign-in token for dana'))).inputValue();
    expect(token).not.toBe(dana.token);
    // Still signed in: the tab took the new token.
    await until(
      async () => (await page.locator('.whoami').getAttribute('title')) === 'Signed in as dana (owner)',
      'dana still signed in',
    );
    expect(await page.getByRole('heading', { name: 'Sign in to Parley' }).count()).toBe(0);
    await page.reload();
    await visible(page.getByRole('button', { name: 'Settings', exact: true }));
    expect(await page.locator('.whoami').getAttribute('title')).toBe('Signed in as dana (owner)');
    expect(problems).toEqual([]);
    await context.close();
  });
});
