// The UI benchmark (bench/ui.ts) as a test: 10,000 agent conversations under one root
// in Chromium, the view's first paint, scrolling, and the app API's round trip in
// browser mode. It prints the figures as one JSON line and checks what the renderer
// controls; see renderer/README.md for the figures and for what the server's share needs.
import path from 'node:path';
import { expect, it } from 'vitest';
import { benchUi } from '../bench/ui';
import { assertReady, screenshotDir } from './support/ui-harness';
import { mkdirSync } from 'node:fs';

it(
  '10,000 agent conversations under one root: first paint, smooth scrolling, API round trip',
  { timeout: 180_000 },
  async () => {
    assertReady();
    mkdirSync(screenshotDir, { recursive: true });
    const result = await benchUi({ threads: 10_000, screenshot: path.join(screenshotDir, 'threads-10000.png') });
    console.log(JSON.stringify(result));

    // The rendering is the renderer's: with the 10,000 summaries in the page, the view
    // paints its rows well inside 300 ms, and scrolling keeps a screenful of rows in the DOM.
    expect(result.threadsPaintWarmMs).toBeLessThanOrEqual(300);
    expect(result.viewPaintMs).toBeLessThanOrEqual(300);
    expect(result.scroll.rowsInDom).toBeLessThanOrEqual(60);
    expect(result.scroll.reachedEnd).toBe(true);
    expect(result.scroll.p50FrameMs).toBeLessThanOrEqual(34);
    // An app API call in browser mode.
    expect(result.apiRoundTrip.p50Ms).toBeLessThanOrEqual(2);
    // Cold, the list comes from the server in one 6 MB answer (threads.list has no paging):
    // reported, not asserted, until the API can page (renderer/README.md).
    expect(result.threadsPaintColdMs).toBeGreaterThan(0);
  },
);
