// Settings → Connections in Chromium against three real `parley serve` installations:
// invitations still out are listed and cancelled (and a real peer presenting a
// cancelled one is refused), Pause asks first and says what it stops, Revoke says it
// is for good, a revoked connection can be removed from the list while its agent
// conversations keep their history, and pairing again is refused in words that say
// which side revoked.
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { ApiError } from '../shared/api-contract';
import { axeInBothSchemes } from './support/axe-scan';
import {
  assertReady,
  openConversationWith,
  openSettings,
  pair,
  scriptedRole,
  shoot,
  shootVariants,
  threadCard,
  threadsRegion,
  until,
  visible,
  type Node,
  describeInBrowser,
} from './support/ui-harness';
import { uiScene } from './support/ui-scene';

const scene = uiScene(['alice', 'bob', 'carol'], { forAxe: true });
const { nodes, open } = scene;

const pending = (page: Page) => page.getByRole('region', { name: 'Invitations waiting to be used' });

describeInBrowser('Settings: invitations, Pause, Revoke and removing revoked connections', () => {
  beforeAll(async () => {
    assertReady();
    const { alice, carol } = await scene.start();
    await scriptedRole(alice, 'assistant', 'Helps alice with anything');
    await scriptedRole(carol, 'analyst', 'Numbers and charts');
    await pair(carol, ['analyst'], alice, ['assistant']);
  }, 90_000);

  it(
    'lists an invitation until it is cancelled; the peer presenting it then is refused',
    { timeout: 90_000 },
    async () => {
      const { alice, bob } = nodes();
      const { page, problems } = await open(alice);
      await openSettings(page, 'Connections');
      expect(await pending(page).count()).toBe(0);
      await page.getByRole('button', { name: 'Invite', exact: true }).click();
      const invite = page.getByRole('dialog', { name: 'Invite an installation' });
      await invite.getByRole('checkbox', { name: /assistant/ }).check();
      await invite.getByRole('button', { name: 'Create invitation' }).click();
      const code = await invite.getByLabel('Invitation code').inputValue();
      await invite.getByRole('button', { name: 'Done' }).click();

      const row = pending(page).getByRole('listitem');
      await visible(row.getByText('They may address assistant'));
      await shoot(page, 'settings-invitations');
      await shootVariants(page, 'settings-invitations', ['dark']);
      expect(await axeInBothSchemes(page)).toBe('');

      // A member sees it, without Cancel.
      const { token } = await alice.api.call('people.add', { name: 'mia', kind: 'member' });
      const member = await open(alice, { token });
      await openSettings(member.page, 'Connections');
      await visible(pending(member.page).getByText('They may address assistant'));
      expect(await pending(member.page).getByRole('button', { name: 'Cancel' }).count()).toBe(0);

      await row.getByRole('button', { name: 'Cancel', exact: true }).click();
      const confirm = page.getByRole('dialog', { name: 'Cancel this invitation?' });
      await visible(confirm.getByText(/can no longer connect with it/));
      expect(await axeInBothSchemes(page)).toBe('');
      await confirm.getByRole('button', { name: 'Cancel invitation' }).click();
      await until(async () => (await pending(page).count()) === 0, 'the invitation to leave the list');
      // The other window hears of it too.
      await until(async () => (await pending(member.page).count()) === 0, "the member's list to follow");

      const refused = await bob.api.call('connections.accept', { code }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).message).toMatch(/^alice refused the invitation/);
      expect((await alice.api.call('connections.list', {})).map((c) => c.name)).toEqual(['carol']);
      expect(problems).toEqual([]);
      expect(member.problems).toEqual([]);
    },
  );

  it('Pause asks first and says what it stops', { timeout: 60_000 }, async () => {
    const { alice } = nodes();
    const { page, problems } = await open(alice);
    await openSettings(page, 'Connections');
    const connection = page.getByRole('article', { name: 'Connection carol' });
    await connection.getByRole('button', { name: 'Pause', exact: true }).click();
    const confirm = page.getByRole('dialog', { name: 'Pause the connection to carol?' });
    await visible(confirm.getByText(/agents at work .* are stopped; nothing is sent to carol/));
    await visible(confirm.getByText(/what carol sends is refused/));
    await shoot(page, 'settings-pause-dialog');
    expect(await axeInBothSchemes(page)).toBe('');
    // Cancel changes nothing; Pause pauses.
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await visible(connection.getByText('Active', { exact: true }));
    await connection.getByRole('button', { name: 'Pause', exact: true }).click();
    await confirm.getByRole('button', { name: 'Pause', exact: true }).click();
    await visible(connection.getByText('Paused', { exact: true }));
    await connection.getByRole('button', { name: 'Unpause', exact: true }).click();
    await visible(connection.getByText('Active', { exact: true }));
    expect(problems).toEqual([]);
  });

  it(
    'removes a revoked connection from the list; its agent conversation keeps its history',
    { timeout: 90_000 },
    async () => {
      const { alice } = nodes();
      const { page, problems } = await open(alice);
      await openConversationWith(page, 'assistant');
      const box = page.getByRole('textbox', { name: 'Message' });
      await box.fill('ask carol/analyst: how many visitors came?');
      await box.press('Enter');
      const card = threadCard(threadsRegion(page), 'carol', 'analyst');
      await visible(card);
      await visible(
        page
          .getByRole('region', { name: 'Messages' })
          .getByText('carol/analyst says: answer from analyst: how many visitors came?'),
        30_000,
      );

      await openSettings(page, 'Connections');
      const connection = page.getByRole('article', { name: 'Connection carol' });
      await connection.getByRole('button', { name: 'Revoke', exact: true }).click();
      const revoke = page.getByRole('dialog', { name: 'Revoke the connection to carol?' });
      await visible(revoke.getByText(/This is permanent/));
      await visible(revoke.getByText(/cannot be paired again, not even with a new invitation/));
      await shoot(page, 'settings-revoke-dialog');
      expect(await axeInBothSchemes(page)).toBe('');
      await revoke.getByRole('button', { name: 'Revoke', exact: true }).click();
      await visible(connection.getByText('Revoked', { exact: true }));

      await connection.getByRole('button', { name: 'Remove from list' }).click();
      const remove = page.getByRole('dialog', { name: 'Remove carol from the list?' });
      await visible(remove.getByText(/Its agent conversations stay where they are/));
      await visible(remove.getByText(/carol stays refused/));
      await shoot(page, 'settings-remove-dialog');
      await shootVariants(page, 'settings-remove-dialog', ['dark']);
      expect(await axeInBothSchemes(page)).toBe('');
      await remove.getByRole('button', { name: 'Remove', exact: true }).click();
      await until(async () => (await connection.count()) === 0, 'the card to leave the list');
      await visible(page.getByText('Not connected to anyone yet'));
      expect(await alice.api.call('connections.list', {})).toEqual([]);

      // The history is where it was.
      await openConversationWith(page, 'assistant');
      const kept = threadCard(threadsRegion(page), 'carol', 'analyst');
      await visible(kept);
      const toggle = kept.getByRole('button', { expanded: false }).first();
      if ((await toggle.count()) > 0) await toggle.click();
      await visible(kept.getByText('how many visitors came?', { exact: true }));
      expect(problems).toEqual([]);
    },
  );

  it('refuses to pair again with a revoked peer, saying on each side who revoked', { timeout: 90_000 }, async () => {
    const { alice, carol } = nodes();
    // Alice revoked carol (the test before); carol has heard of it.
    await until(
      async () => (await carol.api.call('connections.list', {})).find((c) => c.name === 'alice')?.status === 'revoked',
      'carol to hear that alice revoked',
      60_000,
    );
    const tryAccept = async (node: Node, code: string, shot: string) => {
      const { page, problems } = await open(node);
      await openSettings(page, 'Connections');
      await page.getByRole('button', { name: 'Accept', exact: true }).click();
      const accept = page.getByRole('dialog', { name: 'Accept an invitation' });
      await accept.getByLabel('Invitation code').fill(code);
      await accept.getByRole('button', { name: 'Accept', exact: true }).click();
      const error = accept.locator('.field-error');
      await visible(error, 30_000);
      await shoot(page, shot);
      await shootVariants(page, shot, ['dark']);
      expect(await axeInBothSchemes(page)).toBe('');
      expect(problems).toEqual([]);
      return error.innerText();
    };
    const fromCarol = await carol.api.call('connections.invite', {});
    expect(await tryAccept(alice, fromCarol.code, 'settings-accept-you-revoked')).toBe(
      'You revoked the connection with carol; these two installations cannot be paired again.',
    );
    const fromAlice = await alice.api.call('connections.invite', {});
    expect(await tryAccept(carol, fromAlice.code, 'settings-accept-peer-revoked')).toBe(
      'alice revoked its connection with this installation and refuses to pair again.',
    );
  });
});
