import type { Db } from '../database';

// Versions 16 and 17 belong to changes other branches bring to main (approvals,
// attention); these stand for them until then, so that 18 has its number. Dropped when
// the real ones are here.
export function placeholder16(_db: Db): void {}
export function placeholder17(_db: Db): void {}
