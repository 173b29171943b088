// One UI test file's scene: its installations beside one Chromium, started by the file's
// beforeAll and closed, with every page opened on them, by the afterAll this registers.
import type { Browser } from 'playwright-core';
import { afterAll } from 'vitest';
import { launchChromium, openUi, startNode, stopNodes, type Node, type OpenedPage } from './ui-harness';

export type OpenOptions = NonNullable<Parameters<typeof openUi>[2]>;

export interface UiScene<N extends string> {
  /**
   * Starts the installations, each in a data folder of its own, and the browser, at once.
   * `starters` starts one in a way of its own (a fresh first run, say).
   */
  start: (starters?: Partial<Record<N, () => Promise<Node>>>) => Promise<Record<N, Node>>;
  /** The installations and the browser; throws while they are not all started. */
  nodes: () => Record<N, Node> & { browser: Browser };
  /** The app of `node` in a page of its own, with the scene's default options under `options`. */
  open: (node: Node, options?: OpenOptions) => Promise<OpenedPage>;
  /** Closes the pages opened so far (a test that wants none of an earlier one's left open). */
  closePages: () => Promise<void>;
}

/** Call it at the top of the test file, or in its describe block: it registers the afterAll. */
export function uiScene<const N extends string>(names: readonly N[], defaults: OpenOptions = {}): UiScene<N> {
  let started: (Record<N, Node> & { browser: Browser }) | null = null;
  let browser: Browser | null = null;
  const running: Node[] = [];
  const opened: OpenedPage[] = [];

  const closePages = async () => {
    for (const { context } of opened.splice(0)) await context.close().catch(() => undefined);
  };

  afterAll(async () => {
    await closePages();
    await browser?.close();
    await stopNodes(running);
  });

  const nodes = () => {
    if (!started) throw new Error('the scene did not start: see the beforeAll’s error');
    return started;
  };

  return {
    start: async (starters = {}) => {
      const byName = {} as Record<N, Node>;
      const starting = [
        launchChromium().then((launched) => void (browser = launched)),
        ...names.map((name) =>
          (starters[name] ?? (() => startNode(name)))().then((node) => {
            running.push(node);
            byName[name] = node;
          }),
        ),
      ];
      // Whatever did start is stopped by the afterAll, even when something else failed.
      const outcomes = await Promise.allSettled(starting);
      const failed = outcomes.find((outcome) => outcome.status === 'rejected');
      if (failed) throw failed.reason;
      started = { ...byName, browser: browser! };
      return byName;
    },
    nodes,
    closePages,
    open: async (node, options = {}) => {
      const page = await openUi(nodes().browser, node, { ...defaults, ...options });
      opened.push(page);
      return page;
    },
  };
}
