import type { Db } from '../database';
import { get, run } from '../sql';

export interface InstallationRow {
  name: string;
  fingerprint: string;
  created_at: string;
}

export function getInstallation(db: Db): InstallationRow | undefined {
  return get<InstallationRow>(db, 'SELECT name, fingerprint, created_at FROM installation WHERE id = 1');
}

export function saveInstallation(db: Db, name: string, fingerprint: string): void {
  run(
    db,
    `INSERT INTO installation (id, name, fingerprint) VALUES (1, ?, ?)
     ON CONFLICT (id) DO UPDATE SET name = excluded.name, fingerprint = excluded.fingerprint`,
    name,
    fingerprint,
  );
}
