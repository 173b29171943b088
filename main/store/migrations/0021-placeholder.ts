import type { Db } from '../database';

/** Stands for migration 21, which another branch brings to main, so that 25 has its number; dropped then. */
export function placeholder21(_db: Db): void {}
