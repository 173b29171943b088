import type { Db } from '../database';

/** Stands for migration 17, which the attention branch brings to main, so that 18 has its number; dropped then. */
export function placeholder17(_db: Db): void {}
