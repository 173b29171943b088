// The role API's refusals as the `parley` CLI and `parley mcp` see them: stable codes,
// one exit code each, and the error class both clients throw. No schema library here:
// the CLI loads this on every agent action.

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
