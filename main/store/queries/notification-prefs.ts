// Which notifications a person gets (migration 0027): a row per kind or connection they
// turned off (or back on); no row means they notify.
import type { Db } from '../database';
import { all, run } from '../sql';

export interface NotificationPrefRows {
  kinds: Array<{ kind: string; notify: number }>;
  connections: Array<{ id: number; name: string; notify: number }>;
}

/** One person's choices, and every connection on the list with its choice (on when none was made). */
export function notificationPrefRows(db: Db, personId: number): NotificationPrefRows {
  return {
    kinds: all(db, 'SELECT kind, notify FROM notification_prefs WHERE person_id = ? AND kind IS NOT NULL', personId),
    connections: all(
      db,
      `SELECT connections.id, connections.name, coalesce(prefs.notify, 1) AS notify
       FROM connections LEFT JOIN notification_prefs prefs
         ON prefs.connection_id = connections.id AND prefs.person_id = ?
       WHERE connections.removed_at IS NULL ORDER BY connections.name`,
      personId,
    ),
  };
}

export function setKindPref(db: Db, personId: number, kind: string, notify: boolean): void {
  run(
    db,
    `INSERT INTO notification_prefs (person_id, kind, notify) VALUES (?, ?, ?)
     ON CONFLICT (person_id, kind) WHERE kind IS NOT NULL DO UPDATE SET notify = excluded.notify`,
    personId,
    kind,
    notify ? 1 : 0,
  );
}

export function setConnectionPref(db: Db, personId: number, connectionId: number, notify: boolean): void {
  run(
    db,
    `INSERT INTO notification_prefs (person_id, connection_id, notify) VALUES (?, ?, ?)
     ON CONFLICT (person_id, connection_id) WHERE connection_id IS NOT NULL DO UPDATE SET notify = excluded.notify`,
    personId,
    connectionId,
    notify ? 1 : 0,
  );
}
