// The UI benchmark (Chromium, browser mode against a real `parley serve`):
//
//  - 10,000 and 100,000 agent conversations under one root (a person's conversation),
//    written straight into the installation's SQLite file before the server starts
//    (test-support/seed-threads.ts); the page reads them a page at a time (threads.page);
//  - first paint of that conversation's view: from the click in the sidebar to the
//    view painted, and to its first thread rows painted (cold: the list comes from the
//    server, each time on a fresh page; warm: the list is already in the page's store, so
//    it is render cost only; the median of three visits each);
//  - scrolling the 10,000-row list: frame times while it scrolls by 600 px a frame, and
//    how many rows are in the DOM (virtualized: a screenful, not 10,000);
//  - with --trace FILE, Chromium traces of the cold paint and of both scrolls (FILE-COUNT-cold.json,
//    FILE-COUNT-loading.json and FILE-COUNT-scroll.json, for the Performance panel or chrome://tracing);
//    with --trace-js too, with the CPU profile of the page's script in them;
//  - an app API call's round trip in browser mode: `session.whoami` over the page's own
//    /api WebSocket, p50 and p95 of 2,000 calls after 200 warm-up calls.
//
// Goal per line: the first rows painted within 300 ms of the click with the list from the
// server (cold), and no long frame (over 50 ms) while scrolling.
//
// `node dist/bench/ui.js [--threads 10000,100000] [--scale S] [--trace FILE [--trace-js]]` prints one JSON line named
// "ui" per count on stdout, after one line "ui-open" (bench/ui-open.ts: how fast the window
// opens); `npm run bench` runs it after dist/bench/run.js.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { ApiClient } from '../test-support/api-client';
import { seedThreads } from '../test-support/seed-threads';
import { removeDataDir, startServe, type ServeProcess } from '../test-support/serve-process';
import { launchChromium } from '../e2e/support/ui-harness';
import { benchUiOpen } from './ui-open';

// Never the public DHT from the project's own runs: its installations (and their children) stay off it.
process.env.PARLEY_DHT_BOOTSTRAP ??= 'off';

export interface UiBenchResult {
  name: 'ui';
  threads: number;
  /** The first threads.page for the root, as the page asks for it, measured from Node: the server's share of the cold paint. */
  firstPageMs: number;
  firstPageBytes: number;
  /** attention.list as the page asks for it at load, from Node: what every page reads again after each change. */
  attentionListMs: number;
  /** Click → the view (header, chat, the region's frame) painted (the median first visit's). */
  viewPaintMs: number;
  /** Click → the first thread rows painted, the list fetched from the server; median of 3 first visits. */
  threadsPaintColdMs: number;
  /** Each first visit's figure, in the order they ran. */
  threadsPaintColdRuns: number[];
  /** Click → the first thread rows painted, the list already in the page (render only); median of 3. */
  threadsPaintWarmMs: number;
  /** Click → the page asked for the first page of the list (cold). */
  listRequestedColdMs: number | null;
  /** Click → the list arrived in the page (cold): the rest of threadsPaintColdMs is rendering. */
  listArrivedColdMs: number | null;
  scroll: {
    frames: number;
    p50FrameMs: number;
    p95FrameMs: number;
    maxFrameMs: number;
    longFrames: number;
    rowsInDom: number;
    reachedEnd: boolean;
  };
  /** Scrolling right after the cold paint, the rows coming into view read page by page. */
  scrollWhileLoading: {
    frames: number;
    p50FrameMs: number;
    maxFrameMs: number;
    longFrames: number;
    /** Which frames were long (their place among the frames, from 0) and how long: to find them in a trace. */
    long: { frame: number; ms: number }[];
  };
  /** How many rows the list says it has (its header's count), read or not. */
  loadedRows: number;
  apiRoundTrip: { calls: number; p50Ms: number; p95Ms: number };
  goal: string;
  met: boolean;
}

/** The renderer's first page of a thread list (renderer/state/threads.ts). */
const FIRST_PAGE = 60;
const LONG_FRAME_MS = 50;

const round = (value: number) => Math.round(value * 100) / 100;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

/** Starts an installation with `count` threads under one conversation of its owner. */
export async function seededServe(count: number): Promise<{ serve: ServeProcess; conversationId: number }> {
  const first = await startServe({ name: 'bench' });
  const api = await first.connect();
  const role = await api.call('roles.create', {
    name: 'assistant',
    description: 'Asks around',
    agent: { adapter: 'scripted' },
  });
  const conversation = await api.call('conversations.open', { roleId: role.id });
  await api.call('conversations.send', {
    id: conversation.id,
    text: 'Hello! Please ask everyone about the weekly numbers.',
  });
  await api.waitFor(
    async () =>
      (await api.call('conversations.get', { id: conversation.id })).messages.some((m) => m.author.kind === 'role'),
    20_000,
    "the role's reply",
  );
  await first.stop();
  seedThreads({
    dataDir: first.dataDir,
    root: { kind: 'conversation', id: conversation.id },
    localRole: { id: role.id, name: role.name },
    count,
    peer: 'bob',
  });
  const serve = await startServe({ name: 'bench', dataDir: first.dataDir });
  return { serve, conversationId: conversation.id };
}

export async function benchUi(
  options: { threads?: number; browser?: Browser; screenshot?: string; trace?: string; traceJs?: boolean } = {},
): Promise<UiBenchResult> {
  const count = options.threads ?? 10_000;
  const { serve, conversationId } = await seededServe(count);
  const browser = options.browser ?? (await launchChromium());
  try {
    // The server's share: the first page over the socket, as the page asks for it.
    const api = await ApiClient.connect(serve.info.api, serve.info.token);
    const firstPage = () =>
      api.call('threads.page', { root: { kind: 'conversation', id: conversationId }, limit: FIRST_PAGE });
    await firstPage(); // warm the server
    const started = performance.now();
    const first = await firstPage();
    const firstPageMs = performance.now() - started;
    const firstPageBytes = JSON.stringify(first).length;
    if (first.total !== count) throw new Error(`threads.page counts ${first.total} threads, ${count} were seeded`);
    await api.call('attention.list', {});
    const attentionStarted = performance.now();
    await api.call('attention.list', {});
    const attentionListMs = performance.now() - attentionStarted;
    api.close();

    /** A fresh page landed on Tasks, so the conversation view opens from a click, as a person opens it. */
    const openPage = async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      // tsx (esbuild, keepNames) wraps functions in __name(); the page's evaluate needs it too.
      await context.addInitScript({ content: 'globalThis.__name = (fn) => fn;' });
      const page = await context.newPage();
      await page.goto(`${serve.info.ui}#view=tasks&token=${serve.info.token}`);
      const item = page.getByRole('navigation', { name: 'Parley' }).getByRole('button', { name: /^assistant/ });
      await item.waitFor({ timeout: 20_000 });
      return { context, page };
    };
    const paint = (on: Page) =>
      on.evaluate(async () => {
        const button = [...document.querySelectorAll<HTMLButtonElement>('.conversation-item')][0]!;
        const frame = () => new Promise<number>((resolve) => requestAnimationFrame(() => resolve(performance.now())));
        const t0 = performance.now();
        button.click();
        let view = 0;
        for (;;) {
          const now = await frame();
          if (!view && document.querySelector('.conversation-view .threads')) view = (await frame()) - t0;
          if (document.querySelector('[data-testid="thread-scroll"] .thread-card')) {
            const rows = (await frame()) - t0;
            const mark = (name: string) => {
              const found = performance.getEntriesByName(name).filter((m) => m.startTime >= t0);
              return found.length > 0 ? found[0]!.startTime - t0 : null;
            };
            return {
              view,
              rows,
              requested: mark('parley:threads-requested'),
              arrived: mark('parley:threads-arrived'),
            };
          }
          if (now - t0 > 30_000) throw new Error('the thread rows never painted');
        }
      });
    const leave = async () => {
      await page.getByRole('button', { name: /^Tasks/ }).click();
      await page.locator('.tasks-view').waitFor();
    };

    /** With --trace: a Chromium trace of what follows, until the next stopTracing. */
    const startTrace = async (phase: string) => {
      if (!options.trace) return;
      await browser.startTracing(page, {
        path: `${options.trace}-${phase}.json`,
        // The CPU profiler (--trace-js) names the functions but slows every frame two to three times.
        categories: [
          'toplevel',
          'blink.user_timing',
          'devtools.timeline',
          'v8.execute',
          ...(options.traceJs
            ? ['disabled-by-default-devtools.timeline', 'blink', 'disabled-by-default-v8.cpu_profiler']
            : []),
        ],
      });
    };

    // Cold: the median of three first visits, two on pages of their own first (the machine
    // may be busy with other work). The third page is the one scrolled next, its list
    // still being read; a trace shows that one.
    const firstVisits: Array<Awaited<ReturnType<typeof paint>>> = [];
    for (let i = 0; i < 2; i++) {
      const other = await openPage();
      firstVisits.push(await paint(other.page));
      await other.context.close();
    }
    const { context, page } = await openPage();
    await startTrace('cold');
    firstVisits.push(await paint(page));
    if (options.trace) await browser.stopTracing();
    const cold = [...firstVisits].sort((a, b) => a.rows - b.rows)[1]!;
    await startTrace('loading');
    // Right after the first page painted, as a person would: scroll, the rows coming into
    // view read a page at a time.
    const whileLoading = await page.evaluate(async () => {
      const box = document.querySelector<HTMLElement>('[data-testid="thread-scroll"]')!;
      const frames: number[] = [];
      let last = await new Promise<number>((resolve) => requestAnimationFrame(resolve));
      for (let i = 0; i < 60; i++) {
        box.scrollTop += 600;
        const now = await new Promise<number>((resolve) => requestAnimationFrame(resolve));
        frames.push(now - last);
        last = now;
      }
      return frames;
    });
    if (options.trace) await browser.stopTracing();
    const loadedRows = Number(
      (await page.locator('.conversation-view .threads-header .count').textContent())?.replace(/\D/g, '') ?? 0,
    );
    // Warm: the median of three visits (the machine may be busy with other work).
    const warmRuns: number[] = [];
    for (let i = 0; i < 3; i++) {
      await leave();
      warmRuns.push((await paint(page)).rows);
    }
    if (options.screenshot) await page.screenshot({ path: options.screenshot });

    await startTrace('scroll');
    const scroll = await page.evaluate(async () => {
      const box = document.querySelector<HTMLElement>('[data-testid="thread-scroll"]')!;
      const frames: number[] = [];
      let last = await new Promise<number>((resolve) => requestAnimationFrame(resolve));
      let rowsInDom = 0;
      for (let i = 0; i < 240 && box.scrollTop + box.clientHeight < box.scrollHeight - 1; i++) {
        box.scrollTop += 600;
        const now = await new Promise<number>((resolve) => requestAnimationFrame(resolve));
        frames.push(now - last);
        last = now;
        rowsInDom = Math.max(rowsInDom, box.querySelectorAll('.virtual-row').length);
      }
      // Then jump to the end, as dragging the scrollbar would; rows measured there may
      // move the end a little, so jump again until it holds.
      let reachedEnd = false;
      for (let attempt = 0; attempt < 10 && !reachedEnd; attempt++) {
        box.scrollTop = box.scrollHeight;
        const before = performance.now();
        await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
        frames.push(performance.now() - before);
        reachedEnd = box.scrollTop + box.clientHeight >= box.scrollHeight - 2;
      }
      return { frames, rowsInDom, reachedEnd };
    });

    if (options.trace) await browser.stopTracing();
    const rtt = await page.evaluate(async () => {
      const token = sessionStorage.getItem('parley.token');
      const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api`);
      await new Promise((resolve, reject) => {
        ws.onopen = resolve;
        ws.onerror = reject;
      });
      let id = 0;
      const call = (method: string, params: object) =>
        new Promise<void>((resolve) => {
          const mine = ++id;
          const onMessage = (event: MessageEvent) => {
            const message = JSON.parse(event.data as string) as { id?: number };
            if (message.id === mine) {
              ws.removeEventListener('message', onMessage);
              resolve();
            }
          };
          ws.addEventListener('message', onMessage);
          ws.send(JSON.stringify({ jsonrpc: '2.0', id: mine, method, params }));
        });
      await call('session.signIn', { token });
      for (let i = 0; i < 200; i++) await call('session.whoami', {});
      const times: number[] = [];
      for (let i = 0; i < 2000; i++) {
        const t0 = performance.now();
        await call('session.whoami', {});
        times.push(performance.now() - t0);
      }
      ws.close();
      return times;
    });
    await context.close();

    const longFrames = scroll.frames.filter((f) => f > LONG_FRAME_MS).length;
    const longFramesWhileLoading = whileLoading.filter((f) => f > LONG_FRAME_MS).length;
    return {
      name: 'ui',
      threads: count,
      firstPageMs: round(firstPageMs),
      firstPageBytes,
      attentionListMs: round(attentionListMs),
      viewPaintMs: round(cold.view),
      threadsPaintColdMs: round(cold.rows),
      threadsPaintColdRuns: firstVisits.map((visit) => round(visit.rows)),
      threadsPaintWarmMs: round(percentile(warmRuns, 50)),
      listRequestedColdMs: cold.requested === null ? null : round(cold.requested),
      listArrivedColdMs: cold.arrived === null ? null : round(cold.arrived),
      scroll: {
        frames: scroll.frames.length,
        p50FrameMs: round(percentile(scroll.frames, 50)),
        p95FrameMs: round(percentile(scroll.frames, 95)),
        maxFrameMs: round(Math.max(...scroll.frames)),
        longFrames,
        rowsInDom: scroll.rowsInDom,
        reachedEnd: scroll.reachedEnd,
      },
      apiRoundTrip: { calls: rtt.length, p50Ms: round(percentile(rtt, 50)), p95Ms: round(percentile(rtt, 95)) },
      scrollWhileLoading: {
        frames: whileLoading.length,
        p50FrameMs: round(percentile(whileLoading, 50)),
        maxFrameMs: round(Math.max(...whileLoading)),
        longFrames: longFramesWhileLoading,
        long: whileLoading.map((ms, frame) => ({ frame, ms: round(ms) })).filter((f) => f.ms > LONG_FRAME_MS),
      },
      loadedRows,
      goal: `threadsPaintColdMs<=300 and no frame over ${LONG_FRAME_MS} ms while scrolling`,
      met: cold.rows <= 300 && longFrames === 0 && longFramesWhileLoading === 0,
    };
  } finally {
    if (!options.browser) await browser.close();
    await serve.stop();
    removeDataDir(serve.dataDir);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      threads: { type: 'string' },
      scale: { type: 'string' },
      trace: { type: 'string' },
      'trace-js': { type: 'boolean' },
    },
  });
  const scale = values.scale === undefined ? 1 : Number(values.scale);
  const counts = (values.threads ?? '10000,100000').split(',').map((n) => Math.max(100, Math.round(Number(n) * scale)));
  (async () => {
    const browser = await launchChromium();
    try {
      process.stdout.write(JSON.stringify(await benchUiOpen(browser)) + '\n');
      for (const threads of counts) {
        const trace = values.trace ? `${values.trace}-${threads}` : undefined;
        const result = await benchUi({ threads, browser, trace, traceJs: values['trace-js'] ?? false });
        process.stdout.write(JSON.stringify(result) + '\n');
      }
    } finally {
      await browser.close();
    }
  })().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`bench ui: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
