// The role API between agent processes and Parley: HTTP on a Unix socket readable
// only by the user, one POST per command, the caller named by a bearer token. The
// `parley` CLI and `parley mcp` are its clients.
import { z } from 'zod';
import { multiLine } from '../../shared/domain';

/** `PEER/ROLE`: a connection's name and a role it exposes. */
export const peerRoleSchema = z
  .string()
  .regex(/^[^\s/]+\/[a-z0-9][a-z0-9_-]*$/, 'must look like PEER/ROLE, e.g. bob/researcher');

const text = multiLine(
  z.string().trim().min(1, 'text must not be empty').max(100_000, 'text is too long (100,000 characters at most)'),
);

export const roleApiRequests = {
  context: z.strictObject({}),
  report: z.strictObject({ text }),
  history: z.strictObject({ with: peerRoleSchema }),
  send: z.strictObject({ to: peerRoleSchema, text }),
  reply: z.strictObject({ text }),
  peers: z.strictObject({}),
} as const;
export type RoleApiCommand = keyof typeof roleApiRequests;

export const roleApiErrorCodes = [
  'invalid',
  'unauthenticated',
  'no_topic',
  'forbidden',
  'not_found',
  'not_exposed',
  'paused',
  'revoked',
  'queue_full',
  'budget',
  'closed',
  'unavailable',
  'disk_full',
  'internal',
] as const;
export type RoleApiErrorCode = (typeof roleApiErrorCodes)[number];

/** Each refusal has its own exit code so scripts can tell them apart. */
export const exitCodes: Record<RoleApiErrorCode | 'usage' | 'connect', number> = {
  usage: 2,
  invalid: 2,
  unauthenticated: 3,
  no_topic: 4,
  forbidden: 5,
  not_found: 6,
  not_exposed: 7,
  paused: 8,
  revoked: 9,
  queue_full: 10,
  budget: 11,
  closed: 12,
  unavailable: 13,
  connect: 14,
  disk_full: 15,
  internal: 1,
};

export type RoleApiResponse<T = unknown> =
  { ok: true; result: T } | { ok: false; error: { code: RoleApiErrorCode; message: string } };

export class RoleApiError extends Error {
  constructor(
    readonly code: RoleApiErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RoleApiError';
  }
}

export const NO_TOPIC_MESSAGE =
  'a role token without a run has no topic: only an agent working in a run can send (use a run token, given to agents in PARLEY_TOKEN)';
