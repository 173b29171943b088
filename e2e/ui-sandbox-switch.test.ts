// "Run without a sandbox" on a connection card in Settings: an owner turns it on and off
// by its accessible name and the installation takes it (`connections.list` says
// `sandboxRequired`); a member sees that it is on and cannot change it. Chromium against
// two real `parley serve` installations; the card is scanned by axe-core, light and dark.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertReady,
  axeInBothSchemes,
  launchChromium,
  openSettings,
  openUi,
  pair,
  scriptedRole,
  startNode,
  stopNodes,
  until,
  visible,
  type Node,
  type OpenedPage,
} from './support/ui-harness';

let alice: Node | undefined;
let bob: Node | undefined;
let browser: Browser | undefined;
const opened: OpenedPage[] = [];

async function sandboxRequired(node: Node, peer: string) {
  return (await node.api.call('connections.list', {})).find((c) => c.name === peer)?.sandboxRequired;
}

describe('run without a sandbox, on the connection card', () => {
  beforeAll(async () => {
    assertReady();
    [alice, bob, browser] = await Promise.all([startNode('alice'), startNode('bob'), launchChromium()]);
    await scriptedRole(alice, 'assistant', 'Helps alice with anything');
    await scriptedRole(bob, 'researcher', 'Finds and checks facts');
    await pair(bob, ['researcher'], alice, ['assistant']);
  }, 90_000);

  afterAll(async () => {
    for (const { context } of opened) await context.close().catch(() => undefined);
    await browser?.close();
    await stopNodes([alice!, bob!].filter(Boolean));
  });

  it(
    'is off for a new peer; an owner turns it on and off again; a member sees it on and cannot change it',
    { timeout: 120_000 },
    async () => {
      expect(await sandboxRequired(alice!, 'bob')).toBe(true);
      const owner = await openUi(browser!, alice!, { forAxe: true });
      opened.push(owner);
      await openSettings(owner.page, 'Connections');
      const card = owner.page.getByRole('article', { name: 'Connection bob' });
      const toggle = await visible(card.getByRole('switch', { name: 'Run without a sandbox' }));
      expect(await toggle.isChecked()).toBe(false);
      await visible(card.getByText('Runs working for bob start only inside the agents’ sandbox.'));
      expect(await axeInBothSchemes(owner.page, 'sandbox-switch'), 'axe on the card with the switch').toEqual({});

      await toggle.click();
      await until(
        async () => (await sandboxRequired(alice!, 'bob')) === false,
        'alice to let bob’s runs go unsandboxed',
      );
      await visible(card.getByText('Where the agents’ sandbox cannot start, runs working for bob start without it.'));
      expect(await toggle.isChecked()).toBe(true);
      expect(await axeInBothSchemes(owner.page, 'sandbox-switch-on'), 'axe with the switch on').toEqual({});

      const dana = await alice!.api.call('people.add', { name: 'dana', kind: 'member' });
      const member = await openUi(browser!, alice!, { token: dana.token });
      opened.push(member);
      await openSettings(member.page, 'Connections');
      const seen = member.page.getByRole('article', { name: 'Connection bob' });
      await visible(seen.getByText('Runs without a sandbox'));
      expect(await seen.getByRole('switch').count()).toBe(0);

      await toggle.click();
      await until(async () => (await sandboxRequired(alice!, 'bob')) === true, 'alice to require the sandbox again');
      // The member's card follows: the note is gone once the sandbox is required again.
      await until(
        async () => (await seen.getByText('Runs without a sandbox').count()) === 0,
        'the member’s note to go',
      );
      expect(owner.problems).toEqual([]);
      expect(member.problems).toEqual([]);
    },
  );
});
