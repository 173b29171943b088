// A long list of agent conversations in Chromium, read a page at a time: the rows in view
// stay where they are while the pages above them land, though those rows' cards are taller
// than the placeholders they replace.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { seededServe } from '../bench/ui';
import { removeDataDir, type ServeProcess } from '../test-support/serve-process';
import { assertReady, launchChromium, noBrowser } from './support/ui-harness';

const skip = noBrowser('a long list of agent conversations');
let serve: ServeProcess;
let browser: Browser;

beforeAll(async () => {
  if (skip) return;
  assertReady();
  // More than the 2,000 a list reads whole: this one is read by pages.
  ({ serve } = await seededServe(5000));
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (serve) {
    await serve.stop();
    removeDataDir(serve.dataDir);
  }
});

/** The first row whose top is in view: its place in the list and its distance from the box's top. */
const topRow = (page: Page) =>
  page.evaluate(() => {
    const box = document.querySelector<HTMLElement>('[data-testid="thread-scroll"]')!;
    const top = box.getBoundingClientRect().top;
    const rows = [...box.querySelectorAll<HTMLElement>('.virtual-row')]
      .map((row) => ({ index: Number(row.dataset.index), offset: row.getBoundingClientRect().top - top }))
      .filter((row) => row.offset >= 0)
      .sort((a, b) => a.offset - b.offset);
    return rows[0] ?? null;
  });

/** The top row once the rows at the box's offset are rendered (the virtualizer renders after the scroll event). */
async function settledTopRow(page: Page, atLeast = 0) {
  let row: Awaited<ReturnType<typeof topRow>> = null;
  await expect
    .poll(
      async () => {
        row = await topRow(page);
        return row?.index ?? -1;
      },
      { timeout: 20_000 },
    )
    .toBeGreaterThanOrEqual(atLeast);
  return row!;
}

it.skipIf(skip)('keeps the rows in view in place while the pages above them land', { timeout: 120_000 }, async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  // The pages of the list asked for (their JSON-RPC ids, by offset), and those answered.
  const asked = new Map<number, number>();
  const answered = new Set<number>();
  const text = (payload: string | Buffer) => (typeof payload === 'string' ? payload : payload.toString('utf8'));
  page.on('websocket', (socket) => {
    socket.on('framesent', ({ payload }) => {
      const call = JSON.parse(text(payload)) as { id?: number; method?: string; params?: { offset?: number } };
      if (call.method === 'threads.page' && call.id !== undefined) asked.set(call.params?.offset ?? 0, call.id);
    });
    socket.on('framereceived', ({ payload }) => {
      const reply = JSON.parse(text(payload)) as { id?: number };
      if (reply.id !== undefined) answered.add(reply.id);
    });
  });
  const landed = (offset: number) => asked.has(offset) && answered.has(asked.get(offset)!);
  await page.goto(`${serve.info.ui}#token=${serve.info.token}`);
  await page
    .getByRole('navigation', { name: 'Parley' })
    .getByRole('button', { name: /^assistant/ })
    .click();
  const box = page.getByTestId('thread-scroll');
  await box.locator('.thread-card').first().waitFor();

  // Halfway down, where nothing was read: placeholders, then the cards of the pages there
  // (a page is 100 rows; those in view and 100 either side are read).
  await box.evaluate((element) => {
    element.scrollTop = element.scrollHeight / 2;
    return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  });
  await expect.poll(() => box.locator('.thread-placeholder').count(), { timeout: 20_000 }).toBe(0);
  const middle = await settledTopRow(page);
  // The first page read there, as the page asked for it: the rows in view and a page's
  // worth above them, and a page more when the virtualizer's overscan and a row partly in
  // view reach past a page's start.
  let firstRead = Math.floor(middle.index / 100) * 100;
  while (asked.has(firstRead - 100)) firstRead -= 100;
  expect(middle.index - firstRead).toBeGreaterThanOrEqual(100);

  // Up to some rows below the first row read: the page above it is read next, out of view.
  await box.evaluate(
    (element, rows) => {
      const heights = [...element.querySelectorAll<HTMLElement>('.virtual-row')].map((row) => row.offsetHeight);
      element.scrollTop -= rows * (heights.reduce((a, b) => a + b, 0) / heights.length);
      // Until the rows there are rendered: the scroll event, then the frame after it.
      return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    },
    middle.index - (firstRead + 20),
  );
  await expect.poll(() => box.locator('.thread-placeholder').count(), { timeout: 20_000 }).toBe(0);
  const before = await settledTopRow(page, firstRead);
  // The page above lands (read ahead of the view) with cards taller than its placeholders.
  await expect.poll(() => landed(firstRead - 100), { timeout: 20_000 }).toBe(true);
  // The page has taken the answer in (a task, then frames), and drawn what it made of it.
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  const after = await settledTopRow(page);
  expect(after.index).toBe(before.index);
  expect(Math.abs(after.offset - before.offset)).toBeLessThanOrEqual(1);
  await context.close();
});
