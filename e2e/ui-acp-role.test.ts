// Making a role on an ACP agent in the window of a real `parley serve`, in Chromium: the
// known agents as presets, the settings the acp adapter takes, inline validation.
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
  visible,
  type Node,
  describeInBrowser,
} from './support/ui-harness';

describeInBrowser('a role on an ACP agent', () => {
  let node: Node | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    assertReady();
    [node, browser] = await Promise.all([startNode('alice'), launchChromium()]);
  });

  afterAll(async () => {
    await browser?.close();
    await stopNodes([node]);
  });

  it('offers the known ACP agents as presets, saves the adapter’s settings, and shows them again to edit', async () => {
    if (!node || !browser) throw new Error('setup failed');
    const { page, problems } = await openUi(browser, node);
    await openSettings(page, 'Roles');
    await page.getByRole('button', { name: 'New role' }).click();
    const editor = page.getByRole('dialog', { name: 'New role' });
    await editor.getByLabel('Agent').selectOption({ label: 'ACP agent' });
    // It starts from the first known agent.
    expect(await editor.getByLabel('Command and arguments').inputValue()).toBe('claude-agent-acp');
    await visible(editor.getByText('Install it with: npm install -g @agentclientprotocol/claude-agent-acp'));
    await editor.getByLabel('Agent program').selectOption({ label: 'Gemini CLI' });
    expect(await editor.getByLabel('Command and arguments').inputValue()).toBe('gemini\n--experimental-acp');
    await editor.getByLabel('Name').fill('gemini');
    await editor.getByLabel('Model').fill('gemini-2.5-pro');
    await editor.getByLabel('Tool permissions').selectOption({ label: 'Allow once' });
    await editor.getByLabel('Give up when unreachable (seconds)').fill('30');
    await shoot(page, 'settings-role-editor-acp');
    // An empty command line is refused next to its field.
    await editor.getByLabel('Command and arguments').fill('');
    expect(await editor.getByLabel('Agent program').inputValue()).toBe('other');
    await editor.getByRole('button', { name: 'Create role' }).click();
    await visible(editor.locator('.field.has-error').filter({ hasText: 'Command and arguments' }));
    await editor.getByLabel('Agent program').selectOption({ label: 'Gemini CLI' });
    await editor.getByRole('button', { name: 'Create role' }).click();
    const role = page.getByRole('listitem', { name: 'Role gemini' });
    await visible(role.getByText('ACP agent'));
    await visible(role.getByText('gemini --experimental-acp · gemini-2.5-pro'));
    const [saved] = await node.api.call('roles.list', {});
    expect(saved!.agent).toEqual({
      adapter: 'acp',
      command: ['gemini', '--experimental-acp'],
      model: 'gemini-2.5-pro',
      permissions: 'allow',
      modelTimeoutSec: 30,
    });
    // Editing shows what was saved.
    await role.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit gemini' });
    expect(await edit.getByLabel('Agent program').inputValue()).toBe('gemini');
    expect(await edit.getByLabel('Model').inputValue()).toBe('gemini-2.5-pro');
    expect(await edit.getByLabel('Tool permissions').inputValue()).toBe('allow');
    expect(await edit.getByLabel('Give up when unreachable (seconds)').inputValue()).toBe('30');
    expect(problems).toEqual([]);
  }, 90_000);
});
