import { describe, expect, it } from 'vitest';
import { agentSettingsSchema, nameProblem, oneLineProblem, textProblem } from './domain';

describe('control characters', () => {
  // value, one line (names, programs, paths), text that spans lines, a name people read
  it.each([
    ['plain', null, null, null],
    ['tab\there', 'U+0009 at character 4', null, 'U+0009 at character 4'],
    ['line\nbreak', 'U+000A at character 5', null, 'U+000A at character 5'],
    ['cr\rlf', 'U+000D at character 3', null, 'U+000D at character 3'],
    ['nul\u0000', 'U+0000 at character 4', 'U+0000 at character 4', 'U+0000 at character 4'],
    ['\u001b[31mred', 'U+001B at character 1', 'U+001B at character 1', 'U+001B at character 1'],
    ['del\u007f', 'U+007F at character 4', 'U+007F at character 4', 'U+007F at character 4'],
    ['next\u0085line', 'U+0085 at character 5', 'U+0085 at character 5', 'U+0085 at character 5'],
    ['evil\u202egnp.exe', null, null, 'U+202E at character 5'],
    ['iso\u2066late', null, null, 'U+2066 at character 4'],
    ['émoji 😀 ok', null, null, null],
  ])('%j', (value, oneLine, text, name) => {
    const where = (problem: string | null) =>
      problem?.match(/\((?:found )?(U\+[0-9A-F]{4} at character \d+)\)/)?.[1] ?? null;
    expect(where(oneLineProblem(value))).toBe(oneLine);
    expect(where(textProblem(value))).toBe(text);
    expect(where(nameProblem(value))).toBe(name);
  });

  it('checks each field of agent settings by its kind', () => {
    const command = (settings: object) =>
      agentSettingsSchema.safeParse({ adapter: 'command', command: ['sh', '-c', 'echo hi'], ...settings }).success;
    expect(command({ command: ['sh', '-c', 'echo one\necho two'] })).toBe(true);
    expect(command({ command: ['s\nh', '-c', 'x'] })).toBe(false);
    expect(command({ command: ['sh', '-c', 'a\u0000'] })).toBe(false);
    expect(command({ env: { KEY: '-----BEGIN-----\nabc\n-----END-----' } })).toBe(true);
    expect(command({ env: { KEY: 'a\u0000' } })).toBe(false);
    expect(command({ cwd: '/srv/work' })).toBe(true);
    expect(command({ cwd: '/srv/work\n' })).toBe(false);
    expect(command({ instructions: 'Line one.\n\tLine two.' })).toBe(true);
    expect(command({ instructions: 'a\u0007b' })).toBe(false);
    const openai = (settings: object) =>
      agentSettingsSchema.safeParse({
        adapter: 'openai-compatible',
        baseUrl: 'http://127.0.0.1:1/v1',
        model: 'm',
        ...settings,
      }).success;
    expect(openai({ apiKey: 'sk-abc' })).toBe(true);
    expect(openai({ apiKey: 'sk-abc\r\nX: y' })).toBe(false);
    expect(openai({ baseUrl: 'http://127.0.0.1:1/v\n1' })).toBe(false);
  });
});
