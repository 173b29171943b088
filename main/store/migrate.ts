// Schema migrations in the style of Signal Desktop: one file per version, one
// function each, applied in order inside one transaction, the version kept in
// PRAGMA user_version. A database written by a newer Parley is refused rather
// than guessed at.
//
// A migration that rebuilds tables declares `foreignKeys: 'off'`: SQLite's rebuild
// procedure drops tables that others refer to, and with foreign keys on, a DROP TABLE
// runs their cascades. The pragma cannot change inside a transaction, so the whole run
// goes with foreign keys off, and every foreign key is checked before it commits: a
// step that left a dangling reference rolls the run back instead.
import { StartupError } from '../startup-error';
import type { Db } from './database';
import { migrations, type Migration } from './migrations';

export class NewerDatabaseError extends StartupError {
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
  const steps: Migration[] = [];
  for (let version = current + 1; version <= target; version++) {
    const step = registry[version - 1];
    if (!step || step.version !== version) throw new Error(`migration ${version} is missing from the registry`);
    steps.push(step);
  }
  const keysOff = steps.some((step) => step.foreignKeys === 'off') && foreignKeysOn(db);
  if (keysOff) {
    db.pragma('foreign_keys = OFF');
    if (foreignKeysOn(db))
      throw new Error('foreign keys could not be turned off for a migration (inside a transaction?)');
  }
  try {
    db.transaction(() => {
      for (const step of steps) {
        step.up(db);
        db.pragma(`user_version = ${step.version}`);
      }
      if (keysOff) {
        const broken = db.pragma('foreign_key_check') as Array<{ table: string; rowid: number; parent: string }>;
        if (broken.length > 0) {
          const first = broken[0]!;
          throw new Error(
            `a migration left ${broken.length} row(s) pointing at missing rows (first: ${first.table} row ${first.rowid} → ${first.parent}); nothing was changed`,
          );
        }
      }
    }).immediate();
  } finally {
    if (keysOff) db.pragma('foreign_keys = ON');
  }
}

function foreignKeysOn(db: Db): boolean {
  return db.pragma('foreign_keys', { simple: true }) === 1;
}
