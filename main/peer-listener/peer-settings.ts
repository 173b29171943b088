// Where this installation listens for peers and what its invitations tell them to dial:
// the settings and the decisions about them, as pure functions (the I/O is in
// ./peer-network.ts). An invitation never carries a wildcard address (0.0.0.0, ::): a
// peer cannot dial "every interface".
import { isIP } from 'node:net';
import { z } from 'zod';

export interface PeerSettings {
  /** The interface to listen on: 127.0.0.1 (this computer only), 0.0.0.0 or :: (every network), or one address. */
  listenHost: string;
  /** 0 picks a free port; the desktop app then remembers the one it got. */
  port: number;
  /** `HOST` or `HOST:PORT` for invitations; null: the listen address and port. */
  advertise: string | null;
}

/** A first start of the desktop app: only this computer, on a port picked once. */
export const DEFAULT_PEER_SETTINGS: PeerSettings = { listenHost: '127.0.0.1', port: 0, advertise: null };

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

export const isWildcard = (host: string) => WILDCARDS.has(host);

export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

/** host:port with IPv6 hosts in brackets, as invitations and URLs write it. */
export function joinHostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/** `HOST`, `HOST:PORT` or `[V6]:PORT` → its parts; null when it is none of those. */
export function splitAddress(address: string): { host: string; port: number | null } | null {
  const v6 = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(address);
  if (v6) return isIP(v6[1]!) === 6 ? { host: v6[1]!, port: v6[2] === undefined ? null : Number(v6[2]) } : null;
  if (isIP(address) === 6) return { host: address, port: null };
  const plain = /^([^\s:/[\]]+)(?::(\d{1,5}))?$/.exec(address);
  if (!plain) return null;
  return { host: plain[1]!, port: plain[2] === undefined ? null : Number(plain[2]) };
}

const HOSTNAME =
  /^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

export type SettingsProblem = { field: keyof PeerSettings; message: string };

/** The first thing wrong with these settings, in words for the person who typed them; null when they are fine. */
export function settingsProblem(settings: PeerSettings): SettingsProblem | null {
  const { listenHost, port, advertise } = settings;
  if (!(listenHost === 'localhost' || isIP(listenHost) !== 0))
    return { field: 'listenHost', message: 'the listen address must be an IP address such as 127.0.0.1 or 0.0.0.0' };
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    return { field: 'port', message: 'the port must be a whole number from 1 to 65535 (or 0 for any free port)' };
  if (advertise !== null) {
    const parts = splitAddress(advertise);
    if (!parts || !(isIP(parts.host) !== 0 || HOSTNAME.test(parts.host)))
      return {
        field: 'advertise',
        message: 'the advertised address must be HOST or HOST:PORT, such as 192.0.2.7:4180',
      };
    if (isWildcard(parts.host))
      return {
        field: 'advertise',
        message: `${parts.host} means "every interface" and cannot be dialled: advertise an address peers can reach`,
      };
    if (parts.port !== null && (parts.port < 1 || parts.port > 65535))
      return { field: 'advertise', message: 'the advertised port must be from 1 to 65535' };
  } else if (isWildcard(listenHost)) {
    return {
      field: 'advertise',
      message: `listening on ${listenHost} (every network) needs an advertised address: the one peers should dial`,
    };
  }
  return null;
}

/** What invitations carry once the listener got `boundPort`; null when there is nothing peers could dial. */
export function invitationAddress(settings: PeerSettings, boundPort: number | null): string | null {
  if (boundPort === null) return null;
  if (settings.advertise !== null) {
    const parts = splitAddress(settings.advertise);
    if (!parts || isWildcard(parts.host)) return null;
    return joinHostPort(parts.host, parts.port ?? boundPort);
  }
  if (isWildcard(settings.listenHost)) return null;
  return joinHostPort(settings.listenHost, boundPort);
}

/** Remembered settings as read back from the database; anything damaged falls back to the defaults. */
export const storedPeerSettings = z.strictObject({
  listenHost: z.string().min(1).max(100),
  port: z.number().int().min(0).max(65535),
  advertise: z.string().min(1).max(300).nullable(),
});

export function readStoredSettings(value: unknown): PeerSettings | null {
  const parsed = storedPeerSettings.safeParse(value);
  if (!parsed.success || settingsProblem(parsed.data)) return null;
  return parsed.data;
}
