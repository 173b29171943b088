// The UI benchmark (bench/ui.ts) as a test: 10,000 agent conversations under one root
// in Chromium, read a page at a time. It prints the figures as one JSON line and checks
// what does not depend on the machine's speed: the list is virtualized (a screenful of
// rows in the DOM, not 10,000), it scrolls to its end, and every call answered. The
// timings are the benchmark's goals (bench/README.md), never a test's.
import path from 'node:path';
import { expect, it } from 'vitest';
import { benchUi } from '../bench/ui';
import { assertReady, noBrowser, screenshotDir } from './support/ui-harness';
import { mkdirSync } from 'node:fs';

it.skipIf(noBrowser('the UI benchmark'))(
  '10,000 agent conversations under one root: paged in, virtualized, scrolled to the end',
  { timeout: 180_000 },
  async () => {
    assertReady();
    mkdirSync(screenshotDir, { recursive: true });
    const result = await benchUi({ threads: 10_000, screenshot: path.join(screenshotDir, 'threads-10000.png') });
    console.log(JSON.stringify(result));

    // The first page is a page, not the whole list.
    expect(result.firstPageBytes).toBeLessThan(200_000);
    expect(result.threadsPaintColdMs).toBeGreaterThan(0);
    expect(result.scroll.rowsInDom).toBeLessThanOrEqual(60);
    expect(result.scroll.reachedEnd).toBe(true);
    expect(result.apiRoundTrip.calls).toBe(2000);
  },
);
