import type { Db } from '../database';

/** Stands for migration 16, which the approvals branch brings to main, so that 17 has its number; dropped then. */
export function placeholder16(_db: Db): void {}
