import type { Db } from '../database';

/**
 * Two partial indexes for what waits on people, each as small as what waits:
 *
 * - a peer's held texts by agent conversation and seq: a received text waits behind the
 *   earlier held ones of its agent conversation (order per agent conversation holds
 *   through approvals), asked for every text a turn may take, so it must not read the
 *   agent conversation's history;
 * - pending approvals by the place they wait: the list decides who reads each place
 *   once, reading the places from this index alone (`state` first, so that a query on
 *   pending ones prefers it to the older index on `state` alone).
 */
export function indexApprovalOrder(db: Db): void {
  db.exec(`
    CREATE INDEX texts_held_in ON texts(thread_id, seq) WHERE state = 'held' AND direction = 'in';
    CREATE INDEX approvals_pending_place ON approvals(state, context_kind, context_id) WHERE state = 'pending';
  `);
}
