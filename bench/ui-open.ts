// How fast the window shows something when it opens, against a static page loaded at the
// same moment by the same browser (so a busy machine slows both alike):
//
//  - first paint of the app's page (`parley serve`'s UI, as a tab opens it with the sign-in
//    token) and of a static page of about the same markup, served by a bare Node HTTP server
//    on loopback with the same security headers (a cross-origin-opener-policy alone moves a
//    navigation into a new browsing context group, about 20 ms here, for any page); each
//    loaded in a fresh browser context (nothing cached), alternately, the median of each;
//  - the app's first view: the sidebar painted (the page signed in and its first lists read);
//  - the initial script: the bytes of every script the page loads before it can show its
//    first view (the entry and the chunks it preloads), against the 250 KB goal.
//
// Goals: first paint ≤ 2× the static page's, initial script ≤ 250 KB.
import { readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { securityHeaders } from '../main/http/static-files';
import { removeDataDir, startServe } from '../test-support/serve-process';

export interface UiOpenResult {
  name: 'ui-open';
  loads: number;
  /** Median first paint of the app's page (ms from navigation start). */
  appFirstPaintMs: number;
  /** Median first paint of the static page, loaded alternately with the app's. */
  staticFirstPaintMs: number;
  ratio: number;
  /** Median time to the first view: the sidebar's conversations painted. */
  appFirstViewMs: number;
  /** The scripts the page loads before its first view: entry plus preloaded chunks. */
  initialScriptKb: number;
  initialScripts: { file: string; kb: number }[];
  goal: string;
  met: boolean;
}

// Built, this file is dist/bench/ui.js; run from source (the UI tests), bench/ui-open.ts.
const rendererDir = fileURLToPath(
  new URL(import.meta.url.includes('/dist/') ? '../renderer/' : '../dist/renderer/', import.meta.url),
);
const LOADS = 7;
const round = (value: number) => Math.round(value * 100) / 100;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** The scripts index.html makes the browser fetch before the app runs: its module entry and modulepreloads. */
export function initialScripts(dir = rendererDir): { file: string; kb: number }[] {
  const html = readFileSync(path.join(dir, 'index.html'), 'utf8');
  const files = [
    ...html.matchAll(/<script[^>]*type="module"[^>]*src="([^"]+)"/g),
    ...html.matchAll(/<link[^>]*rel="modulepreload"[^>]*href="([^"]+)"/g),
  ].map((match) => match[1]!);
  return files.map((file) => ({ file, kb: round(statSync(path.join(dir, file)).size / 1024) }));
}

/** A page with the app's splash markup and no script: what a browser paints at best. */
const STATIC_PAGE = `<!doctype html><html lang="en"><head><meta charset="UTF-8"><title>Parley</title></head>
<body><main><span aria-hidden="true">P</span><div role="status">Opening Parley…</div></main></body></html>`;

function staticServer(): Promise<Server> {
  const server = createServer((_request, response) => {
    response.writeHead(200, {
      ...securityHeaders,
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
    });
    response.end(STATIC_PAGE);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function firstPaint(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        const read = () => performance.getEntriesByType('paint').find((entry) => entry.name === 'first-paint');
        const found = read();
        if (found) return resolve(found.startTime);
        new PerformanceObserver((list, observer) => {
          const entry = list.getEntries().find((e) => e.name === 'first-paint');
          if (entry) {
            observer.disconnect();
            resolve(entry.startTime);
          }
        }).observe({ type: 'paint', buffered: true });
      }),
  );
}

export async function benchUiOpen(browser: Browser): Promise<UiOpenResult> {
  const serve = await startServe({ name: 'bench' });
  const server = await staticServer();
  const staticUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const app: number[] = [];
  const view: number[] = [];
  const plain: number[] = [];
  try {
    for (let i = 0; i < LOADS; i++) {
      for (const which of i % 2 === 0 ? (['app', 'static'] as const) : (['static', 'app'] as const)) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        const page = await context.newPage();
        if (which === 'static') {
          await page.goto(staticUrl);
          plain.push(await firstPaint(page));
        } else {
          await page.goto(`${serve.info.ui}#token=${serve.info.token}`);
          app.push(await firstPaint(page));
          await page.getByRole('navigation', { name: 'Parley' }).waitFor({ timeout: 20_000 });
          view.push(await page.evaluate(() => performance.now()));
        }
        await context.close();
      }
    }
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await serve.stop();
    removeDataDir(serve.dataDir);
  }
  const scripts = initialScripts();
  const initialScriptKb = round(scripts.reduce((sum, script) => sum + script.kb, 0));
  const ratio = round(median(app) / Math.max(1, median(plain)));
  return {
    name: 'ui-open',
    loads: LOADS,
    appFirstPaintMs: round(median(app)),
    staticFirstPaintMs: round(median(plain)),
    ratio,
    appFirstViewMs: round(median(view)),
    initialScriptKb,
    initialScripts: scripts,
    goal: 'first paint <= 2x a static page, initial script <= 250 KB',
    met: ratio <= 2 && initialScriptKb <= 250,
  };
}
