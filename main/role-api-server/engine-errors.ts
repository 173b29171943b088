// The engine's refusals as agents get them: every engine code has its role API code
// (and so its own `parley` exit code).
import { EngineError, type EngineErrorCode } from '../engine/errors';
import { RoleApiError, type RoleApiErrorCode } from '../role-api/protocol';

export const roleApiCodeOf: Record<EngineErrorCode, RoleApiErrorCode> = {
  invalid: 'invalid',
  not_found: 'not_found',
  unavailable: 'unavailable',
  revoked: 'revoked',
  paused: 'paused',
  closed: 'closed',
  not_exposed: 'not_exposed',
  budget: 'budget',
  queue_full: 'queue_full',
};

/** An engine refusal as a role API error; anything else as it is. */
export function fromEngine(error: unknown): unknown {
  return error instanceof EngineError ? new RoleApiError(roleApiCodeOf[error.code], error.message) : error;
}
