// A connection's trust level on its card in Settings (DESIGN §12.3): an owner reads and
// changes it by its accessible name, the installation takes the new level; a member reads
// it and cannot change it. Chromium against two real `parley serve` installations; the
// card is scanned by axe-core, light and dark.
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

async function trustOf(node: Node, peer: string) {
  return (await node.api.call('connections.list', {})).find((c) => c.name === peer)?.trust;
}

describe('trust on the connection card', () => {
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
    'an owner sees “Answers only” for a new peer and raises it; a member reads it and cannot change it',
    { timeout: 120_000 },
    async () => {
      const owner = await openUi(browser!, alice!, { forAxe: true });
      opened.push(owner);
      await openSettings(owner.page, 'Connections');
      const card = owner.page.getByRole('article', { name: 'Connection bob' });
      const select = await visible(card.getByRole('combobox', { name: 'Trust for bob' }));
      expect(await select.inputValue()).toBe('answer');
      await visible(card.getByText('every tool request is denied', { exact: false }));
      expect(await axeInBothSchemes(owner.page, 'trust-card'), 'axe on the trust card').toEqual({});

      await select.selectOption({ label: 'Work in the role’s folder' });
      await until(async () => (await trustOf(alice!, 'bob')) === 'work', 'alice to trust bob to work');
      await visible(card.getByText('tool requests wait for a person', { exact: false }));

      const dana = await alice!.api.call('people.add', { name: 'dana', kind: 'member' });
      const member = await openUi(browser!, alice!, { token: dana.token });
      opened.push(member);
      await openSettings(member.page, 'Connections');
      const seen = member.page.getByRole('article', { name: 'Connection bob' });
      await visible(seen.getByText('Work in the role’s folder'));
      expect(await seen.getByRole('combobox', { name: 'Trust for bob' }).count()).toBe(0);
      expect(owner.problems).toEqual([]);
      expect(member.problems).toEqual([]);
    },
  );
});
