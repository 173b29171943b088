// An axe-core scan (WCAG 2.x A and AA, contrast included) of parts of a page, for the
// UI tests. axe is evaluated through the DevTools protocol, which the page's CSP does
// not govern, so pages are scanned as people get them.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { root } from './ui-harness';

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown; failureSummary?: string }>;
}

let source: string | null = null;

/** The violations in the elements matching `include` (CSS selectors), or in the whole page. */
export async function axeViolations(page: Page, include?: string[]): Promise<AxeViolation[]> {
  source ??= readFileSync(path.join(root, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(source);
  await page.evaluate(() => document.fonts.ready.then(() => undefined));
  return page.evaluate(async (selectors) => {
    const axe = (window as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<unknown> } }).axe;
    const context = selectors ? { include: selectors.map((s) => [s]) } : document;
    const result = (await axe.run(context, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
      resultTypes: ['violations'],
    })) as { violations: AxeViolation[] };
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  }, include ?? null);
}

/** One line per violation and element, for a failure message people can act on. */
export function describeViolations(violations: AxeViolation[]): string {
  return violations
    .flatMap((v) =>
      v.nodes.map((n) => `${v.id} (${v.impact}): ${v.help} — ${JSON.stringify(n.target)}: ${n.failureSummary ?? ''}`),
    )
    .join('\n');
}

/** Scans `include` in light and in dark; returns every violation, each named with its scheme. */
export async function axeInBothSchemes(page: Page, include?: string[]): Promise<string> {
  const found: string[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    const violations = await axeViolations(page, include);
    if (violations.length > 0) found.push(`${scheme}:\n${describeViolations(violations)}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return found.join('\n');
}
