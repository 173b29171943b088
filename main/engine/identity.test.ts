import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import { dhtKeyPair } from './dht-carrier';
import { dhtSeed, fingerprintOf, loadOrCreateIdentity, relaySeed } from './identity';

describe('identity', () => {
  const dirs: string[] = [];
  let t: TestInstallation | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('makes a key pair and a self-signed certificate at first run, readable only by the user', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-identity-'));
    dirs.push(dir);
    const identity = await loadOrCreateIdentity(dir, 'alice');
    for (const file of ['key.pem', 'cert.pem'])
      expect(statSync(path.join(dir, 'identity', file)).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(dir, 'identity')).mode & 0o777).toBe(0o700);
    const cert = new X509Certificate(identity.cert);
    expect(cert.subject).toContain('CN=alice');
    expect(cert.checkPrivateKey(await import('node:crypto').then((c) => c.createPrivateKey(identity.key)))).toBe(true);
    expect(identity.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(fingerprintOf(identity.cert)).toBe(identity.fingerprint);
    // The same identity comes back on the next start.
    expect(await loadOrCreateIdentity(dir, 'renamed')).toEqual(identity);
  });

  it('derives the DHT key pair from the TLS key: the same after a restart, another for another identity, never the TLS key', async () => {
    const [one, two] = [0, 1].map(() => mkdtempSync(path.join(os.tmpdir(), 'parley-identity-')));
    dirs.push(one!, two!);
    const alice = await loadOrCreateIdentity(one!, 'alice');
    const again = await loadOrCreateIdentity(one!, 'alice');
    const bob = await loadOrCreateIdentity(two!, 'alice');
    const key = dhtKeyPair(alice).publicKey.toString('hex');
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(dhtKeyPair(again).publicKey.toString('hex')).toBe(key);
    expect(dhtKeyPair(bob).publicKey.toString('hex')).not.toBe(key);
    // The seed is HKDF output, not a slice of the private key's bytes.
    const der = (await import('node:crypto')).createPrivateKey(alice.key).export({ type: 'pkcs8', format: 'der' });
    expect(der.includes(dhtSeed(alice))).toBe(false);
    // The blind relay's key is derived with another info string: it is not the DHT key.
    expect(relaySeed(alice).equals(relaySeed(again))).toBe(true);
    expect(relaySeed(alice).equals(dhtSeed(alice))).toBe(false);
    expect(der.includes(relaySeed(alice))).toBe(false);
  });

  it('names the installation by its certificate fingerprint, makes the first person an owner, and keeps both across restarts', async () => {
    t = await openTestInstallation({ name: 'alice' });
    const who = await t.owner('session.whoami', {});
    expect(who.person).toMatchObject({ name: 'alice', kind: 'owner' });
    expect(who.installation.id).toBe(t.installation.identity.fingerprint);
    expect(statSync(path.join(t.installation.dataDir, 'parley.db')).mode & 0o777).toBe(0o600);
    t = await t.restart();
    const again = await t.owner('session.whoami', {});
    expect(again).toEqual(who);
    expect(await t.owner('people.list', {})).toHaveLength(1);
  });
});
