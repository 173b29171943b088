import { describe, expect, it } from 'vitest';
import { errorCodes } from '../../shared/api-contract';
import { appApiCodeOf } from '../api/engine-errors';
import { roleApiCodeOf } from '../role-api-server/engine-errors';
import { exitCodes, roleApiErrorCodes } from '../role-api/protocol';
import { engineErrorCodes } from './errors';

describe('engine error codes at the edges', () => {
  it('gives every engine refusal an app API code of its own: none looks like another, none is `conflict`', () => {
    expect(Object.keys(appApiCodeOf).sort()).toEqual([...engineErrorCodes].sort());
    const codes = engineErrorCodes.map((code) => appApiCodeOf[code]);
    for (const code of codes) expect(errorCodes).toContain(code);
    expect(new Set(codes).size).toBe(codes.length);
    expect(codes).not.toContain('conflict');
    expect(codes).not.toContain('internal');
  });

  it('gives every engine refusal a role API code, and so a `parley` exit code, of its own', () => {
    expect(Object.keys(roleApiCodeOf).sort()).toEqual([...engineErrorCodes].sort());
    const codes = engineErrorCodes.map((code) => roleApiCodeOf[code]);
    for (const code of codes) expect(roleApiErrorCodes).toContain(code);
    expect(new Set(codes.map((code) => exitCodes[code])).size).toBe(codes.length);
  });
});
