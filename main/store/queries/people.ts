import type { Person, PersonKind } from '../../../shared/domain';
import type { Db } from '../database';
import { all, get, insert, run } from '../sql';

interface PersonRow {
  id: number;
  name: string;
  kind: PersonKind;
  created_at: string;
}

const toPerson = (row: PersonRow): Person => ({
  id: row.id,
  name: row.name,
  kind: row.kind,
  createdAt: row.created_at,
});

export function listPeople(db: Db): Person[] {
  return all<PersonRow>(db, 'SELECT * FROM people ORDER BY id').map(toPerson);
}

export function getPerson(db: Db, id: number): Person | undefined {
  const row = get<PersonRow>(db, 'SELECT * FROM people WHERE id = ?', id);
  return row && toPerson(row);
}

export function insertPerson(db: Db, name: string, kind: PersonKind): Person {
  const id = insert(db, 'INSERT INTO people (name, kind) VALUES (?, ?)', name, kind);
  return getPerson(db, id)!;
}

export function deletePerson(db: Db, id: number): void {
  run(db, 'DELETE FROM people WHERE id = ?', id);
}

export function countOwners(db: Db): number {
  return get<{ n: number }>(db, "SELECT count(*) AS n FROM people WHERE kind = 'owner'")!.n;
}

export function firstOwner(db: Db): Person | undefined {
  const row = get<PersonRow>(db, "SELECT * FROM people WHERE kind = 'owner' ORDER BY id LIMIT 1");
  return row && toPerson(row);
}

export function insertSignInToken(db: Db, personId: number, tokenHash: string, label: string): void {
  run(db, 'INSERT INTO sign_in_tokens (person_id, token_hash, label) VALUES (?, ?, ?)', personId, tokenHash, label);
}

/** Deletes a person's sign-in tokens (those with `label`, or all); returns their row ids. */
export function deleteSignInTokens(db: Db, personId: number, label?: string): number[] {
  return (
    label === undefined
      ? all<{ id: number }>(db, 'DELETE FROM sign_in_tokens WHERE person_id = ? RETURNING id', personId)
      : all<{ id: number }>(
          db,
          'DELETE FROM sign_in_tokens WHERE person_id = ? AND label = ? RETURNING id',
          personId,
          label,
        )
  ).map((row) => row.id);
}

/** The sign-in token with this hash (its row id) and its person. */
export function signInByTokenHash(db: Db, tokenHash: string): { tokenId: number; person: Person } | undefined {
  const row = get<PersonRow & { token_id: number }>(
    db,
    'SELECT people.*, sign_in_tokens.id AS token_id FROM sign_in_tokens JOIN people ON people.id = sign_in_tokens.person_id WHERE token_hash = ?',
    tokenHash,
  );
  return row && { tokenId: row.token_id, person: toPerson(row) };
}

/** The person a sign-in token (by row id) belongs to, while it exists. */
export function personBySignInToken(db: Db, tokenId: number): Person | undefined {
  const row = get<PersonRow>(
    db,
    'SELECT people.* FROM sign_in_tokens JOIN people ON people.id = sign_in_tokens.person_id WHERE sign_in_tokens.id = ?',
    tokenId,
  );
  return row && toPerson(row);
}
