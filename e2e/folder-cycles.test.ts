// The folders of main/ (and the files directly under it) form layers: no two import each
// other, directly or round about, and each belongs to a layer of eslint.config.js, so a
// new folder cannot slip past the lint rules. `npx tsx scripts/folder-edges.ts` shows the
// edges behind a failure.
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeCycles, folderEdges, parts } from '../scripts/folder-edges';

const root = fileURLToPath(new URL('..', import.meta.url));

interface Zone {
  target: string | string[];
  from: string | string[];
}

describe('main/ folders', () => {
  it('import one another without a cycle', () => {
    expect(describeCycles(folderEdges(root))).toEqual([]);
  });

  it('each sit in a layer that the lint rules know', async () => {
    const config = (await new ESLint({ cwd: root }).calculateConfigForFile('main/engine/engine.ts')) as {
      rules: Record<string, [unknown, { zones: Zone[] }]>;
    };
    const zones = config.rules['import-x/no-restricted-paths']![1].zones;
    const named = new Set(zones.flatMap((zone) => [zone.target, zone.from].flat()));
    const missing = parts(root)
      .map((part) => `./main/${part}`)
      .filter((part) => !named.has(part));
    expect(missing).toEqual([]);
  });
});
