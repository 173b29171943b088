// Invitation failures in plain words, whatever the wire or the system said.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../shared/api-contract';
import { acceptFailure } from './plain-errors';

describe('acceptFailure', () => {
  it.each([
    [
      'invalid',
      'bob refused the invitation: unknown certificate and no valid invitation',
      'bob did not take this invitation: it was used already, it expired, or it was cancelled. Ask bob’s owner for a new invitation.',
    ],
    [
      'unavailable',
      'could not reach bob at 127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1',
      'Could not reach bob at 127.0.0.1:1. Check with bob’s owner that Parley is running there and that this address can be reached from here, then try again.',
    ],
    [
      'invalid',
      'bob refused the invitation: this connection was revoked',
      'bob revoked its connection with this installation and refuses to pair again.',
    ],
    [
      'revoked',
      'you revoked bob; a revoked peer cannot be paired again',
      'You revoked the connection with bob; these two installations cannot be paired again.',
    ],
    [
      'revoked',
      'bob revoked this connection; a revoked peer cannot be paired again',
      'bob revoked its connection with this installation and refuses to pair again.',
    ],
    [
      'revoked',
      'the connection with bob was revoked; a revoked peer cannot be paired again',
      'The connection with bob was revoked; these two installations cannot be paired again.',
    ],
    ['invalid', 'this invitation has expired; ask for a new one', 'This invitation has expired; ask for a new one.'],
  ] as const)('%s: %s', (code, message, expected) => {
    expect(acceptFailure(new ApiError(code, message))).toBe(expected);
  });
});
