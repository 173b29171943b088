// Secrets handed to people and agents. Only their SHA-256 is stored: a copy of the
// database does not let anyone sign in or act as a run.
import { createHash, randomBytes } from 'node:crypto';

export function newToken(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
