// Role secrets at rest (docs/security.md, "Secrets at rest"). The roles store seals a
// role's environment values and API key with the installation's SecretBox before it
// writes them and opens them after it reads them; names and everything else stay
// readable. The desktop app's box is Electron's safeStorage (the OS keychain's key);
// `parley serve` has none, and its secrets stay in the database as written.
import type { Db } from './database';

export interface SecretBox {
  /** What protects the secrets: `os-keychain` (safeStorage), or `none`. */
  readonly protection: 'os-keychain' | 'none';
  encrypt(plain: string): Buffer;
  /** Throws when the value cannot be opened (another machine's or another user's keychain). */
  decrypt(sealed: Buffer): string;
}

/** A sealed value as it sits in the database, so a plain one is told apart without guessing. */
const SEALED = 'sealed:v1:';
/** Put before a plain value that would otherwise read as sealed (it starts with SEALED). */
const ESCAPE = 'plain:';

const boxes = new WeakMap<Db, SecretBox>();

/** The box for this database's secrets from now on; without one they are stored as written. */
export function useSecretBox(db: Db, box: SecretBox): void {
  boxes.set(db, box);
}

export const isSealed = (stored: string) => stored.startsWith(SEALED);

const needsEscape = (value: string): boolean =>
  value.startsWith(SEALED) || (value.startsWith(ESCAPE) && needsEscape(value.slice(ESCAPE.length)));

/** True when secrets written now are sealed. */
export function sealsSecrets(db: Db): boolean {
  return (boxes.get(db)?.protection ?? 'none') !== 'none';
}

/** The value to store: sealed when the database has a box that protects, else as it is. */
export function storeSecret(db: Db, plain: string): string {
  const box = boxes.get(db);
  if (box && box.protection !== 'none') return SEALED + box.encrypt(plain).toString('base64');
  return needsEscape(plain) ? ESCAPE + plain : plain;
}

/** The stored value opened, or null when it is sealed and cannot be opened here. */
export function readSecret(db: Db, stored: string): string | null {
  if (!isSealed(stored))
    return stored.startsWith(ESCAPE) && needsEscape(stored.slice(ESCAPE.length)) ? stored.slice(ESCAPE.length) : stored;
  const box = boxes.get(db);
  if (!box || box.protection === 'none') return null;
  try {
    return box.decrypt(Buffer.from(stored.slice(SEALED.length), 'base64'));
  } catch {
    return null;
  }
}
