// A test's data folders in the temp directory: made with a prefix that says whose, and
// removed with the roles' folder an installation keeps beside its data folder.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultRolesDir } from '../main/sandbox/folders';

export function makeDataDir(prefix = 'parley-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  rmSync(defaultRolesDir(dir), { recursive: true, force: true });
}
