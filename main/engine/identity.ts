// The installation's identity: a key pair and a self-signed certificate made at
// first run. The certificate's SHA-256 fingerprint is the installation ID that peers
// pin; the files are readable only by the user.
import { createHash, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import selfsigned from 'selfsigned';

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

export async function loadOrCreateIdentity(dataDir: string, commonName: string): Promise<Identity> {
  const dir = path.join(dataDir, 'identity');
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  if (existsSync(keyFile) && existsSync(certFile)) {
    const key = readFileSync(keyFile, 'utf8');
    const cert = readFileSync(certFile, 'utf8');
    return { key, cert, fingerprint: fingerprintOf(cert) };
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
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
  // Written with 0600 from the start, never world-readable even for an instant.
  writeFileSync(keyFile, pems.private, { mode: 0o600 });
  writeFileSync(certFile, pems.cert, { mode: 0o600 });
  chmodSync(keyFile, 0o600);
  chmodSync(certFile, 0o600);
  return { key: pems.private, cert: pems.cert, fingerprint: fingerprintOf(pems.cert) };
}
