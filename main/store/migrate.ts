// Schema migrations in the style of Signal Desktop: one file per version, one
// function each, applied in order inside one transaction, the version kept in
// PRAGMA user_version. A database written by a newer Parley is refused rather
// than guessed at.
import type { Db } from './database';
import { migrations, type Migration } from './migrations';

export class NewerDatabaseError extends Error {
  constructor(found: number, known: number) {
    super(
      `This data folder was written by a newer version of Parley (schema ${found}; this version knows up to ${known}). ` +
        'Update Parley, or start it with a different data folder.',
    );
    this.name = 'NewerDatabaseError';
  }
}

export function schemaVersion(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}

export const latestVersion = migrations.length;

export function migrate(db: Db, target: number = latestVersion, registry: readonly Migration[] = migrations): void {
  const current = schemaVersion(db);
  if (current > registry.length) throw new NewerDatabaseError(current, registry.length);
  if (current >= target) return;
  db.transaction(() => {
    for (let version = current + 1; version <= target; version++) {
      const step = registry[version - 1];
      if (!step || step.version !== version) throw new Error(`migration ${version} is missing from the registry`);
      step.up(db);
      db.pragma(`user_version = ${version}`);
    }
  }).immediate();
}
