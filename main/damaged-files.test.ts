// A damaged or missing database or identity never starts a fresh installation or a new
// identity behind the owner's back (every peer would break): `parley serve` stops with
// a message naming the file and what to do, exits non-zero and changes nothing.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createIdentity } from './engine/identity';
import { makeDataDir, removeDataDir, runServeToExit, startServe } from '../test-support/serve-process';

/** A data folder of an installation that ran, with a role and a message, and stopped cleanly. */
async function usedDataDir(): Promise<{ dir: string; fingerprint: string }> {
  const serve = await startServe({ name: 'alice' });
  const owner = await serve.connect();
  const role = await owner.call('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
  const conversation = await owner.call('conversations.open', { roleId: role.id });
  await owner.call('conversations.send', { id: conversation.id, text: 'remember me' });
  const { installation } = await owner.call('session.whoami', {});
  await serve.stop();
  return { dir: serve.dataDir, fingerprint: installation.id };
}

/** Everything in the folder, by name, with its bytes, to show a refused start changed nothing. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (sub: string) => {
    for (const entry of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const name = path.join(sub, entry.name);
      if (entry.isDirectory()) walk(name);
      else if (entry.isFile()) files[name] = readFileSync(path.join(dir, name)).toString('base64');
    }
  };
  walk('.');
  return files;
}

async function expectRefusedStart(dir: string, message: RegExp) {
  const before = snapshot(dir);
  const result = await runServeToExit(['--data', dir, '--name', 'alice']);
  expect(result.stdout, 'it must not start').not.toContain('#token=');
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(message);
  // A message for people, not a stack trace.
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(snapshot(dir)).toEqual(before);
}

describe('damaged files', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) removeDataDir(dir);
  });
  const used = async () => {
    const data = await usedDataDir();
    dirs.push(data.dir);
    return data;
  };

  it('refuses a database file that is not a database', async () => {
    const dir = makeDataDir('parley-damaged-');
    dirs.push(dir);
    writeFileSync(path.join(dir, 'parley.db'), randomBytes(8192));
    await expectRefusedStart(dir, new RegExp(`${path.join(dir, 'parley.db')} is damaged \\(file is not a database\\)`));
    expect(existsSync(path.join(dir, 'identity'))).toBe(false);
  }, 60_000);

  it('refuses a database that fails quick_check, naming the file and what to do', async () => {
    const { dir } = await used();
    const file = path.join(dir, 'parley.db');
    const db = new Database(file);
    const { rootpage } = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'messages'").get() as {
      rootpage: number;
    };
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    db.close();
    // The messages' page: its cell pointers point nowhere. The file opens; quick_check finds it.
    const bytes = readFileSync(file);
    const page = (rootpage - 1) * pageSize;
    bytes.fill(0x41, page + 8, page + 12);
    writeFileSync(file, bytes);
    await expectRefusedStart(
      dir,
      /parley\.db is damaged \(SQLite's quick_check: .*out of range.*\)\. Parley did not start and changed nothing\. Restore the file from a backup/,
    );
  }, 60_000);

  it('refuses to start when the identity is missing but the database knows this installation', async () => {
    const { dir, fingerprint } = await used();
    rmSync(path.join(dir, 'identity'), { recursive: true });
    await expectRefusedStart(
      dir,
      new RegExp(
        `identity/key\\.pem and .*identity/cert\\.pem are missing, but the database belongs to installation ${fingerprint.slice(0, 16)}`,
      ),
    );
    expect(existsSync(path.join(dir, 'identity'))).toBe(false);
  }, 60_000);

  it('refuses a damaged certificate, a key without its certificate, and a key of another identity', async () => {
    const { dir } = await used();
    const cert = path.join(dir, 'identity', 'cert.pem');
    const key = path.join(dir, 'identity', 'key.pem');
    const goodCert = readFileSync(cert);
    writeFileSync(cert, '-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n');
    await expectRefusedStart(dir, /identity\/cert\.pem is damaged: it is not a PEM certificate/);
    rmSync(cert);
    await expectRefusedStart(dir, /identity\/cert\.pem is missing \(its pair is there\)/);
    writeFileSync(cert, goodCert, { mode: 0o600 });
    const otherDir = makeDataDir('parley-other-');
    dirs.push(otherDir);
    writeFileSync(key, (await createIdentity(otherDir, 'other')).key, { mode: 0o600 });
    await expectRefusedStart(dir, /identity\/key\.pem is not the key of .*cert\.pem/);
  }, 60_000);

  it('refuses an identity that is not the database’s installation', async () => {
    const { dir } = await used();
    const otherDir = makeDataDir('parley-other-');
    dirs.push(otherDir);
    const other = await createIdentity(otherDir, 'other');
    writeFileSync(path.join(dir, 'identity', 'key.pem'), other.key, { mode: 0o600 });
    writeFileSync(path.join(dir, 'identity', 'cert.pem'), other.cert, { mode: 0o600 });
    await expectRefusedStart(dir, /is the identity of .*, but the database belongs to installation/);
  }, 60_000);

  it('refuses a missing database while the identity is there', async () => {
    const { dir } = await used();
    renameSync(path.join(dir, 'parley.db'), path.join(dir, 'moved-away.db'));
    await expectRefusedStart(
      dir,
      /parley\.db is missing, but .*identity holds the identity peers know this installation by/,
    );
  }, 60_000);

  it('starts as before from an intact folder, with the same identity and history', async () => {
    const { dir, fingerprint } = await used();
    const mode = statSync(path.join(dir, 'identity', 'key.pem')).mode & 0o777;
    const serve = await startServe({ name: 'alice', dataDir: dir });
    try {
      const owner = await serve.connect();
      expect((await owner.call('session.whoami', {})).installation.id).toBe(fingerprint);
      const [conversation] = await owner.call('conversations.list', {});
      const detail = await owner.call('conversations.get', { id: conversation!.id });
      expect(detail.messages.map((m) => m.body)).toContain('remember me');
    } finally {
      await serve.stop();
    }
    expect(mode).toBe(0o600);
  }, 60_000);
});
