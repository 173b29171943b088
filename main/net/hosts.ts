// Host names and addresses as Parley's servers see them: which addresses it listens
// on, which it may put in an invitation, and which Host headers its UI answers.
import { isIP } from 'node:net';

/** The address that means "every interface": fine to listen on, never one to dial. */
export function isUnspecifiedHost(host: string): boolean {
  const bare = unbracket(host);
  return bare === '0.0.0.0' || (isIP(bare) === 6 && /^[0:]+$/.test(bare));
}

export function isLoopbackHost(host: string): boolean {
  const bare = unbracket(host).toLowerCase();
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return isIP(bare) === 6 && (bare === '::1' || /^(0+:){7}0*1$/.test(bare));
}

/** host:port, with an IPv6 address in brackets. */
export function formatHostPort(host: string, port: number): string {
  const bare = unbracket(host);
  return isIP(bare) === 6 ? `[${bare}]:${port}` : `${bare}:${port}`;
}

/** A host name as DNS spells it. */
export const DNS_NAME =
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

/** Splits `HOST:PORT` (IPv6 in brackets); null when it is not one. The port must be 1–65535. */
export function parseHostPort(value: string): { host: string; port: number } | null {
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(value);
  if (!match) return null;
  const [, rawHost, rawPort] = match as unknown as [string, string, string];
  const port = Number(rawPort);
  if (port < 1 || port > 65535) return null;
  const host = unbracket(rawHost);
  if (rawHost.startsWith('[') ? isIP(host) !== 6 : isIP(host) !== 4 && !DNS_NAME.test(host)) return null;
  return { host, port };
}

/**
 * Whether a request's Host header names this UI server, listening on `bind`. Only IP
 * addresses and `localhost` are answered, never another name: a page of some other
 * site whose name was made to resolve to this machine (DNS rebinding) sends its own
 * name and is refused. Listening on every interface, any of this machine's addresses
 * is fine; otherwise the one it listens on (and, for loopback, localhost).
 */
export function hostHeaderAllowed(header: string | undefined, bind: { host: string; port: number }): boolean {
  if (!header) return false;
  const match = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(header.trim().toLowerCase());
  if (!match) return false;
  const port = match[2] === undefined ? 80 : Number(match[2]);
  if (port !== bind.port) return false;
  const named = unbracket(match[1]!);
  const bound = unbracket(bind.host).toLowerCase();
  if (named === 'localhost') return isLoopbackHost(bound) || isUnspecifiedHost(bound);
  if (isIP(named) === 0) return false;
  if (isUnspecifiedHost(bound)) return true;
  if (isLoopbackHost(bound) && isLoopbackHost(named)) return true;
  return sameAddress(named, bound);
}

function sameAddress(a: string, b: string): boolean {
  if (a === b) return true;
  // Two spellings of one IPv6 address.
  if (isIP(a) === 6 && isIP(b) === 6) return expand6(a) === expand6(b);
  return false;
}

function expand6(address: string): string {
  const [head, tail = ''] = address.split('::') as [string, string?];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = address.includes('::') ? 8 - left.length - right.length : 0;
  return [...left, ...Array<string>(missing).fill('0'), ...right].map((part) => part.padStart(4, '0')).join(':');
}

export function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
