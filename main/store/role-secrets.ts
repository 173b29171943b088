// Which parts of a role's agent settings are secrets — `env` values and the API key —
// sealed and opened with the database's SecretBox (./secret-box.ts). A sealed value
// that cannot be opened here (the data folder was copied to another machine, or opened
// by `parley serve`) reads as not set: the role still works, and Settings shows the key
// or variable as missing, for an owner to give again.
import { log } from '../log';
import type { Db } from './database';
import { isSealed, readSecret, storeSecret } from './secret-box';

type Settings = Record<string, unknown>;

function mapSecrets(agent: Settings, map: (value: string, name: string) => string | null): Settings {
  const next: Settings = { ...agent };
  if (typeof next.apiKey === 'string') {
    const value = map(next.apiKey, 'apiKey');
    if (value === null) delete next.apiKey;
    else next.apiKey = value;
  }
  if (next.env && typeof next.env === 'object') {
    const env: Record<string, unknown> = {};
    for (const [name, raw] of Object.entries(next.env as Record<string, unknown>)) {
      if (typeof raw !== 'string') {
        env[name] = raw;
        continue;
      }
      const value = map(raw, `env.${name}`);
      if (value !== null) env[name] = value;
    }
    next.env = env;
  }
  return next;
}

/** Agent settings as they are written: secrets sealed when the database has a box. */
export function sealAgentSecrets<T extends object>(db: Db, agent: T): T {
  return mapSecrets(agent as Settings, (value) => storeSecret(db, value)) as T;
}

/** Agent settings as read back (before validation): secrets opened, unreadable ones left out. */
export function openAgentSecrets(db: Db, agent: unknown, roleName: string): unknown {
  if (!agent || typeof agent !== 'object') return agent;
  return mapSecrets(agent as Settings, (value, name) => {
    const opened = readSecret(db, value);
    if (opened === null)
      log.warn('a role secret cannot be opened here and reads as not set', { role: roleName, secret: name });
    return opened;
  });
}

/** Stored settings with every secret that is not sealed yet sealed (when the box seals); null when none needed it. */
export function resealAgentSecrets(db: Db, stored: unknown): object | null {
  if (!stored || typeof stored !== 'object') return null;
  let changed = false;
  const next = mapSecrets(stored as Settings, (value) => {
    if (isSealed(value)) return value;
    const plain = readSecret(db, value)!;
    const sealed = storeSecret(db, plain);
    if (sealed !== value) changed = true;
    return sealed;
  });
  return changed ? next : null;
}
