// The first-run checklist in Chromium on a fresh `parley serve` installation (alice,
// with the `assistant` first run makes) and a peer (bob): each step ticks itself from
// what really happened — the agent answered the Test, a peer connected, an ask went
// out — and the owner hides it when done.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServe } from '../test-support/serve-process';
import { axeInBothSchemes } from './support/axe-scan';
import {
  assertReady,
  launchChromium,
  openUi,
  scriptedRole,
  shoot,
  shootVariants,
  startNode,
  stopNodes,
  until,
  visible,
  type Node,
  type OpenedPage,
  describeInBrowser,
} from './support/ui-harness';

let alice: Node | undefined;
let bob: Node | undefined;
let browser: Browser | undefined;
const opened: OpenedPage[] = [];

function nodes() {
  if (!alice || !bob || !browser) throw new Error('setup failed');
  return { alice, bob, browser };
}

async function open(node: Node, options: Parameters<typeof openUi>[2] = {}): Promise<OpenedPage> {
  const page = await openUi(nodes().browser, node, { ...options, forAxe: true });
  opened.push(page);
  return page;
}

const checklist = (page: Page) => page.getByRole('region', { name: 'Get started' });
const step = (page: Page, title: string | RegExp) => checklist(page).getByRole('listitem', { name: title });

describeInBrowser('the first-run checklist', () => {
  beforeAll(async () => {
    assertReady();
    // A fresh installation that makes its default role, finding no agent CLI here.
    const serve = await startServe({ name: 'alice', env: { PARLEY_DEFAULT_ROLE: 'on', PATH: '/usr/bin:/bin' } });
    const api = await serve.connect();
    const { person } = await api.call('session.whoami', {});
    alice = { name: 'alice', serve, api, owner: person };
    [bob, browser] = await Promise.all([startNode('bob'), launchChromium()]);
    await scriptedRole(bob, 'researcher', 'Finds and checks facts');
  }, 60_000);

  afterAll(async () => {
    for (const { context } of opened) await context.close().catch(() => undefined);
    await browser?.close();
    await stopNodes([alice, bob]);
  });

  it('ticks each step as it happens, stays until hidden, and is then gone', { timeout: 120_000 }, async () => {
    const { alice, bob } = nodes();
    const { page, problems } = await open(alice);
    await visible(checklist(page));
    for (const title of [
      /^Choose the agent for assistant \(to do\)/,
      /^Connect with someone \(to do\)/,
      /^Try an ask \(to do\)/,
    ])
      await visible(step(page, title));
    // What first run found is a note here; the role's description, which peers read, says nothing of it.
    const agent = step(page, /^Choose the agent for assistant/);
    await visible(agent.getByText(/Found when Parley was set up:.*no claude, codex or ACP agent .* on PATH/));
    expect((await alice.api.call('roles.list', {})).map((r) => [r.name, r.description])).toEqual([['assistant', '']]);
    await shoot(page, 'first-run');
    await shootVariants(page, 'first-run', ['dark', 'small']);
    expect(await axeInBothSchemes(page)).toBe('');

    // 1. Test runs a short turn; its answer shows, and the step ticks.
    await agent.getByRole('button', { name: 'Test', exact: true }).click();
    await visible(agent.getByRole('status').getByText(/It works\. assistant answered: .*echo: Hello!/), 30_000);
    await visible(step(page, /^Choose the agent for assistant \(done\)/));
    // Choosing another agent is the role editor.
    await agent.getByRole('button', { name: 'Choose another agent…' }).click();
    const editor = page.getByRole('dialog');
    await visible(editor);
    await editor.getByRole('button', { name: 'Cancel' }).click();

    // Opening the app again stays on the checklist while something is left to do.
    await page.reload();
    await visible(step(page, /^Connect with someone \(to do\)/));

    // 2. Accept, in plain words: a bad paste says what is wrong.
    const connect = step(page, /^Connect with someone/);
    await connect.getByRole('textbox', { name: 'Accept an invitation' }).fill('this is not an invitation code');
    await connect.getByRole('button', { name: 'Accept', exact: true }).click();
    await visible(connect.getByRole('alert'));
    // Invite: the code is shown, the peer accepts it, and the step ticks.
    await connect.getByRole('button', { name: 'Invite', exact: true }).click();
    const code = await connect.getByRole('textbox', { name: 'Invitation code' }).inputValue();
    await bob.api.call('connections.accept', { code, roles: ['researcher'] });
    await visible(step(page, /^Connect with someone \(done\)/), 20_000);
    await visible(connect.getByText(/Connected with bob\./));

    // 3. The ask: PEER/ROLE is offered from what the connection lets us address.
    const ask = step(page, /^Try an ask/);
    const to = ask.getByRole('combobox', { name: 'Whom to ask (PEER/ROLE)' });
    await until(async () => (await to.inputValue()) === 'bob/researcher', 'the peer role to be offered', 20_000);
    expect(
      await ask.locator('datalist option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value)),
    ).toEqual(['bob/researcher']);
    await ask.getByRole('textbox', { name: 'Question' }).fill('how deep is the lake?');
    await ask.getByRole('button', { name: 'Ask', exact: true }).click();
    await visible(ask.getByRole('status').getByText(/Sent to assistant\./));
    await visible(step(page, /^Try an ask \(done\)/), 30_000);
    await visible(checklist(page).getByText(/All set/));
    await shoot(page, 'first-run-done');
    await shootVariants(page, 'first-run-done', ['dark']);
    expect(await axeInBothSchemes(page)).toBe('');

    // Done hides it for good: the app opens in the conversation again.
    await checklist(page).getByRole('button', { name: 'Done', exact: true }).click();
    await until(async () => (await checklist(page).count()) === 0, 'the checklist to go');
    await page.reload();
    await visible(page.getByRole('heading', { name: 'assistant', level: 1 }));
    expect(await checklist(page).count()).toBe(0);
    expect((await alice.api.call('firstRun.get', {})).dismissed).toBe(true);
    expect(problems).toEqual([]);
  });

  it('is not shown to a member, who gets the roles to talk with', { timeout: 60_000 }, async () => {
    const { alice } = nodes();
    const { token } = await alice.api.call('people.add', { name: 'mia', kind: 'member' });
    const { page, problems } = await open(alice, { token });
    await visible(page.getByRole('heading', { name: 'Start a conversation' }));
    expect(await checklist(page).count()).toBe(0);
    expect(problems).toEqual([]);
  });
});
