// A worker of Parley's takes its turn from stdin, the turn's token on a line ahead of it:
// started ahead of its turn, the worker has no token in its environment until then.
import { describe, expect, it } from 'vitest';
import { takeToken } from './turn-input';

const token = `prt_${'Ab9-_'.repeat(8)}abc`;
const turn = JSON.stringify({ session: null, inputs: [{ kind: 'message', body: 'hello\nthere' }] });

describe('takeToken', () => {
  const taken: Array<[string, string, string, string | undefined]> = [
    ['a token line, then the turn', `${token}\n${turn}`, turn, token],
    ['the turn alone (started by hand, the token in the environment)', turn, turn, 'from the environment'],
    ['a token line and nothing after it', `${token}\n`, '', token],
  ];
  for (const [what, stdin, json, env] of taken)
    it(`takes ${what}`, () => {
      const environment: NodeJS.ProcessEnv = { PARLEY_TOKEN: 'from the environment' };
      expect(takeToken(stdin, environment)).toBe(json);
      expect(environment.PARLEY_TOKEN).toBe(env);
    });

  const refused: Array<[string, string]> = [
    ['a line that is not a turn token', `not a token\n${turn}`],
    ['a token of another kind', `pat_${'a'.repeat(43)}\n${turn}`],
    ['a token cut short', `${token.slice(0, 20)}\n${turn}`],
    ['nothing at all', ''],
  ];
  for (const [what, stdin] of refused)
    it(`refuses ${what}, and sets no token`, () => {
      const environment: NodeJS.ProcessEnv = {};
      expect(() => takeToken(stdin, environment)).toThrow(/neither a turn token nor a turn/);
      expect(environment.PARLEY_TOKEN).toBeUndefined();
    });
});
