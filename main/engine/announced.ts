// What a peer says about itself in its hello — its name and where to dial it — is
// the peer's word, not ours: a name may be anything (our own name, bidi overrides that
// turn text around, control characters, any length), an address anything at all. A
// name is cleaned before it names a connection, and an address is checked before
// anything dials it.
import { isIPv4, isIPv6 } from 'node:net';
import unhomoglyph from 'unhomoglyph';

/** Longest connection name, in characters. */
export const MAX_PEER_NAME_CHARS = 40;

// Controls and format characters (bidi embeddings, overrides and isolates, marks,
// zero-width characters) say nothing a name needs and can make it read as another.
const INVISIBLE = /[\p{Cc}\p{Cf}]/gu;
// PEER in PEER/ROLE is one word without "/".
const SEPARATORS = /[\s\p{Z}/]+/gu;

/** The name a connection gets from the name a peer announced: one clean word, capped. */
export function cleanPeerName(announced: string): string {
  const word = announced
    .normalize('NFC')
    .replace(INVISIBLE, '')
    .replace(SEPARATORS, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '');
  const capped = Array.from(word).slice(0, MAX_PEER_NAME_CHARS).join('').replace(/-+$/, '');
  return capped || 'peer';
}

/** Whether two names would read as the same to a person (a peer must not pass for us). */
export const sameName = (a: string, b: string): boolean =>
  a.normalize('NFC').toLocaleLowerCase() === b.normalize('NFC').toLocaleLowerCase();

/** TR39's skeleton: NFD, each confusable mapped to its prototype (Unicode's confusables.txt), NFD again. */
const skeleton = (text: string): string => unhomoglyph(text.normalize('NFD')).normalize('NFD');

/**
 * The forms a name is compared in: its skeleton after NFKC (full-width and other
 * compatibility forms) with case folded before or after the mapping, since a capital
 * can be confusable where its small letter is not (`I` reads as `l`).
 */
export function nameKeys(name: string): string[] {
  const compatible = name.normalize('NFKC');
  return [...new Set([skeleton(compatible).toLowerCase(), skeleton(compatible.toLowerCase()).toLowerCase()])];
}

export type NameClash = { name: string; ours: boolean } | null;

/** Which name a peer's name would pass for: our own, or another connection's; null when none. */
export function nameClash(candidate: string, ours: string, others: readonly string[]): NameClash {
  const keys = new Set(nameKeys(candidate));
  const reads = (name: string) => nameKeys(name).some((key) => keys.has(key));
  if (reads(ours)) return { name: ours, ours: true };
  const other = others.find(reads);
  return other === undefined ? null : { name: other, ours: false };
}

export type AddressCheck = { ok: true; address: string } | { ok: false; reason: string };

const HOSTNAME_LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

/**
 * Checks an address a peer announced (or an invitation carries): `host:port` or
 * `[ipv6]:port`, a port from 1 to 65535, a host that is a name or a unicast address —
 * never "any address" (0.0.0.0, ::), a broadcast or a multicast group.
 */
export function checkPeerAddress(address: string): AddressCheck {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(address);
  if (!match) return { ok: false, reason: 'it is not host:port' };
  const [, v6, host, portText] = match as unknown as [string, string | undefined, string | undefined, string];
  const port = Number(portText);
  if (port < 1 || port > 65535) return { ok: false, reason: `port ${portText} is out of range` };
  if (v6 !== undefined) {
    if (!isIPv6(v6)) return { ok: false, reason: `${v6} is not an IPv6 address` };
    const lower = v6.toLowerCase();
    if (/^[0:]+$/.test(lower)) return { ok: false, reason: 'it is the unspecified address' };
    if (lower.startsWith('ff')) return { ok: false, reason: 'it is a multicast address' };
    return { ok: true, address };
  }
  const name = host!;
  if (isIPv4(name)) {
    const [a, b, c, d] = name.split('.').map(Number) as [number, number, number, number];
    if (a === 0) return { ok: false, reason: 'it is the unspecified address' };
    if (a >= 224 && a <= 239) return { ok: false, reason: 'it is a multicast address' };
    if (a === 255 && b === 255 && c === 255 && d === 255) return { ok: false, reason: 'it is the broadcast address' };
    return { ok: true, address };
  }
  if (/^[\d.]+$/.test(name)) return { ok: false, reason: `${name} is not an IPv4 address` };
  const hostname = name.endsWith('.') ? name.slice(0, -1) : name;
  if (hostname.length > 253 || !hostname.split('.').every((label) => HOSTNAME_LABEL.test(label)))
    return { ok: false, reason: `${name} is not a host name` };
  return { ok: true, address };
}
