// The installation's own settings: one row per key in `settings`, the value as JSON.
import type { Db } from '../database';
import { get, run } from '../sql';

export function readSetting(db: Db, key: string): unknown {
  const row = get<{ value: string }>(db, 'SELECT value FROM settings WHERE key = ?', key);
  if (!row) return undefined;
  try {
    return JSON.parse(row.value) as unknown;
  } catch {
    return undefined; // written by hand, or damaged: treated as never set
  }
}

export function writeSetting(db: Db, key: string, value: unknown): void {
  run(
    db,
    'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    key,
    JSON.stringify(value),
  );
}
