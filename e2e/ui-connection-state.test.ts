// Where people work, the window tells the state of what they asked and of the links it
// travels on: the ask's live state under the chat line that made it (delivered,
// working, answered, stopped by the peer, withdrawn, not delivered and which side paused), paused
// / offline on the agent conversation cards and the narrow layout's tab, and a banner
// (with Reconnect) while the page's own link to Parley is down. Chromium against two
// real `parley serve` installations, one of them killed and started again; each new
// state of an ask is scanned by axe in light and dark.
import type { Locator, Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import type { ApiClient } from '../test-support/api-client';
import {
  assertReady,
  assistantAndResearcher,
  axeInBothSchemes,
  openConversationWith,
  openSettings,
  restartNode,
  say,
  shoot,
  SMALL,
  threadCard,
  threadsRegion,
  uiPortOf,
  until,
  visible,
  type Node,
  describeInBrowser,
} from './support/ui-harness';
import { uiScene } from './support/ui-scene';

const scene = uiScene(['alice', 'bob'], { forAxe: true });
const { nodes, open } = scene;

/** An axe scan of what the page shows, in light and dark (each also saved as a screenshot). */
async function scan(page: Page, name: string): Promise<void> {
  expect(await axeInBothSchemes(page, name), name).toEqual({});
}

/** The role's chat line that says `asked PEER/ROLE`, the n-th one (from 0). */
function askLine(page: Page, n: number): Locator {
  return page
    .getByRole('region', { name: 'Messages' })
    .locator('.message-role')
    .filter({ has: page.locator('.markdown p', { hasText: /^asked / }) })
    .nth(n);
}

/** The connection's row id on `node` for the peer called `peer`. */
async function connectionId(node: Node, peer: string): Promise<number> {
  const connection = (await node.api.call('connections.list', {})).find((c) => c.name === peer);
  if (!connection) throw new Error(`${node.name} has no connection ${peer}`);
  return connection.id;
}

/** The agent conversation bob's researcher works in for alice, once its agent runs. */
async function workingPeerThread(api: ApiClient) {
  return api.waitFor(
    async () => (await api.call('threads.list', { peerStarted: true })).find((t) => t.run.state === 'running'),
    30_000,
    "bob's agent to work",
  );
}

describeInBrowser('the state of asks and links where people work', () => {
  beforeAll(async () => {
    assertReady();
    const { alice, bob } = await scene.start();
    await assistantAndResearcher(alice, bob, []);
  }, 90_000);

  it(
    'under "asked bob/researcher": answered once the answer is in; the reported answer carries none',
    { timeout: 60_000 },
    async () => {
      const { page, problems } = await open(nodes().alice);
      await openConversationWith(page, 'assistant');
      await say(page, 'ask bob/researcher: what is new?');
      const line = askLine(page, 0);
      await visible(line.getByText('Answered', { exact: true }), 30_000);
      await visible(line.getByText('bob/researcher', { exact: true }));
      const report = page
        .getByRole('region', { name: 'Messages' })
        .locator('.message-role')
        .filter({ hasText: 'bob/researcher says:' });
      await visible(report);
      expect(await report.locator('.ask-state').count()).toBe(0);
      await shoot(page, 'ask-answered');
      expect(problems).toEqual([]);
    },
  );

  it(
    'bob pauses: alice is told — her card says bob paused the connection, and her agent’s ask is refused at home',
    { timeout: 60_000 },
    async () => {
      const { alice, bob } = nodes();
      const bobSide = await connectionId(bob, 'alice');
      await bob.api.call('connections.pause', { id: bobSide });
      try {
        const { page, problems } = await open(alice);
        await openSettings(page, 'Connections');
        const card = page.getByRole('article', { name: 'Connection bob' });
        await visible(card.getByText(/^bob paused the connection/), 30_000);
        await visible(card.getByText('Paused by bob', { exact: true }));
        // Nothing alice can do about bob's pause: her own side stays active.
        await visible(card.getByRole('button', { name: 'Pause' }));
        await scan(page, 'connection-paused-by-peer');
        const chat = await open(alice, { view: 'conversation-1' });
        await say(chat.page, 'ask bob/researcher: are you there?');
        await visible(
          chat.page
            .getByRole('region', { name: 'Messages' })
            .getByText(/^error: bob has paused the connection; nothing can be sent until bob unpauses it/),
          30_000,
        );
        expect(problems).toEqual([]);
        expect(chat.problems).toEqual([]);
      } finally {
        await bob.api.call('connections.unpause', { id: bobSide });
        await alice.api.waitFor(
          async () =>
            (await alice.api.call('connections.list', {})).find((c) => c.name === 'bob')?.peerPausedAt === null,
          30_000,
          'alice to hear of the unpause',
        );
      }
    },
  );

  it(
    'bob’s agent works on it: alice’s line says working; bob stops it: “stopped by bob”; alice pauses: her card and tab say so, and the line still says stopped by bob',
    { timeout: 90_000 },
    async () => {
      const { alice, bob } = nodes();
      const { page, problems } = await open(alice, { view: 'conversation-1', viewport: SMALL });
      await say(page, 'ask bob/researcher: sleep 60');
      const line = askLine(page, 1);
      await visible(line.getByText('Working: bob’s agent has it'), 30_000);
      await scan(page, 'ask-working-800x600');
      const working = await workingPeerThread(bob.api);
      await bob.api.call('threads.stop', { id: working.id });
      // No answer will come, and alice's side says so: a person at bob stopped it.
      await visible(line.getByText('Stopped by bob; no answer will come'), 30_000);
      expect(await line.getByText(/Answered|Working/).count()).toBe(0);
      await scan(page, 'ask-stopped-by-peer-800x600');

      const aliceSide = await connectionId(alice, 'bob');
      await alice.api.call('connections.pause', { id: aliceSide });
      const tab = page.getByRole('tab', { name: /Agent conversations/ });
      await visible(tab.getByText('bob paused'));
      // A stop by bob stays a stop: unpausing would bring no answer, so the line offers none.
      await visible(line.getByText('Stopped by bob; no answer will come'));
      expect(await line.getByText(/no answer can come while you pause/).count()).toBe(0);
      expect(await line.getByRole('button', { name: 'Unpause' }).count()).toBe(0);
      await scan(page, 'ask-stopped-then-paused-here-800x600');
      await tab.click();
      const card = threadCard(threadsRegion(page), 'bob', 'researcher');
      await visible(card.getByText('Paused', { exact: true }));
      await visible(threadsRegion(page).getByText(/The connection to bob is paused here/));
      await shoot(page, 'ask-paused-here-800x600');
      await page.getByRole('tab', { name: 'Chat' }).click();
      await alice.api.call('connections.unpause', { id: aliceSide });
      await visible(askLine(page, 1).getByText('Stopped by bob; no answer will come'));
      expect((await alice.api.call('connections.list', {})).find((c) => c.id === aliceSide)?.status).toBe('active');
      await until(async () => (await tab.getByText('bob paused').count()) === 0, 'the tab to drop its mark');
      expect(problems).toEqual([]);
    },
  );

  it(
    'bob goes offline: the card and the ask say so; a pause here fails what waited, and says who can fix it — the owner here, a member asks one',
    { timeout: 150_000 },
    async () => {
      const { alice, bob } = nodes();
      const { page, problems } = await open(alice, { view: 'conversation-1' });
      const { token } = await alice.api.call('people.add', { name: 'dana', kind: 'member' });
      const member = await open(alice, { token });
      await openConversationWith(member.page, 'assistant');
      const card = threadCard(threadsRegion(page), 'bob', 'researcher');
      await visible(card.getByText('Open', { exact: true }));
      await restartNode(bob, {
        crash: true,
        beforeStart: async () => {
          await visible(card.getByText('Offline', { exact: true }), 30_000);
          await visible(threadsRegion(page).getByText('bob is offline: texts wait here and go out when it is back.'));
          await say(page, 'ask bob/researcher: still there?');
          const line = askLine(page, 2);
          await visible(line.getByText('Waiting to go out: bob is offline'), 30_000);
          await shoot(page, 'ask-offline');
          await say(member.page, 'ask bob/researcher: and for dana?');
          const memberLine = askLine(member.page, 0);
          await visible(memberLine.getByText('Waiting to go out: bob is offline'), 30_000);

          await alice.api.call('connections.pause', { id: await connectionId(alice, 'bob') });
          await visible(line.getByText('Not delivered: you paused the connection to bob'));
          await scan(page, 'ask-paused-here');
          // A member can read why, not fix it.
          await visible(
            memberLine.getByText('Not delivered: the connection to bob is paused here; an owner can unpause it'),
          );
          expect(await memberLine.getByRole('button', { name: 'Unpause' }).count()).toBe(0);
          await scan(member.page, 'ask-paused-here-member');
          await line.getByRole('button', { name: 'Unpause' }).click();
          // Unpaused: the text stays failed, and still says which side paused.
          await visible(line.getByText('Not delivered: the connection to bob was paused here; ask again'));
          await visible(memberLine.getByText('Not delivered: the connection to bob was paused here; ask again'));
        },
      });
      await visible(card.getByText('Open', { exact: true }), 30_000);
      await until(async () => (await card.getByText('Offline', { exact: true }).count()) === 0, 'bob back online');
      expect(problems).toEqual([]);
      expect(member.problems).toEqual([]);
    },
  );

  it(
    'alice withdraws an ask bob’s agent works on: bob stops it, and her line and card say who withdrew it',
    { timeout: 90_000 },
    async () => {
      const { alice, bob } = nodes();
      const { page, problems } = await open(alice, { view: 'conversation-1' });
      await say(page, 'ask bob/researcher: sleep 60');
      const line = askLine(page, 3);
      await visible(line.getByText('Working: bob’s agent has it'), 30_000);
      const working = await workingPeerThread(bob.api);
      await line.getByRole('button', { name: 'Withdraw' }).click();
      await visible(line.getByText(/^Withdrawn by .+; bob stopped working on it$/), 30_000);
      expect(await line.getByRole('button', { name: 'Withdraw' }).count()).toBe(0);
      // bob's agent was stopped as bob's own Stop would, saying who withdrew it.
      const stopped = await bob.api.waitFor(
        async () => {
          const { thread } = await bob.api.call('threads.get', { id: working.id });
          return thread.run.lastTurn?.status === 'stopped' ? thread : undefined;
        },
        30_000,
        'bob’s agent to stop',
      );
      expect(stopped.run.lastTurn?.reason).toBe('Withdrawn by alice');
      expect(stopped.withdrawn).toMatchObject({ by: 'alice' });
      const card = threadCard(threadsRegion(page), 'bob', 'researcher');
      await visible(card.getByText(/^Withdrawn by /));
      await scan(page, 'ask-withdrawn');
      expect(problems).toEqual([]);
    },
  );

  it(
    'the page loses its link to Parley: a banner says so, Reconnect brings it back and the page reads again what it shows',
    { timeout: 120_000 },
    async () => {
      const { alice } = nodes();
      // A token of its own: the owner's `serve` token is issued anew on every start.
      const { token } = await alice.api.call('people.add', { name: 'ops', kind: 'owner' });
      const { page, problems } = await open(alice, { token });
      await openConversationWith(page, 'assistant');
      await visible(page.getByRole('region', { name: 'Messages' }).getByText('Say hello to assistant'));
      const tasksItem = page.getByRole('navigation', { name: 'Parley' }).getByRole('button', { name: /^Tasks/ });
      await visible(tasksItem);
      expect(await tasksItem.locator('.count').count()).toBe(0);
      const uiPort = uiPortOf(alice);
      const banner = page.getByRole('alert').filter({ hasText: 'Connection to Parley lost' });

      // Down: the banner; what the person opens meanwhile fails to load. Back on another
      // address (the page cannot reach it), something changes that the page gets no
      // event for; then back where the page looks.
      await restartNode(alice, {
        crash: true,
        beforeStart: async () => {
          await visible(banner, 30_000);
          await visible(banner.getByRole('button', { name: 'Reconnect now' }));
          await shoot(page, 'link-lost');
          await page.getByRole('button', { name: 'Started by peers' }).click();
          await visible(threadsRegion(page).getByRole('alert'));
        },
      });
      const elsewhere = await alice.serve.connect(token);
      const [role] = await elsewhere.call('roles.list', {});
      await elsewhere.call('tasks.create', { roleId: role!.id, title: 'Made while the page was away' });
      await restartNode(alice, { uiPort });
      // The backoff may get there first; the button's own effect is in browser-transport.test.ts.
      const reconnect = banner.getByRole('button', { name: 'Reconnect now' });
      if (await reconnect.isVisible()) await reconnect.click({ timeout: 5_000 }).catch(() => undefined);
      await until(async () => (await banner.count()) === 0, 'the banner to go');
      // What failed loads now, and what was loaded is read again — no Try again, no reload.
      await visible(threadsRegion(page).getByText('Nothing from peers yet'));
      await visible(tasksItem.getByText('1', { exact: true }));
      // The browser reports on its console each connection that finds no Parley: refused,
      // or reset when it meets the process as it is killed; nothing else may fail.
      expect(problems.filter((p) => !/net::ERR_CONNECTION_(REFUSED|RESET)\b/.test(p))).toEqual([]);
    },
  );
});
