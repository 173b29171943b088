import type { Db } from '../database';

/**
 * Version 14 is the search index and its settings, on a branch of its own; this stands in
 * for it until that lands, so the versions after it are numbered as they will be.
 */
export function reservedForSearch(_db: Db): void {}
