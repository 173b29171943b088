// What the home page's first-run checklist is worked out from: the note first run kept
// about the default role's agent, who hid the checklist, and whether each step is done.
import { z } from 'zod';
import type { AdapterName } from '../../../shared/domain';
import type { Db } from '../database';
import { get, run } from '../sql';
import { readSetting, writeSetting } from './settings';

const NOTE_KEY = 'firstRun';

const noteSchema = z.object({
  roleId: z.number().int().positive(),
  adapter: z.string().min(1),
  found: z.string(),
});

export interface FirstRunNoteRow {
  roleId: number;
  adapter: AdapterName;
  found: string;
}

export function saveFirstRunNote(db: Db, note: FirstRunNoteRow): void {
  writeSetting(db, NOTE_KEY, note);
}

/** The note, or undefined when first run made no role (or the setting was damaged). */
export function readFirstRunNote(db: Db): FirstRunNoteRow | undefined {
  const parsed = noteSchema.safeParse(readSetting(db, NOTE_KEY));
  return parsed.success ? (parsed.data as FirstRunNoteRow) : undefined;
}

export function firstRunDismissed(db: Db, personId: number): boolean {
  return get(db, 'SELECT 1 FROM first_run_dismissals WHERE person_id = ?', personId) !== undefined;
}

export function dismissFirstRun(db: Db, personId: number): void {
  run(db, 'INSERT OR IGNORE INTO first_run_dismissals (person_id) VALUES (?)', personId);
}

/** Some turn of the role's agent finished and answered. */
export function roleHasAnswered(db: Db, roleId: number): boolean {
  return (
    get(
      db,
      "SELECT 1 FROM runs JOIN turns ON turns.run_id = runs.id WHERE runs.role_id = ? AND turns.status = 'done' LIMIT 1",
      roleId,
    ) !== undefined
  );
}

export function hasLiveConnection(db: Db): boolean {
  return get(db, "SELECT 1 FROM connections WHERE status <> 'revoked' LIMIT 1") !== undefined;
}

/** A role asked a peer on behalf of the person's conversation or of a task. */
export function personHasAsked(db: Db, personId: number): boolean {
  return (
    get(
      db,
      `SELECT 1 FROM threads th
        WHERE th.started_by = 'local' AND th.root_gone = 0
          AND (th.root_kind = 'task'
               OR (th.root_kind = 'conversation'
                   AND EXISTS (SELECT 1 FROM conversations c WHERE c.id = th.root_id AND c.person_id = ?)))
        LIMIT 1`,
      personId,
    ) !== undefined
  );
}
