import type { Db } from '../database';

/**
 * Two keys name an agent conversation: the opaque thread ID both installations use on
 * the wire, and the row id here. `threads.thread_id` was the first, while `thread_id`
 * everywhere else (texts) is the second; the wire one is `wire_id` from now on, so
 * `thread_id` always points at a row of `threads`.
 */
export function nameWireThreadIds(db: Db): void {
  db.exec('ALTER TABLE threads RENAME COLUMN thread_id TO wire_id');
}
