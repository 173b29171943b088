// What waits on people, in Chromium against two real `parley serve` installations paired
// over mutual TLS: unread marks that appear while the person looks elsewhere and clear
// when they open the thing, the count in the tab's title, "Waiting on you" with what bob
// refused and that bob paused (for owners, not members), "Started by peers" on bob's
// side, and the browser's notifications (asked for on a click, shown while the tab is
// hidden, naming peer and role only). Screenshots in light and dark; axe on each.
import type { Page } from 'playwright-core';
import { afterEach, beforeAll, expect, it } from 'vitest';
import {
  assertReady,
  axeInBothSchemes,
  openConversationWith,
  pair,
  say,
  scriptedRole,
  shoot,
  threadCard,
  threadsRegion,
  until,
  visible,
  type Node,
  describeInBrowser,
} from './support/ui-harness';
import { uiScene } from './support/ui-scene';

const scene = uiScene(['alice', 'bob'], { forAxe: true });
const { nodes, open } = scene;
/** bob's side of the connection, and alice's. */
let bobToAlice = 0;
let aliceToBob = 0;

const sidebar = (page: Page) => page.getByRole('navigation', { name: 'Parley' });
const sidebarItem = (page: Page, name: string) =>
  sidebar(page).getByRole('button', { name: new RegExp(`^${name}\\b`) });
const unreadOn = (page: Page, name: string) => sidebarItem(page, name).locator('.unread-badge');
const waitingView = async (page: Page) => {
  await sidebarItem(page, 'Waiting on you').click();
  await visible(page.getByRole('heading', { name: 'Waiting on you', level: 1 }));
};
const section = (page: Page, name: 'Needs you' | 'Answered' | 'Done') => page.getByRole('region', { name });

/** Scans what the page shows in light and in dark, saving a screenshot of each. */
async function scan(page: Page, name: string): Promise<void> {
  expect(await axeInBothSchemes(page, `attention-${name}`), `axe on ${name}`).toEqual({});
}

/**
 * Headless Chromium always reports its pages as in view, and shows no notification one
 * can see: the page gets a stand-in for a hidden tab (document.visibilityState, and the
 * visibilitychange event) and the real Notification constructor, watched.
 */
const NOTIFICATION_WATCH = `(() => {
  let hidden = false;
  Object.defineProperty(Document.prototype, 'visibilityState', { configurable: true, get: () => (hidden ? 'hidden' : 'visible') });
  Object.defineProperty(Document.prototype, 'hidden', { configurable: true, get: () => hidden });
  window.__setHidden = (value) => { hidden = value; document.dispatchEvent(new Event('visibilitychange')); };
  const shown = [];
  window.__notes = () => shown.map((n) => ({ title: n.title, body: n.body, tag: n.tag }));
  window.__clickNote = (i) => shown[i].onclick && shown[i].onclick(new Event('click'));
  window.__permissionAsks = 0;
  const Real = window.Notification;
  class Watched extends Real {
    constructor(title, options) { super(title, options); shown.push(this); }
    static get permission() { return Real.permission; }
    static requestPermission(...args) { window.__permissionAsks++; return Real.requestPermission(...args); }
  }
  window.Notification = Watched;
})();`;

type Watched = Window & {
  __setHidden(hidden: boolean): void;
  __notes(): Array<{ title: string; body: string; tag: string }>;
  __clickNote(index: number): void;
  __permissionAsks: number;
};

async function conversationWith(node: Node, roleName: string): Promise<number> {
  const roles = await node.api.call('roles.list', {});
  const role = roles.find((r) => r.name === roleName)!;
  return (await node.api.call('conversations.open', { roleId: role.id })).id;
}

describeInBrowser('what waits on people, in the window', () => {
  beforeAll(async () => {
    assertReady();
    const { alice, bob } = await scene.start();
    await scriptedRole(alice, 'assistant', 'Helps alice with anything');
    await scriptedRole(alice, 'writer', 'Drafts and edits text');
    await scriptedRole(bob, 'researcher', 'Finds and checks facts');
    const ids = await pair(bob, ['researcher'], alice, ['assistant']);
    bobToAlice = ids.inviterSide;
    aliceToBob = ids.acceptorSide;
  }, 120_000);

  // A page left open on a conversation reads what arrives there: each test opens its own.
  afterEach(async () => {
    await scene.closePages();
  });

  it(
    'a role that answers while the person looks elsewhere marks its conversation unread and counts in the title; opening it clears both',
    { timeout: 120_000 },
    async () => {
      const { alice } = nodes();
      const { page, problems } = await open(alice);
      await openConversationWith(page, 'assistant');
      await say(page, 'hello');
      const messages = page.getByRole('region', { name: 'Messages' });
      await visible(messages.getByText('echo: hello'));
      // Answered while shown: read at once.
      await until(async () => (await unreadOn(page, 'assistant').count()) === 0, 'no mark on what is shown');
      await until(async () => (await page.title()) === 'Parley', 'an empty title count');

      await openConversationWith(page, 'writer');
      const assistant = await conversationWith(alice, 'assistant');
      await alice.api.call('conversations.send', { id: assistant, text: 'are you there?' });
      await visible(unreadOn(page, 'assistant'));
      expect(await unreadOn(page, 'assistant').innerText()).toMatch(/^1\s*unread$/);
      await until(async () => (await page.title()) === 'Parley (1)', 'the title to count it');
      await shoot(page, 'attention-unread-conversation');

      await waitingView(page);
      const answer = section(page, 'Answered').getByRole('button', { name: /assistant answered/ });
      await visible(answer);
      await answer.click();
      await visible(page.getByRole('heading', { name: 'assistant', level: 1 }));
      await visible(messages.getByText('echo: are you there?'));
      await until(async () => (await unreadOn(page, 'assistant').count()) === 0, 'the mark to clear');
      await until(async () => (await page.title()) === 'Parley', 'the title count to clear');
      // The server's list too (the page may have read its list a moment before the turn's last change).
      await until(async () => (await alice.api.call('attention.list', {})).total === 0, 'nothing left on the list');
      expect(problems).toEqual([]);
    },
  );

  it(
    'that bob paused waits on alice’s owner, and her agent’s ask is refused at home; a member sees none of it; opening it clears it',
    { timeout: 150_000 },
    async () => {
      const { alice, bob } = nodes();
      const { person: mia, token } = await alice.api.call('people.add', { name: 'mia', kind: 'member' });
      const { page, problems } = await open(alice);
      await bob.api.call('connections.pause', { id: bobToAlice });
      // bob's pause is told: it waits on the owner at once.
      await visible(sidebarItem(page, 'Waiting on you').locator('.unread-badge'), 30_000);
      await openConversationWith(page, 'assistant');
      await say(page, 'ask bob/researcher: are you there?');
      // The agent is refused before anything goes out, and says so.
      await visible(page.getByRole('region', { name: 'Messages' }).getByText(/bob has paused the connection/), 30_000);
      await waitingView(page);
      const needs = section(page, 'Needs you');
      const paused = needs.getByRole('button', { name: /bob paused the connection/ });
      await visible(paused, 30_000);
      expect(await needs.getByRole('button', { name: /not delivered to bob\/researcher/ }).count()).toBe(0);
      await scan(page, 'waiting');

      // A member of alice's installation reads none of it: not the owner's conversation, not the connection's news.
      const member = await open(alice, { token });
      await waitingView(member.page);
      await visible(member.page.getByText('Nothing waits on you'));
      await scan(member.page, 'empty');
      expect((await alice.api.call('attention.list', {})).items.some((i) => i.kind === 'peer_paused')).toBe(true);
      expect(mia.kind).toBe('member');

      await paused.click();
      await visible(page.getByRole('heading', { name: 'Connections', level: 2 }));
      await until(
        // The connection's news, not the conversation that has the same row id (its refusal may still be unread).
        async () =>
          (await alice.api.call('attention.list', {})).items.every(
            (i) => !(i.object.kind === 'connection' && i.object.id === aliceToBob),
          ),
        'the pause to be read',
      );
      await bob.api.call('connections.unpause', { id: bobToAlice });
      await until(
        async () => !(await alice.api.call('connections.list', {})).find((c) => c.id === aliceToBob)?.peerPausedAt,
        'alice to hear bob unpaused',
      );
      expect(problems).toEqual([]);
      expect(member.problems).toEqual([]);
    },
  );

  it(
    'a question from alice marks “Started by peers” unread on bob’s side until bob opens it',
    { timeout: 120_000 },
    async () => {
      const { alice, bob } = nodes();
      const { page, problems } = await open(bob);
      await alice.api.call('conversations.send', {
        id: await conversationWith(alice, 'assistant'),
        text: 'ask bob/researcher: what is new?',
      });
      const mark = sidebarItem(page, 'Started by peers').locator('.unread-badge');
      await visible(mark, 30_000);
      await waitingView(page);
      await visible(section(page, 'Done').getByRole('button', { name: /alice\/assistant asked researcher/ }));
      await scan(page, 'done');
      await sidebarItem(page, 'Started by peers').click();
      const card = threadCard(threadsRegion(page), 'alice', 'assistant').first();
      await visible(card.locator('.unread-badge'));
      await scan(page, 'peer-card');
      await card.getByRole('button', { expanded: false }).first().click();
      await visible(card.getByRole('list', { name: 'Texts with alice/assistant' }));
      await until(async () => (await mark.count()) === 0, 'the mark on Started by peers to clear');
      await until(async () => (await card.locator('.unread-badge').count()) === 0, 'the card’s mark to clear');
      // alice's side of the ask ends too before the next test counts what is unread in that
      // conversation: the answer came back, her assistant reported it there, and nothing of
      // hers still runs (the conversation's own turns, and the agent conversation's).
      const asked = await conversationWith(alice, 'assistant');
      await until(async () => {
        const detail = await alice.api.call('conversations.get', { id: asked });
        const threads = await alice.api.call('threads.list', { root: { kind: 'conversation', id: asked } });
        return (
          detail.messages.some((m) => m.body.startsWith('bob/researcher says:')) &&
          detail.conversation.run.state === 'idle' &&
          threads.every((t) => t.run.state === 'idle')
        );
      }, 'alice’s assistant to report the answer and go idle');
      expect(problems).toEqual([]);
    },
  );

  it(
    'the browser notifies only while the tab is hidden, naming peer and role; a click opens the object',
    { timeout: 120_000 },
    async () => {
      const { alice } = nodes();
      const { page, problems } = await open(alice, { permissions: ['notifications'], initScript: NOTIFICATION_WATCH });
      await openConversationWith(page, 'writer');
      const assistant = await conversationWith(alice, 'assistant');
      // In view: a mark, no notification.
      await alice.api.call('conversations.send', { id: assistant, text: 'first' });
      await visible(unreadOn(page, 'assistant'));
      expect(await page.evaluate(() => (window as unknown as Watched).__notes())).toEqual([]);
      await page.evaluate(() => (window as unknown as Watched).__setHidden(true));
      await alice.api.call('conversations.send', { id: assistant, text: 'the secret plan' });
      const notes = await until(async () => {
        const seen = await page.evaluate(() => (window as unknown as Watched).__notes());
        return seen.length > 0 && seen;
      }, 'a notification');
      expect(notes).toEqual([
        { title: 'Answered', body: 'assistant answered', tag: `answer:conversation:${assistant}` },
      ]);
      // Nothing is read while the tab is hidden.
      expect(await unreadOn(page, 'assistant').innerText()).toMatch(/^2\s*unread$/);
      await page.evaluate(() => {
        const watched = window as unknown as Watched;
        watched.__setHidden(false);
        watched.__clickNote(0);
      });
      await visible(page.getByRole('heading', { name: 'assistant', level: 1 }));
      await until(async () => (await unreadOn(page, 'assistant').count()) === 0, 'the mark to clear');
      expect(problems).toEqual([]);
    },
  );

  it('asks for permission to notify when the person clicks for it, never at load', { timeout: 90_000 }, async () => {
    const { alice } = nodes();
    const { page, problems } = await open(alice, { initScript: NOTIFICATION_WATCH });
    await waitingView(page);
    const turnOn = page.getByRole('button', { name: 'Turn on notifications' });
    await visible(turnOn);
    expect(await page.evaluate(() => (window as unknown as Watched).__permissionAsks)).toBe(0);
    await turnOn.click();
    await until(
      async () => (await page.evaluate(() => (window as unknown as Watched).__permissionAsks)) === 1,
      'the browser to be asked',
    );
    expect(problems).toEqual([]);
  });
});
