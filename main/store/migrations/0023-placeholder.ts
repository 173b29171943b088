import type { Db } from '../database';

/** Stands for migration 23, which another branch brings to main, so that 25 has its number; dropped then. */
export function placeholder23(_db: Db): void {}
