// The engine's refusals as people get them: every engine code has its app API code.
import { ApiError, type ErrorCode } from '../../shared/api-contract';
import { EngineError, type EngineErrorCode } from '../engine/errors';

export const appApiCodeOf: Record<EngineErrorCode, ErrorCode> = {
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

function translate(error: unknown): never {
  if (error instanceof EngineError) throw new ApiError(appApiCodeOf[error.code], error.message);
  throw error;
}

/** Runs an engine call (sync or async), turning its refusals into ApiErrors. */
export function engineCall<T>(fn: () => T): T {
  try {
    const result = fn();
    return (result instanceof Promise ? result.catch(translate) : result) as T;
  } catch (error) {
    return translate(error);
  }
}
