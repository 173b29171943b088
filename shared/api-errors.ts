// The app API's error codes and close code, apart from the contract's schemas so the page
// can read them without loading zod before its first view.

/** Stable error codes; clients switch on these, people read the message. */
export const errorCodes = [
  'invalid',
  'unauthenticated',
  'forbidden',
  'not_found',
  'conflict',
  'paused',
  'revoked',
  'queue_full',
  'budget',
  'closed',
  'not_exposed',
  'disk_full',
  'unavailable',
  'internal',
] as const;
export type ErrorCode = (typeof errorCodes)[number];

export interface ApiErrorShape {
  code: ErrorCode;
  message: string;
}

/** Thrown by handlers and rethrown by clients, so both sides see the same code. */
export class ApiError extends Error implements ApiErrorShape {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * The WebSocket close code of a headless session that ended because its person was
 * removed or its sign-in token replaced: the reason says which; signing in with the old
 * token will not work again.
 */
export const SESSION_ENDED_CLOSE_CODE = 4401;
