// What Parley told an agent in a turn: the notices that turn took, read from the store, for
// tests that check the agent was told without reading its reply.
import type { Db } from '../main/store/database';

export function noticesTakenBy(db: Db, turnId: number): string[] {
  return (
    db.prepare("SELECT body FROM inputs WHERE kind = 'notice' AND turn_id = ? ORDER BY id").all(turnId) as Array<{
      body: string;
    }>
  ).map((row) => row.body);
}
