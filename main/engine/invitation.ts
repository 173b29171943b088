// Invitations: what one owner hands another to pair two installations. The code
// carries where the inviter is reached (its DHT key, and an address when it has one),
// its certificate fingerprint and name, a one-time secret and an expiry; the secret is
// stored only as a hash. Version 2 codes (an address and no DHT key) are still taken.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

export const INVITE_LINK_PREFIX = 'parley://invite/';

const address = z.string().regex(/^[^\s/]+:\d{1,5}$/, 'not a host:port address');
const common = {
  name: z.string().min(1).max(80),
  fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
  secret: z.string().min(16).max(200),
  expires: z.string().datetime(),
};
const dhtKey = z.string().regex(/^[0-9a-f]{64}$/);

const inviteV2 = z.strictObject({ v: z.literal(2), address, ...common });
const inviteV3 = z.strictObject({
  v: z.literal(3),
  ...common,
  dht: dhtKey,
  address: address.optional(),
  /** The inviter's relays (their DHT keys), tried only when holepunching fails. */
  relays: z.array(dhtKey).max(8).optional(),
});
const inviteSchema = z.discriminatedUnion('v', [inviteV2, inviteV3]);
export type Invite = z.infer<typeof inviteSchema>;

export function newInviteSecret(): string {
  return randomBytes(24).toString('base64url');
}

export function encodeInvite(invite: Invite): { code: string; link: string } {
  const code = Buffer.from(JSON.stringify(invite), 'utf8').toString('base64url');
  return { code, link: `${INVITE_LINK_PREFIX}${code}` };
}

export class InvalidInvite extends Error {}

/** Accepts the pasteable code or the parley:// link, with whitespace around it. */
export function decodeInvite(text: string): Invite {
  const trimmed = text.trim();
  const code = trimmed.startsWith(INVITE_LINK_PREFIX) ? trimmed.slice(INVITE_LINK_PREFIX.length) : trimmed;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(code, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidInvite('this is not a Parley invitation code');
  }
  const parsed = inviteSchema.safeParse(json);
  if (!parsed.success)
    throw new InvalidInvite('this is not a Parley invitation code (or it comes from another version of Parley)');
  return parsed.data;
}
