import type { Db } from '../database';

/** Stands for migration 20, which another branch brings to main, so that the later ones keep their numbers; dropped then. */
export function placeholder20(_db: Db): void {}
