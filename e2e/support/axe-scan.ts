// The accessibility scan of a screen in both colour schemes, on the shared axe helper
// (./ui-harness: pages opened with `forAxe`).
import type { Page } from 'playwright-core';
import { axeViolations, describeViolations } from './ui-harness';

/** Scans the whole page in light and in dark; returns every violation, each named with its scheme ('' when none). */
export async function axeInBothSchemes(page: Page): Promise<string> {
  const found: string[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    const violations = await axeViolations(page);
    if (violations.length > 0) found.push(`${scheme}:\n${describeViolations(violations)}`);
  }
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'reduce' });
  return found.join('\n');
}
