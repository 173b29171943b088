// The installation's identity: a key pair and a self-signed certificate made at
// first run. The certificate's SHA-256 fingerprint is the installation ID that peers
// pin; the files are readable only by the user. Once peers have pinned it, losing it
// breaks every pairing, so a missing or damaged identity is never replaced by itself:
// the start stops and says which file to restore.
import { createHash, createPrivateKey, hkdfSync, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import selfsigned from 'selfsigned';
import { StartupError } from '../startup-error';

export interface Identity {
  /** PEM private key. */
  key: string;
  /** PEM certificate. */
  cert: string;
  /** SHA-256 of the certificate's DER, lowercase hex: the installation ID. */
  fingerprint: string;
}

export function fingerprintOf(certPem: string): string {
  const der = new X509Certificate(certPem).raw;
  return createHash('sha256').update(der).digest('hex');
}

/** HKDF's info for the DHT key pair's seed: a key of its own, never the TLS key itself. */
const DHT_SEED_INFO = 'parley dht key pair v1';

/**
 * The seed of the installation's DHT key pair, derived from its TLS private key, so the
 * identity folder stays the one thing to back up and the DHT key lives and dies with it.
 */
export function dhtSeed(identity: Pick<Identity, 'key'>): Buffer {
  return seedOf(identity, DHT_SEED_INFO);
}

/** HKDF's info for the blind relay's key pair: a relay's key says nothing of the installation's DHT key. */
const RELAY_SEED_INFO = 'parley relay key pair v1';

/** The seed of the key pair the installation's blind relay listens under (`parley serve --relay`). */
export function relaySeed(identity: Pick<Identity, 'key'>): Buffer {
  return seedOf(identity, RELAY_SEED_INFO);
}

function seedOf(identity: Pick<Identity, 'key'>, info: string): Buffer {
  const der = createPrivateKey(identity.key).export({ type: 'pkcs8', format: 'der' });
  return Buffer.from(hkdfSync('sha256', der, Buffer.alloc(0), info, 32));
}

export function identityFiles(dataDir: string): { dir: string; key: string; cert: string } {
  const dir = path.join(dataDir, 'identity');
  return { dir, key: path.join(dir, 'key.pem'), cert: path.join(dir, 'cert.pem') };
}

/** Whether any file of an identity is in the data folder. */
export function hasIdentityFiles(dataDir: string): boolean {
  const files = identityFiles(dataDir);
  return existsSync(files.key) || existsSync(files.cert);
}

/**
 * The identity in the data folder; null when it has none at all. A key without its
 * certificate (or the other way round), a file that does not parse, or a key that is
 * not the certificate's is a StartupError naming the file.
 */
export function loadIdentity(dataDir: string): Identity | null {
  const files = identityFiles(dataDir);
  const haveKey = existsSync(files.key);
  const haveCert = existsSync(files.cert);
  if (!haveKey && !haveCert) return null;
  const restore =
    'Restore the identity folder from a backup of this data folder; a new identity would break the pairing with every peer.';
  if (!haveKey || !haveCert)
    throw new StartupError(`${haveKey ? files.cert : files.key} is missing (its pair is there). ${restore}`);
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw new StartupError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`);
    }
  };
  const key = read(files.key);
  const cert = read(files.cert);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    throw new StartupError(`${files.cert} is damaged: it is not a PEM certificate. ${restore}`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new StartupError(`${files.key} is damaged: it is not a PEM private key. ${restore}`);
  }
  if (!certificate.checkPrivateKey(privateKey))
    throw new StartupError(
      `${files.key} is not the key of ${files.cert}: the two files do not belong together. ${restore}`,
    );
  return { key, cert, fingerprint: fingerprintOf(cert) };
}

/** Makes a new identity, replacing any partial one (only for an installation no peer knows yet). */
export async function createIdentity(dataDir: string, commonName: string): Promise<Identity> {
  const files = identityFiles(dataDir);
  mkdirSync(files.dir, { recursive: true, mode: 0o700 });
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(notBefore);
  notAfter.setFullYear(notAfter.getFullYear() + 20);
  const pems = await selfsigned.generate([{ name: 'commonName', value: commonName.slice(0, 64) || 'parley' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: notBefore,
    notAfterDate: notAfter,
    clientCertificate: false,
  });
  // Written with 0600 from the start, never world-readable even for an instant, and each
  // whole or not at all (a full disk or a crash leaves no half-written file).
  for (const [file, pem] of [
    [files.key, pems.private],
    [files.cert, pems.cert],
  ] as const) {
    const partial = `${file}.partial`;
    writeFileSync(partial, pem, { mode: 0o600 });
    chmodSync(partial, 0o600);
    renameSync(partial, file);
  }
  return { key: pems.private, cert: pems.cert, fingerprint: fingerprintOf(pems.cert) };
}

/** The identity in the data folder, made on first use. */
export async function loadOrCreateIdentity(dataDir: string, commonName: string): Promise<Identity> {
  return loadIdentity(dataDir) ?? createIdentity(dataDir, commonName);
}
