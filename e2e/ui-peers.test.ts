// The UI in Chromium against three real `parley serve` installations (alice, bob and
// carol) with scripted roles, paired over mutual TLS: what people do in the window,
// checked in the window and against the app API. Screenshots of each main view go to
// e2e/screenshots/ (not committed).
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { ApiError } from '../shared/api-contract';
import { agentPids } from '../test-support/processes';
import {
  assertReady,
  openConversationWith,
  openSettings,
  pair,
  say,
  scriptedRole,
  shoot,
  shootVariants,
  threadCard,
  threadsRegion,
  until,
  visible,
  describeInBrowser,
} from './support/ui-harness';
import { uiScene } from './support/ui-scene';

const scene = uiScene(['alice', 'bob', 'carol']);
const { nodes, open } = scene;

/** Opens the card's detail (texts, run, notes). */
async function expand(page: Page, peer: string, role: string) {
  const card = threadCard(threadsRegion(page), peer, role).first();
  const toggle = card.getByRole('button', { expanded: false }).first();
  if ((await toggle.count()) > 0) await toggle.click();
  await visible(card.getByRole('list', { name: `Texts with ${peer}/${role}` }));
  return card;
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describeInBrowser('the UI with three installations', () => {
  beforeAll(async () => {
    assertReady();
    const { alice, bob, carol } = await scene.start();
    await scriptedRole(alice, 'assistant', 'Helps alice with anything');
    await scriptedRole(alice, 'writer', 'Drafts and edits text');
    await scriptedRole(bob, 'researcher', 'Finds and checks facts');
    await scriptedRole(carol, 'analyst', 'Numbers and charts');
    await pair(bob, ['researcher'], alice, ['assistant']);
    await pair(carol, ['analyst'], bob, []);
  }, 90_000);

  it(
    'a person asks a peer role; the thread appears under the conversation and the answer arrives',
    { timeout: 90_000 },
    async () => {
      const { alice } = nodes();
      const { page, problems } = await open(alice);
      // No conversation yet: the home view offers the roles.
      await visible(page.getByRole('heading', { name: 'Start a conversation' }));
      await shoot(page, 'home');
      await page
        .getByRole('list', { name: 'Roles' })
        .getByRole('button', { name: /assistant/ })
        .click();
      await visible(page.getByRole('heading', { name: 'assistant', level: 1 }));
      await visible(threadsRegion(page).getByText('No agent conversations yet'));

      await say(page, 'ask bob/researcher: what is new?');
      const card = threadCard(threadsRegion(page), 'bob', 'researcher');
      await visible(card);
      await visible(
        page
          .getByRole('region', { name: 'Messages' })
          .getByText('bob/researcher says: answer from researcher: what is new?'),
      );
      const opened = await expand(page, 'bob', 'researcher');
      const texts = opened.getByRole('list', { name: 'Texts with bob/researcher' });
      await visible(texts.getByRole('listitem').filter({ hasText: 'what is new?' }).filter({ hasText: 'Delivered' }));
      await visible(
        texts
          .getByRole('listitem')
          .filter({ hasText: 'answer from researcher: what is new?' })
          .filter({ hasText: 'Read by the agent' }),
      );

      // A relay: bob's researcher asks carol's analyst for alice; the answer comes back down.
      await say(page, 'ask bob/researcher: ask carol/analyst: numbers?');
      await visible(
        page
          .getByRole('region', { name: 'Messages' })
          .getByText('bob/researcher says: carol/analyst says: answer from analyst: numbers?'),
        30_000,
      );
      // Still one agent conversation: the same topic, the same peer role.
      expect(await threadCard(threadsRegion(page), 'bob', 'researcher').count()).toBe(1);
      const conversation = (await alice.api.call('conversations.list', {}))[0]!;
      // The answer is reported during the turn; its text counts as handled once that turn ends.
      const listed = await alice.api.waitFor(
        async () => {
          const threads = await alice.api.call('threads.list', { root: { kind: 'conversation', id: conversation.id } });
          return threads.length === 1 && threads[0]!.counts.handled === 2 ? threads : undefined;
        },
        30_000,
        'the answer handled',
      );
      expect(listed[0]!.counts).toMatchObject({ acked: 2, handled: 2, failed: 0 });

      await page.getByRole('textbox', { name: 'Message' }).fill('Thanks! Could you **summarise** that?');
      await shootVariants(page, 'conversation', ['small', 'dark']);
      await shoot(page, 'conversation');
      expect(problems).toEqual([]);
    },
  );

  it('Stop on a sleeping thread, from the peer that runs the agent', { timeout: 90_000 }, async () => {
    const { alice, bob } = nodes();
    const asker = await open(alice, { view: 'conversation-1' });
    await say(asker.page, 'ask bob/researcher: sleep 30');

    const { page, problems } = await open(bob);
    await page.getByRole('button', { name: 'Started by peers' }).click();
    const region = threadsRegion(page);
    const card = threadCard(region, 'alice', 'assistant');
    const stop = card.getByRole('button', { name: 'Stop', exact: true });
    await visible(stop, 30_000);
    await visible(card.getByText('Working'));
    await until(() => agentPids(bob.serve.process.pid!).length > 0, "bob's agent process to run");
    await shoot(page, 'peer-started-working');

    await stop.click();
    await until(async () => (await stop.count()) === 0, 'the Stop button to go once the agent stopped');
    expect(agentPids(bob.serve.process.pid!)).toEqual([]);
    const detail = await expand(page, 'alice', 'assistant');
    await visible(detail.getByText(`Last turn stopped — Stopped by ${bob.owner.name}`));
    await visible(
      detail
        .getByRole('list', { name: 'Texts with alice/assistant' })
        .getByRole('listitem')
        .filter({ hasText: 'sleep 30' })
        .filter({ hasText: 'Stopped' }),
    );
    const [thread] = await bob.api.call('threads.list', { peerStarted: true });
    expect(thread!.run.state).toBe('idle');
    expect(thread!.run.lastTurn).toMatchObject({ status: 'stopped', reason: `Stopped by ${bob.owner.name}` });

    // The relay to carol sits inside, rooted in alice's thread.
    const relays = detail.getByRole('region', { name: 'Asked on its behalf' });
    await visible(threadCard(relays, 'carol', 'analyst'));
    await shootVariants(page, 'peer-started', ['small']);
    await shoot(page, 'peer-started');
    expect(problems).toEqual([]);
    expect(asker.problems).toEqual([]);
  });

  it(
    'the peer owner pauses the connection in Settings; the asking side hears it and its agent’s ask is refused at home',
    { timeout: 90_000 },
    async () => {
      const { alice, bob } = nodes();
      const owner = await open(bob);
      await openSettings(owner.page, 'Connections');
      const connection = owner.page.getByRole('article', { name: 'Connection alice' });
      await visible(connection.getByText('Online'));
      await visible(connection.getByText(/^\d+ \/ 100$/));
      await connection.getByRole('button', { name: 'Pause', exact: true }).click();
      // Pause asks first, and says what it stops.
      const confirm = owner.page.getByRole('dialog', { name: 'Pause the connection to alice?' });
      await visible(confirm.getByText(/agents at work .* are stopped; nothing is sent to alice/));
      await shoot(owner.page, 'settings-pause-confirm');
      await confirm.getByRole('button', { name: 'Pause', exact: true }).click();
      await visible(connection.getByText('Paused', { exact: true }));
      await visible(connection.getByRole('button', { name: 'Unpause', exact: true }));
      await shoot(owner.page, 'settings-connections-paused');

      // bob's pause is told: alice's window says so, and her agent's ask is refused before it is sent.
      await alice.api.waitFor(
        async () => (await alice.api.call('connections.list', {})).find((c) => c.name === 'bob')?.peerPausedAt,
        30_000,
        'alice to hear of bob’s pause',
      );
      const asker = await open(alice, { view: 'conversation-1' });
      await say(asker.page, 'ask bob/researcher: are you there?');
      await visible(
        asker.page
          .getByRole('region', { name: 'Messages' })
          .getByText(/bob has paused the connection; nothing can be sent until bob unpauses it/),
        30_000,
      );
      // Nothing went on the wire: bob holds no text from alice.
      const received = await bob.api.call('threads.list', { peerStarted: true });
      expect(received.flatMap((t) => (t.lastText?.body === 'are you there?' ? [t] : []))).toEqual([]);
      await shoot(asker.page, 'conversation-paused');

      await connection.getByRole('button', { name: 'Unpause', exact: true }).click();
      await visible(connection.getByText('Active', { exact: true }));
      await visible(connection.getByRole('button', { name: 'Pause', exact: true }));
      // The unpause is told as well: alice's agents may ask bob again.
      await alice.api.waitFor(
        async () => !(await alice.api.call('connections.list', {})).find((c) => c.name === 'bob')?.peerPausedAt,
        30_000,
        'alice to hear bob unpaused',
      );
      expect(owner.problems).toEqual([]);
      expect(asker.problems).toEqual([]);
    },
  );

  it(
    'an owner adds a member, who sees the connections without Pause, Revoke, Invite or Accept',
    { timeout: 60_000 },
    async () => {
      const { bob } = nodes();
      const owner = await open(bob);
      await openSettings(owner.page, 'People');
      const form = owner.page.getByRole('form', { name: 'Add a person' });
      await form.getByLabel('Name').fill('dana');
      await form.getByLabel('Kind').selectOption('member');
      await form.getByRole('button', { name: 'Add person' }).click();
      const tokenField = owner.page.getByLabel('Sign-in token for dana');
      await visible(tokenField);
      const token = await tokenField.inputValue();
      expect(token).toMatch(/^pst_/);
      await shoot(owner.page, 'settings-people');

      const member = await open(bob, { token });
      await visible(member.page.getByText('dana', { exact: true }));
      await openSettings(member.page, 'Connections');
      const connection = member.page.getByRole('article', { name: 'Connection alice' });
      await visible(connection.getByText('Online'));
      await visible(connection.getByText(/^\d+ \/ 100$/));
      for (const name of ['Pause', 'Unpause', 'Revoke', 'Invite', 'Accept'])
        expect(await member.page.getByRole('button', { name, exact: true }).count(), name).toBe(0);
      await shoot(member.page, 'member-settings-connections');
      await member.page.getByRole('tab', { name: 'People' }).click();
      await visible(member.page.getByRole('heading', { name: 'People', level: 2 }));
      expect(await member.page.getByRole('form', { name: 'Add a person' }).count()).toBe(0);
      expect(await member.page.getByRole('button', { name: 'Remove' }).count()).toBe(0);
      await member.page.getByRole('tab', { name: 'Roles' }).click();
      await visible(member.page.getByRole('listitem', { name: 'Role researcher' }));
      for (const name of ['New role', 'Edit', 'Role token', 'Remove'])
        expect(await member.page.getByRole('button', { name, exact: true }).count(), name).toBe(0);
      // Nor the threads whose root is gone.
      expect(await member.page.getByRole('button', { name: 'From deleted chats' }).count()).toBe(0);
      expect(owner.problems).toEqual([]);
      expect(member.problems).toEqual([]);
    },
  );

  it('a task with a subtask shows each one’s threads', { timeout: 90_000 }, async () => {
    const { alice } = nodes();
    const { page, problems } = await open(alice);
    await page.getByRole('button', { name: /^Tasks/ }).click();
    await page.getByRole('button', { name: 'New task' }).click();
    const dialog = page.getByRole('dialog', { name: 'New task' });
    await dialog.getByLabel('Role').selectOption({ label: 'assistant' });
    await dialog.getByLabel('Title').fill('Quarterly report');
    await dialog.getByLabel(/Details/).fill('Collect the **Q3** numbers:\n\n- revenue\n- churn');
    await dialog.getByRole('button', { name: 'Create task' }).click();
    await visible(page.getByRole('heading', { name: 'Quarterly report', level: 1 }));
    await visible(page.getByRole('region', { name: 'Brief' }).getByText('revenue'));

    const comment = async (text: string) => {
      await page.getByRole('textbox', { name: 'Comment' }).fill(text);
      await page.getByRole('button', { name: 'Comment', exact: true }).click();
      await visible(page.getByRole('region', { name: 'Activity' }).getByText(text, { exact: true }));
    };
    await comment('ask bob/researcher: Q3 numbers?');
    const region = threadsRegion(page);
    await visible(threadCard(region, 'bob', 'researcher').getByText('answer from researcher: Q3 numbers?'), 30_000);

    await page.getByRole('button', { name: 'Add subtask' }).click();
    const sub = page.getByRole('dialog', { name: 'New subtask' });
    await sub.getByLabel('Title').fill('Check the figures');
    await sub.getByRole('button', { name: 'Create subtask' }).click();
    await visible(page.getByRole('heading', { name: 'Check the figures', level: 1 }));
    await visible(threadsRegion(page).getByText('No agent conversations for this task'));
    await comment('ask bob/researcher: verify 42');
    await visible(
      threadCard(threadsRegion(page), 'bob', 'researcher').getByText('answer from researcher: verify 42'),
      30_000,
    );
    expect(await threadsRegion(page).getByText('Q3 numbers?').count()).toBe(0);
    await shootVariants(page, 'tasks-subtask', ['small']);
    await shoot(page, 'tasks-subtask');

    // Back to the parent through the tree: its own thread, not the subtask's.
    await page
      .getByRole('list', { name: 'Task tree' })
      .getByRole('button', { name: /Quarterly report/ })
      .click();
    await visible(page.getByRole('heading', { name: 'Quarterly report', level: 1 }));
    await visible(threadsRegion(page).getByText('answer from researcher: Q3 numbers?'));
    expect(await threadsRegion(page).getByText('verify 42').count()).toBe(0);
    await visible(page.getByRole('region', { name: 'Subtasks' }).getByText('Check the figures'));

    const tasks = await alice.api.call('tasks.list', {});
    const parent = tasks.find((t) => t.title === 'Quarterly report')!;
    const child = tasks.find((t) => t.title === 'Check the figures')!;
    expect(child.parentId).toBe(parent.id);
    const [parentThreads, childThreads] = await Promise.all([
      alice.api.call('threads.list', { root: { kind: 'task', id: parent.id } }),
      alice.api.call('threads.list', { root: { kind: 'task', id: child.id } }),
    ]);
    expect(parentThreads).toHaveLength(1);
    expect(childThreads).toHaveLength(1);
    expect(parentThreads[0]!.threadId).not.toBe(childThreads[0]!.threadId);
    await shootVariants(page, 'tasks', ['dark']);
    await shoot(page, 'tasks');
    expect(problems).toEqual([]);
  });

  it('deleting a conversation leaves its threads readable for owners only', { timeout: 90_000 }, async () => {
    const { alice } = nodes();
    const added = await alice.api.call('people.add', { name: 'erin', kind: 'member' });
    const member = await open(alice, { token: added.token });
    await openConversationWith(member.page, 'assistant');
    await say(member.page, 'ask bob/researcher: a question from erin');
    await visible(
      member.page
        .getByRole('region', { name: 'Messages' })
        .getByText('bob/researcher says: answer from researcher: a question from erin'),
      30_000,
    );
    const erinApi = await alice.serve.connect(added.token);
    const [conversation] = await erinApi.call('conversations.list', {});
    const [thread] = await erinApi.call('threads.list', { root: { kind: 'conversation', id: conversation!.id } });

    await member.page.getByRole('button', { name: 'Delete conversation' }).click();
    const confirm = member.page.getByRole('dialog', { name: 'Delete your conversation with assistant?' });
    await shoot(member.page, 'conversation-delete-confirm');
    await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
    await visible(member.page.getByRole('heading', { name: 'Start a conversation' }));
    // The member can read it no more: no Orphaned view, and the API refuses.
    expect(await member.page.getByRole('button', { name: 'From deleted chats' }).count()).toBe(0);
    expect((await rejection(erinApi.call('threads.get', { id: thread!.id }))).code).toBe('not_found');
    expect((await rejection(erinApi.call('threads.list', { orphaned: true }))).code).toBe('forbidden');

    // The owner reads it under Orphaned, closed, with its history.
    const owner = await open(alice);
    await owner.page.getByRole('button', { name: 'From deleted chats' }).click();
    const region = threadsRegion(owner.page);
    // Titled by what it was, kept when it was deleted: whose conversation, with which role.
    await visible(region.getByRole('heading', { name: /^Deleted: erin’s conversation with assistant · first ask / }));
    const card = threadCard(region, 'bob', 'researcher');
    await visible(card.getByText('Closed: root deleted'));
    const opened = await expand(owner.page, 'bob', 'researcher');
    await visible(opened.getByText('a question from erin', { exact: true }));
    await shootVariants(owner.page, 'orphaned', ['small']);
    await shoot(owner.page, 'orphaned');
    expect(member.problems).toEqual([]);
    expect(owner.problems).toEqual([]);
  });

  it(
    'Settings: roles with inline validation, invite with code and link, accept, revoke with confirmation',
    { timeout: 90_000 },
    async () => {
      const { alice, carol } = nodes();
      const { page, problems } = await open(alice);

      await openSettings(page, 'Roles');
      await page.getByRole('button', { name: 'New role' }).click();
      const editor = page.getByRole('dialog', { name: 'New role' });
      await editor.getByLabel('Agent').selectOption({ label: 'OpenAI-compatible' });
      await editor.getByLabel('Name').fill('Local LLM');
      await editor.getByLabel('Base URL').fill('localhost:11434');
      await editor.getByRole('button', { name: 'Create role' }).click();
      await visible(editor.getByText('use lowercase letters, digits, "-" and "_"'));
      await visible(editor.locator('.field.has-error').filter({ hasText: 'Base URL' }));
      await visible(editor.locator('.field.has-error').filter({ hasText: 'Model' }));
      await shoot(page, 'settings-role-editor');
      await editor.getByLabel('Name').fill('local-llm');
      await editor.getByLabel('Base URL').fill('http://localhost:11434/v1');
      await editor.getByLabel('Model').fill('llama3.1');
      // A slow local model gets longer to load and to pause between tokens.
      await editor.getByLabel('Wait for the first token (s)').fill('900');
      await editor.getByLabel('Wait between tokens (s)').fill('0');
      await editor.getByRole('button', { name: 'Create role' }).click();
      await visible(editor.locator('.field.has-error').filter({ hasText: 'Wait between tokens (s)' }));
      await editor.getByLabel('Wait between tokens (s)').fill('240');
      await editor.getByRole('button', { name: 'Create role' }).click();
      const role = page.getByRole('listitem', { name: 'Role local-llm' });
      await visible(role.getByText('OpenAI-compatible'));
      await visible(role.getByText('llama3.1 at http://localhost:11434/v1'));
      const saved = (await alice.api.call('roles.list', {})).find((r) => r.name === 'local-llm');
      expect(saved?.agent).toMatchObject({ requestTimeoutSec: 900, idleTimeoutSec: 240 });
      await role.getByRole('button', { name: 'Edit', exact: true }).click();
      const again = page.getByRole('dialog', { name: 'Edit local-llm' });
      expect(await again.getByLabel('Wait for the first token (s)').inputValue()).toBe('900');
      await again.getByRole('button', { name: 'Cancel' }).click();
      await shootVariants(page, 'settings-roles', ['small']);
      await shoot(page, 'settings-roles');

      // Invite: a one-time code and link, with the roles the peer may address.
      await page.getByRole('tab', { name: 'Connections' }).click();
      await page.getByRole('button', { name: 'Invite', exact: true }).click();
      const invite = page.getByRole('dialog', { name: 'Invite an installation' });
      await invite.getByRole('checkbox', { name: /writer/ }).check();
      await invite.getByRole('button', { name: 'Create invitation' }).click();
      await visible(invite.getByLabel('Invitation code'));
      expect((await invite.getByLabel('Invitation code').inputValue()).length).toBeGreaterThan(20);
      expect(await invite.getByLabel('Invitation link').inputValue()).toMatch(/^parley:\/\//);
      await visible(invite.getByRole('button', { name: 'Copy code' }));
      await shoot(page, 'settings-invite');
      await invite.getByRole('button', { name: 'Done' }).click();

      // Accept carol's invitation in the window.
      const { code } = await carol.api.call('connections.invite', { roles: ['analyst'] });
      await page.getByRole('button', { name: 'Accept', exact: true }).click();
      const accept = page.getByRole('dialog', { name: 'Accept an invitation' });
      await accept.getByLabel('Invitation code').fill('not a real invitation code');
      await accept.getByRole('button', { name: 'Accept', exact: true }).click();
      await visible(accept.locator('.field-error'));
      await accept.getByLabel('Invitation code').fill(code);
      await accept.getByRole('checkbox', { name: /assistant/ }).check();
      await accept.getByRole('button', { name: 'Accept', exact: true }).click();
      const connection = page.getByRole('article', { name: 'Connection carol' });
      await visible(connection.getByText('Online'), 30_000);
      await visible(connection.getByText('carol/analyst'));
      await shootVariants(page, 'settings-connections', ['small', 'dark']);
      await shoot(page, 'settings-connections');

      // Revoke asks first; Cancel keeps it, Revoke ends it for good.
      await connection.getByRole('button', { name: 'Revoke', exact: true }).click();
      const confirm = page.getByRole('dialog', { name: 'Revoke the connection to carol?' });
      // Permanent, and it says so: no promise of pairing again.
      await visible(confirm.getByText(/cannot be paired again/));
      await shoot(page, 'settings-revoke-confirm');
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      await visible(connection.getByText('Active', { exact: true }));
      await connection.getByRole('button', { name: 'Revoke', exact: true }).click();
      await confirm.getByRole('button', { name: 'Revoke', exact: true }).click();
      await visible(connection.getByText('Revoked', { exact: true }));
      expect(await connection.getByRole('button', { name: 'Pause', exact: true }).count()).toBe(0);
      const listed = await alice.api.call('connections.list', {});
      expect(listed.find((c) => c.name === 'carol')?.status).toBe('revoked');
      expect(problems).toEqual([]);
    },
  );
});
