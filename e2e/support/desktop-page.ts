// The real renderer page in Chromium, served by a desktop main process (under the
// stand-in electron module): every request of the page goes through that process's
// app:// protocol handler, headers and all (so the page runs under the desktop CSP),
// and `window.parley` is a bridge that does what preload/preload.ts does, with calls
// going to the process's real IPC handler as the window's main frame.
//
// Chromium cannot load a scheme it does not know, so the page lives at
// https://parley.invalid/ and each of its requests is answered from app://parley/.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { AppEvent } from '../../shared/api-contract';
import type { DesktopProcess } from '../../test-support/desktop-process';
import { DESKTOP } from './ui-harness';

// https: a secure origin, as app:// is registered to be.
const ORIGIN = 'https://parley.invalid';

export interface DesktopPage {
  page: Page;
  context: BrowserContext;
  problems: string[];
  close(): Promise<void>;
}

declare global {
  interface Window {
    __parleyInvoke?: (method: unknown, params: unknown) => Promise<unknown>;
    __parleyListening?: () => Promise<void>;
    __parleyDeliver?: (event: AppEvent) => void;
  }
}

/** Mirrors preload/preload.ts: invoke unwraps the envelope, onEvent tells main the page listens. */
function bridge(): void {
  const listeners = new Set<(event: AppEvent) => void>();
  window.__parleyDeliver = (event) => {
    for (const listener of listeners) listener(event);
  };
  Object.defineProperty(window, 'parley', {
    value: Object.freeze({
      async invoke(method: string, params: unknown) {
        const envelope = (await window.__parleyInvoke!(method, params ?? {})) as
          { ok: true; result: unknown } | { ok: false; error: { code: string; message: string } };
        if (envelope.ok) return envelope.result;
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- the preload's plain {code, message}
        throw { name: 'ApiError', code: envelope.error.code, message: envelope.error.message };
      },
      onEvent(listener: (event: AppEvent) => void) {
        listeners.add(listener);
        void window.__parleyListening!();
        return () => listeners.delete(listener);
      },
    }),
  });
}

export async function openDesktopPage(browser: Browser, desktop: DesktopProcess): Promise<DesktopPage> {
  const context = await browser.newContext({ viewport: DESKTOP, colorScheme: 'light', reducedMotion: 'reduce' });
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.origin !== ORIGIN) return route.abort('blockedbyclient');
    const answer = await desktop.fetch(`app://parley${url.pathname}`);
    await route.fulfill({ status: answer.status, headers: answer.headers, body: answer.bytes });
  });
  await context.exposeBinding('__parleyInvoke', (_source, method: unknown, params: unknown) =>
    desktop.invokeRaw(method, params),
  );
  await context.exposeBinding('__parleyListening', () => desktop.listen());
  await context.addInitScript(bridge);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  const stop = desktop.onPush((push) => {
    if (push.push === 'renderer' && push.channel === 'parley:event')
      void page.evaluate((event) => window.__parleyDeliver?.(event), push.args[0] as AppEvent).catch(() => undefined);
  });
  await page.goto(`${ORIGIN}/index.html`);
  await page.getByRole('button', { name: 'Settings', exact: true }).waitFor({ timeout: 15_000 });
  return {
    page,
    context,
    problems,
    async close() {
      stop();
      await context.close();
    },
  };
}
