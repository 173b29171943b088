// A connection's card in Settings, where an owner decides how far a peer's requests
// reach: its trust level and whether its runs may go without the sandbox. An owner changes
// each by its accessible name and the installation takes it (`connections.list` says so);
// a member reads them and cannot change them. Chromium against two real `parley serve`
// installations; the card is scanned by axe-core, light and dark.
import { beforeAll, expect, it } from 'vitest';
import {
  assertReady,
  assistantAndResearcher,
  describeInBrowser,
  axeInBothSchemes,
  openSettings,
  until,
  visible,
  type Node,
} from './support/ui-harness';
import { uiScene } from './support/ui-scene';

const scene = uiScene(['alice', 'bob'], { forAxe: true });
const { nodes, open } = scene;
/** dana, a member of alice's installation. */
let memberToken = '';

async function bobAt(node: Node) {
  return (await node.api.call('connections.list', {})).find((c) => c.name === 'bob');
}
const trustOf = async (node: Node) => (await bobAt(node))?.trust;
const sandboxRequired = async (node: Node) => (await bobAt(node))?.sandboxRequired;

describeInBrowser('the connection card', () => {
  beforeAll(async () => {
    assertReady();
    const { alice, bob } = await scene.start();
    await assistantAndResearcher(alice, bob);
    memberToken = (await alice.api.call('people.add', { name: 'dana', kind: 'member' })).token;
  }, 90_000);

  it(
    'trust: an owner sees “Answers only” for a new peer and raises it; a member reads it and cannot change it',
    { timeout: 120_000 },
    async () => {
      const { alice } = nodes();
      const owner = await open(alice);
      await openSettings(owner.page, 'Connections');
      const card = owner.page.getByRole('article', { name: 'Connection bob' });
      const select = await visible(card.getByRole('combobox', { name: 'Trust for bob' }));
      expect(await select.inputValue()).toBe('answer');
      await visible(card.getByText('every tool request is denied', { exact: false }));
      expect(await axeInBothSchemes(owner.page, 'trust-card'), 'axe on the trust card').toEqual({});

      await select.selectOption({ label: 'Work in the role’s folder' });
      await until(async () => (await trustOf(alice)) === 'work', 'alice to trust bob to work');
      await visible(card.getByText('tool requests wait for a person', { exact: false }));

      const member = await open(alice, { token: memberToken, forAxe: false });
      await openSettings(member.page, 'Connections');
      const seen = member.page.getByRole('article', { name: 'Connection bob' });
      await visible(seen.getByText('Work in the role’s folder'));
      expect(await seen.getByRole('combobox', { name: 'Trust for bob' }).count()).toBe(0);
      expect(owner.problems).toEqual([]);
      expect(member.problems).toEqual([]);
    },
  );

  it(
    'run without a sandbox: off for a new peer; an owner turns it on and off again; a member sees it on and cannot change it',
    { timeout: 120_000 },
    async () => {
      const { alice } = nodes();
      expect(await sandboxRequired(alice)).toBe(true);
      const owner = await open(alice);
      await openSettings(owner.page, 'Connections');
      const card = owner.page.getByRole('article', { name: 'Connection bob' });
      const toggle = await visible(card.getByRole('switch', { name: 'Run without a sandbox' }));
      expect(await toggle.isChecked()).toBe(false);
      await visible(card.getByText('Runs working for bob start only inside the agents’ sandbox.'));
      expect(await axeInBothSchemes(owner.page, 'sandbox-switch'), 'axe on the card with the switch').toEqual({});

      await toggle.click();
      await until(async () => (await sandboxRequired(alice)) === false, 'alice to let bob’s runs go unsandboxed');
      await visible(card.getByText('Where the agents’ sandbox cannot start, runs working for bob start without it.'));
      expect(await toggle.isChecked()).toBe(true);
      expect(await axeInBothSchemes(owner.page, 'sandbox-switch-on'), 'axe with the switch on').toEqual({});

      const member = await open(alice, { token: memberToken, forAxe: false });
      await openSettings(member.page, 'Connections');
      const seen = member.page.getByRole('article', { name: 'Connection bob' });
      await visible(seen.getByText('Runs without a sandbox'));
      expect(await seen.getByRole('switch').count()).toBe(0);

      await toggle.click();
      await until(async () => (await sandboxRequired(alice)) === true, 'alice to require the sandbox again');
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
