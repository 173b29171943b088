// What a newcomer saw in their first ten minutes, each as what the window must do
// instead: Chromium against three real `parley serve` installations (alice, bob and
// carol) paired over mutual TLS, with scripted roles and one slow command role.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  assertReady,
  onScreen,
  openConversationWith,
  openSettings,
  pair,
  say,
  scriptedRole,
  shoot,
  slowAnswerRole,
  threadCard,
  threadsRegion,
  until,
  visible,
  describeInBrowser,
} from './support/ui-harness';
import { uiScene } from './support/ui-scene';

const scene = uiScene(['alice', 'bob', 'carol']);
const { nodes, open } = scene;
let scripts: string | undefined;

/** Opens the card's detail (texts, run, notes). */
async function expand(scope: Page | Locator, peer: string, role: string) {
  const card = threadCard(threadsRegion(scope), peer, role).first();
  const toggle = card.getByRole('button', { expanded: false }).first();
  if ((await toggle.count()) > 0) await toggle.click();
  await visible(card.getByRole('list', { name: `Texts with ${peer}/${role}` }));
  return card;
}

/** The text of an invitation code with some fields changed, as a person might paste a stale one. */
function alteredInvitation(code: string, change: Record<string, string>): string {
  const invite = JSON.parse(Buffer.from(code, 'base64url').toString('utf8')) as Record<string, string>;
  return Buffer.from(JSON.stringify({ ...invite, ...change }), 'utf8').toString('base64url');
}

const focusedName = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    return el ? (el.getAttribute('aria-label') ?? el.textContent ?? '').trim() : null;
  });

describeInBrowser('what the newcomer review saw', () => {
  beforeAll(async () => {
    assertReady();
    scripts = mkdtempSync(path.join(os.tmpdir(), 'parley-ui-review-'));
    const { alice, bob, carol } = await scene.start();
    await scriptedRole(alice, 'assistant', 'Helps alice with anything');
    await slowAnswerRole(alice, 'planner', scripts);
    await scriptedRole(
      alice,
      'writer',
      'Drafts, edits and proofreads long documents: reports, letters, release notes, the minutes of every meeting and the answers to questions people ask twice',
    );
    await scriptedRole(bob, 'researcher', 'Finds and checks facts');
    await scriptedRole(carol, 'analyst', 'Numbers and charts');
    await pair(bob, ['researcher'], alice, []);
    await pair(carol, ['analyst'], alice, []);
  }, 90_000);

  afterAll(() => {
    if (scripts) rmSync(scripts, { recursive: true, force: true });
  });

  it('a revoke closes the agent conversations in open windows on both sides, without a reload', async () => {
    const { alice, carol } = nodes();
    const asker = await open(alice);
    await openConversationWith(asker.page, 'assistant');
    await say(asker.page, 'ask carol/analyst: the numbers?');
    const askerCard = threadCard(threadsRegion(asker.page), 'carol', 'analyst');
    await visible(askerCard.getByText('answer from analyst: the numbers?'), 30_000);
    await visible(askerCard.getByText('Open', { exact: true }));

    const peer = await open(carol);
    await peer.page.getByRole('button', { name: 'Started by peers' }).click();
    const peerCard = threadCard(threadsRegion(peer.page), 'alice', 'assistant');
    await visible(peerCard.getByText('Open', { exact: true }));

    const [connection] = (await alice.api.call('connections.list', {})).filter((c) => c.name === 'carol');
    await alice.api.call('connections.revoke', { id: connection!.id });
    await visible(askerCard.getByText(`Closed: revoked by ${alice.owner.name}`));
    await visible(peerCard.getByText('Closed: revoked by alice'));
    await visible(askerCard.getByText('Revoked', { exact: true }));
    await visible(peerCard.getByText('Revoked', { exact: true }));
    expect(await askerCard.getByText('Open', { exact: true }).count()).toBe(0);
    expect(await peerCard.getByText('Open', { exact: true }).count()).toBe(0);
    expect(asker.problems).toEqual([]);
    expect(peer.problems).toEqual([]);
  });

  it('a working agent conversation’s card shows the whole peer role beside Stop', async () => {
    const { alice } = nodes();
    const { page, problems } = await open(alice);
    await openConversationWith(page, 'planner');
    await say(page, 'ask bob/researcher: what is new?');
    // The answer came back; planner works on it for two minutes.
    const card = threadCard(threadsRegion(page), 'bob', 'researcher');
    const stop = card.getByRole('button', { name: 'Stop', exact: true });
    await visible(stop, 30_000);
    const peer = card.locator('.thread-peer');
    const fits = await peer.evaluate((el) => el.scrollWidth <= el.clientWidth && el.clientWidth > 0);
    await shoot(page, 'review-working-card');
    expect(fits, 'the peer role is cut off').toBe(true);
    expect(await onScreen(stop)).toBe(true);
    await stop.click();
    await until(async () => (await stop.count()) === 0, 'the agent to stop');
    expect(problems).toEqual([]);
  });

  it('a role’s checkbox keeps its size beside a long description', async () => {
    const { page, problems } = await open(nodes().alice);
    await openSettings(page, 'Connections');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    const box = page.getByRole('dialog', { name: 'Invite an installation' }).getByRole('checkbox', { name: /writer/ });
    const size = await box.boundingBox();
    expect(size?.width).toBeGreaterThanOrEqual(12);
    expect(size?.height).toBeGreaterThanOrEqual(12);
    expect(problems).toEqual([]);
  });

  it('a long task keeps its comment box and the answer on screen', async () => {
    const { alice } = nodes();
    const assistant = (await alice.api.call('roles.list', {})).find((r) => r.name === 'assistant')!;
    const brief = Array.from({ length: 40 }, (_, i) => `${i + 1}. A step of the plan that needs doing.`).join('\n');
    const task = await alice.api.call('tasks.create', { roleId: assistant.id, title: 'A long plan', body: brief });
    const { page, problems } = await open(alice, { view: `task-${task.id}` });
    await visible(page.getByRole('heading', { name: 'A long plan', level: 1 }));
    const box = page.getByRole('textbox', { name: 'Comment' });
    await visible(box);
    expect(await onScreen(box), 'the comment box is below the fold').toBe(true);
    await box.fill('how far along?');
    await box.press('Enter');
    const answer = page.getByRole('region', { name: 'Activity' }).getByText('echo: how far along?');
    await visible(answer, 30_000);
    await until(() => onScreen(answer), 'the answer to be on screen without scrolling');
    await shoot(page, 'review-long-task');
    expect(problems).toEqual([]);
  });

  it('agent output keeps its single line breaks, and code blocks have a Copy button', async () => {
    const { page, context, problems } = await open(nodes().alice);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await openConversationWith(page, 'assistant');
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('first line');
    await box.press('Shift+Enter');
    await box.pressSequentially('second line');
    await box.press('Enter');
    const messages = page.getByRole('region', { name: 'Messages' });
    const echo = messages.locator('.message-role').filter({ hasText: 'echo: first line' });
    await visible(echo, 30_000);
    expect(await echo.locator('.markdown').innerText()).toContain('echo: first line\nsecond line');

    await box.fill('run this:\n```\nnpm test\n```');
    await box.press('Enter');
    const code = messages.locator('.message-role').filter({ hasText: 'run this:' });
    await visible(code, 30_000);
    const copy = code.getByRole('button', { name: 'Copy code' });
    await visible(copy);
    await copy.click();
    await visible(code.getByRole('button', { name: 'Copied' }));
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('npm test');
    expect(problems).toEqual([]);
  });

  it('focus goes back where it was when a dialog closes', async () => {
    const { page, problems } = await open(nodes().alice);
    await openConversationWith(page, 'assistant');
    await page.getByRole('button', { name: 'New conversation' }).click();
    await visible(page.getByRole('dialog', { name: 'Start a conversation' }));
    await page.keyboard.press('Escape');
    await until(async () => (await page.getByRole('dialog').count()) === 0, 'the dialog to close');
    expect(await focusedName(page)).toBe('New conversation');

    await page.getByRole('button', { name: 'Delete conversation' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await until(async () => (await page.getByRole('dialog').count()) === 0, 'the dialog to close');
    expect(await focusedName(page)).toBe('Delete conversation');
    expect(problems).toEqual([]);
  });

  it('the sidebar’s focus ring is drawn whole', async () => {
    const { page, problems } = await open(nodes().alice);
    await openConversationWith(page, 'assistant');
    const item = page.getByRole('navigation', { name: 'Parley' }).locator('.conversation-item').first();
    await item.focus();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');
    const clipped = await item.evaluate((el) => {
      const style = getComputedStyle(el);
      if (!el.matches(':focus-visible') || style.outlineStyle === 'none') return 'no focus ring';
      const grow = parseFloat(style.outlineOffset) + parseFloat(style.outlineWidth);
      const rect = el.getBoundingClientRect();
      const ring = {
        left: rect.left - grow,
        right: rect.right + grow,
        top: rect.top - grow,
        bottom: rect.bottom + grow,
      };
      for (let parent = el.parentElement; parent; parent = parent.parentElement) {
        const overflow = getComputedStyle(parent);
        if (overflow.overflowX === 'visible' && overflow.overflowY === 'visible') continue;
        const box = parent.getBoundingClientRect();
        const left = box.left + parent.clientLeft;
        const top = box.top + parent.clientTop;
        if (
          ring.left < left - 0.5 ||
          ring.top < top - 0.5 ||
          ring.right > left + parent.clientWidth + 0.5 ||
          ring.bottom > top + parent.clientHeight + 0.5
        )
          return `clipped by ${parent.className}`;
      }
      return 'whole';
    });
    expect(clipped).toBe('whole');
    expect(problems).toEqual([]);
  });

  it('a long task title that is cut short shows in full as a tooltip', async () => {
    const { alice } = nodes();
    const assistant = (await alice.api.call('roles.list', {})).find((r) => r.name === 'assistant')!;
    const title =
      'Collect every figure of the third quarter from the regional offices, check them against the ledger and write them up for the board';
    await alice.api.call('tasks.create', { roleId: assistant.id, title });
    const { page, problems } = await open(alice, { view: 'tasks' });
    const item = page
      .getByRole('list', { name: 'Task tree' })
      .locator('.task-item-title')
      .filter({ hasText: 'Collect every figure' });
    await visible(item);
    expect(await item.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
    expect(await item.getAttribute('title')).toBe(title);
    expect(problems).toEqual([]);
  });

  it('help and error texts show code as code, never raw backticks', async () => {
    const { alice } = nodes();
    await alice.api.call('roles.create', {
      name: 'broken',
      description: 'Its program is missing',
      agent: { adapter: 'command', command: ['/nonexistent/agent-cli'] },
    });
    const { page, problems } = await open(alice);
    await openSettings(page, 'Roles');
    await page.getByRole('button', { name: 'New role' }).click();
    const editor = page.getByRole('dialog', { name: 'New role' });
    await editor.getByLabel('Agent').selectOption({ label: 'Claude Code' });
    await visible(editor.locator('code').filter({ hasText: /^claude$/ }));
    expect(await editor.innerText()).not.toContain('`');
    await editor.getByRole('button', { name: 'Cancel' }).click();

    await openConversationWith(page, 'broken');
    await say(page, 'hello?');
    const notice = page.getByRole('region', { name: 'Messages' }).locator('.message-system');
    await visible(notice, 30_000);
    await visible(notice.locator('code').filter({ hasText: '/nonexistent/agent-cli' }));
    expect(await notice.innerText()).not.toContain('`');
    expect(problems).toEqual([]);
  });

  it(
    'a request the peer stopped says so where it ran, and the asking side hears that the peer stopped it',
    { timeout: 90_000 },
    async () => {
      const { alice, bob } = nodes();
      const asker = await open(alice);
      await openConversationWith(asker.page, 'assistant');
      await say(asker.page, 'ask bob/researcher: sleep 30');

      const { page, problems } = await open(bob);
      await page.getByRole('button', { name: 'Started by peers' }).click();
      const card = threadCard(threadsRegion(page), 'alice', 'assistant');
      const stop = card.getByRole('button', { name: 'Stop', exact: true });
      await visible(stop, 30_000);
      await visible(card.getByText('Working'));
      // What the agent was given is with it, not waiting for it.
      expect(await card.getByText(/waiting for the agent/).count()).toBe(0);
      await stop.click();
      await until(async () => (await stop.count()) === 0, 'the agent to stop');
      const detail = await expand(page, 'alice', 'assistant');
      const dropped = detail
        .getByRole('list', { name: 'Texts with alice/assistant' })
        .getByRole('listitem')
        .filter({ hasText: 'sleep 30' });
      await visible(dropped.getByText('Stopped', { exact: true }));
      await visible(dropped.getByText(`Stopped by ${bob.owner.name}`, { exact: false }));
      expect(await dropped.getByText('Handled').count()).toBe(0);
      await shoot(page, 'review-stopped-request');

      const askerCard = await expand(asker.page, 'bob', 'researcher');
      const sent = askerCard
        .getByRole('list', { name: 'Texts with bob/researcher' })
        .getByRole('listitem')
        .filter({ hasText: 'sleep 30' });
      // The peer says that its agent was stopped there (only the state crosses, not who).
      await visible(sent.getByText('Stopped by bob', { exact: true }), 30_000);
      expect(await askerCard.getByText(/Acknowledged|Handled|Answered/).count()).toBe(0);
      expect(problems).toEqual([]);
      expect(asker.problems).toEqual([]);
    },
  );

  it('an invitation that cannot be used is explained in plain words', async () => {
    const { bob, carol } = nodes();
    const { code } = await bob.api.call('connections.invite', { roles: ['researcher'] });
    const { page, problems } = await open(carol);
    await openSettings(page, 'Connections');
    await page.getByRole('button', { name: 'Accept', exact: true }).click();
    const accept = page.getByRole('dialog', { name: 'Accept an invitation' });
    const error = accept.locator('.field-error');

    await accept.getByLabel('Invitation code').fill(alteredInvitation(code, { secret: 'a'.repeat(32) }));
    await accept.getByRole('button', { name: 'Accept', exact: true }).click();
    await visible(error, 30_000);
    const refused = await error.innerText();
    expect(refused).not.toMatch(/certificate|refused the invitation/i);
    expect(refused).toMatch(/bob/);
    expect(refused).toMatch(/new invitation/);

    await accept.getByLabel('Invitation code').fill(alteredInvitation(code, { address: '127.0.0.1:1' }));
    await accept.getByRole('button', { name: 'Accept', exact: true }).click();
    await until(async () => (await error.innerText()) !== refused, 'the second error');
    const unreachable = await error.innerText();
    expect(unreachable).not.toMatch(/ECONNREFUSED|connect /);
    expect(unreachable).toMatch(/could not reach bob/i);
    await shoot(page, 'review-invitation-error');
    expect(problems).toEqual([]);
  });

  it('Settings tabs follow the arrow keys, Home and End', async () => {
    const { page, problems } = await open(nodes().alice);
    await openSettings(page, 'Connections');
    const tab = (name: string) => page.getByRole('tab', { name });
    await tab('Connections').focus();
    const current = async () => {
      const selected = await page.getByRole('tab', { selected: true }).innerText();
      return { selected: selected.trim(), focused: await focusedName(page) };
    };
    await page.keyboard.press('ArrowRight');
    await expect.poll(current).toEqual({ selected: 'People', focused: 'People' });
    await visible(page.getByRole('heading', { name: 'People', level: 2 }));
    await page.keyboard.press('End');
    await expect.poll(current).toEqual({ selected: 'Roles', focused: 'Roles' });
    await page.keyboard.press('ArrowRight');
    await expect.poll(current).toEqual({ selected: 'Connections', focused: 'Connections' });
    await page.keyboard.press('ArrowLeft');
    await expect.poll(current).toEqual({ selected: 'Roles', focused: 'Roles' });
    await page.keyboard.press('Home');
    await expect.poll(current).toEqual({ selected: 'Connections', focused: 'Connections' });
    // One tab stop: the selected tab.
    expect(await tab('Connections').getAttribute('tabindex')).toBe('0');
    expect(await tab('People').getAttribute('tabindex')).toBe('-1');
    expect(problems).toEqual([]);
  });
});
