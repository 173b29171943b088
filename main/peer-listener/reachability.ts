// Can peers reach us at the address our invitations carry? Checked from here by
// dialling it and looking for our own certificate: that proves the listener is up and
// the address leads back to this installation (not to another program on that port).
// It cannot see a firewall between us and a peer, and the message says so.
import { createHash } from 'node:crypto';
import tls from 'node:tls';
import type { Identity } from '../engine/identity';
import { splitAddress } from './peer-settings';

export interface Reachability {
  address: string;
  reachable: boolean;
  message: string;
  at: string;
}

const FROM_HERE = 'Checked from this computer: a firewall between you and a peer can still stop them.';

function explain(address: string, error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return `Nothing answers at ${address}: peers cannot connect. Is the port right, and is it forwarded to this computer?`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${address} does not resolve to any address from here: peers will not find it either.`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${address} cannot be reached from this computer.`;
    case 'ETIMEDOUT':
      return `${address} did not answer within the time allowed: a firewall may be dropping connections to it.`;
    default:
      if (error.code?.startsWith('ERR_SSL'))
        return `Something else answers at ${address} (it does not speak Parley's TLS): peers would reach it instead of you.`;
      return `Could not connect to ${address}: ${error.message}.`;
  }
}

/** Dials `address` once over TLS and reports whether this installation's certificate answered. */
export function checkReachable(
  identity: Identity,
  address: string,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<Reachability> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const at = () => new Date().toISOString();
  const parts = splitAddress(address);
  if (!parts || parts.port === null)
    return Promise.resolve({ address, reachable: false, message: `${address} is not a HOST:PORT address.`, at: at() });
  return new Promise((resolve) => {
    let settled = false;
    const finish = (reachable: boolean, message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ address, reachable, message, at: at() });
    };
    const socket = tls.connect({
      host: parts.host,
      port: parts.port!,
      key: identity.key,
      cert: identity.cert,
      // Self-signed on both sides: the fingerprint is what counts, as on the wire.
      rejectUnauthorized: false,
      minVersion: 'TLSv1.3',
      ALPNProtocols: ['http/1.1'],
    });
    const timer = setTimeout(
      () => finish(false, explain(address, Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' }))),
      timeoutMs,
    );
    timer.unref();
    options.signal?.addEventListener('abort', () => finish(false, 'The check was cancelled.'), { once: true });
    socket.once('secureConnect', () => {
      const raw = socket.getPeerCertificate(false)?.raw;
      const fingerprint = raw ? createHash('sha256').update(raw).digest('hex') : null;
      if (fingerprint === identity.fingerprint) finish(true, `This installation answers at ${address}. ${FROM_HERE}`);
      else
        finish(
          false,
          `Something else answers at ${address} (not this installation): peers would reach it instead of you.`,
        );
    });
    socket.once('error', (error: NodeJS.ErrnoException) => finish(false, explain(address, error)));
  });
}
