// The engine's refusals, each with a stable code. The app API and the role API map
// these codes to their own at their edges (main/api/engine-errors.ts and
// main/role-api-server/engine-errors.ts), each with a table over every code.
export const engineErrorCodes = [
  /** The request is malformed or makes no sense (an invitation that is not one, PEER/ROLE that is not). */
  'invalid',
  /** No such role, connection or agent conversation. */
  'not_found',
  /** The peer cannot be reached, or this installation does not listen for peers. */
  'unavailable',
  /** The connection was revoked, by either side. */
  'revoked',
  /** The connection is paused. */
  'paused',
  /** The agent conversation is closed, or its topic was deleted. */
  'closed',
  /** The peer does not let this role address that role. */
  'not_exposed',
  /** The agent conversation has sent its hourly budget of texts. */
  'budget',
  /** The connection's queue of texts waiting to be delivered is full. */
  'queue_full',
] as const;
export type EngineErrorCode = (typeof engineErrorCodes)[number];

export class EngineError extends Error {
  constructor(
    readonly code: EngineErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'EngineError';
  }
}
