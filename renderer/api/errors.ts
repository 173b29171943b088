// Every failure the renderer sees from the app API is an ApiError with a stable code,
// whatever transport it came through.
import { ApiError, errorCodes, type ErrorCode } from '../../shared/api-errors';

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (errorCodes as readonly string[]).includes(value);
}

/**
 * Turns whatever a transport rejected with into an ApiError. The Electron preload
 * rejects with a plain `{code, message}` object, because the context bridge copies only
 * the message of Error objects across worlds.
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (typeof error === 'object' && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (isErrorCode(code) && typeof message === 'string') return new ApiError(code, message);
    if (typeof message === 'string') return new ApiError('internal', message);
  }
  return new ApiError('internal', String(error));
}
