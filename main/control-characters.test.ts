// NUL and control characters are refused at the schema, with a message that names the
// character, before they can reach a command line, an environment or a file name (a
// NUL there stops the agent from starting at all, on every start). Tab and line breaks
// stay allowed where text may span lines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../shared/api-contract';
import type { ApiClient } from '../test-support/api-client';
import { openTestInstallation } from '../test-support/installation';
import { removeDataDir, startServe, type ServeProcess } from '../test-support/serve-process';

describe('control characters in what people type', () => {
  let server: ServeProcess;
  let owner: ApiClient;

  beforeAll(async () => {
    server = await startServe({ name: 'alice' });
    owner = await server.connect();
  });

  afterAll(async () => {
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  const command = (extra: object) => ({ adapter: 'command' as const, command: ['cat'], ...extra });

  it.each([
    [
      'a NUL in the program',
      { agent: command({ command: ['ca\u0000t'] }) },
      /agent\.command\.0: .*U\+0000 at character 3/,
    ],
    ['a line break in the program', { agent: command({ command: ['cat\n'] }) }, /agent\.command\.0: .*U\+000A/],
    [
      'a NUL in an argument',
      { agent: command({ command: ['sh', '-c', 'echo a\u0000b'] }) },
      /agent\.command\.2: .*U\+0000/,
    ],
    [
      'a NUL in an environment value',
      { agent: command({ env: { TOKEN: 'x\u0000' } }) },
      /agent\.env\.TOKEN: .*U\+0000/,
    ],
    ['ESC in an environment value', { agent: command({ env: { TOKEN: 'x\u001b[0m' } }) }, /U\+001B/],
    [
      'a NUL in an environment name',
      { agent: command({ env: { 'A\u0000B': 'x' } }) },
      /not a valid environment variable name/,
    ],
    ['a line break in the working folder', { agent: command({ cwd: '/tmp/a\nb' }) }, /agent\.cwd: .*U\+000A/],
    [
      'a NUL in the instructions',
      { agent: command({ instructions: 'be \u0000 brief' }) },
      /agent\.instructions: .*U\+0000/,
    ],
    [
      'a NUL in the claude program',
      { agent: { adapter: 'claude-code', command: 'claude\u0000' } },
      /agent\.command: .*U\+0000/,
    ],
    ['a C1 control in the model', { agent: { adapter: 'codex', model: 'gpt\u0085' } }, /agent\.model: .*U\+0085/],
    [
      'a header break in an API key',
      {
        agent: { adapter: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1', model: 'm', apiKey: 'k\r\nX-Evil: 1' },
      },
      /agent\.apiKey: .*U\+000D/,
    ],
    ['a NUL in the description', { description: 'a\u0000b', agent: { adapter: 'scripted' } }, /description: .*U\+0000/],
  ])('refuses a role with %s', async (_what, fields, message) => {
    const error = (await owner.raw('roles.create', { name: 'worker', ...fields }).catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('invalid');
    expect(error.message).toMatch(message);
    expect((await owner.call('roles.list', {})).map((r) => r.name)).not.toContain('worker');
  });

  it('refuses control characters in names and one-line titles, and NUL in texts', async () => {
    const refusals: Array<[string, unknown, RegExp]> = [
      ['people.add', { name: 'bob\u0000', kind: 'member' }, /name: .*U\+0000/],
      ['people.add', { name: 'bob\tsmith', kind: 'member' }, /name: .*U\+0009/],
      ['people.add', { name: 'evil\u202egnp.exe', kind: 'member' }, /name: .*bidirectional.*U\+202E/],
    ];
    const role = await owner.call('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const conversation = await owner.call('conversations.open', { roleId: role.id });
    refusals.push(
      ['tasks.create', { roleId: role.id, title: 'two\nlines' }, /title: .*U\+000A/],
      ['conversations.send', { id: conversation.id, text: 'hi\u0000there' }, /text: .*U\+0000/],
    );
    for (const [method, params, message] of refusals) {
      const error = (await owner.raw(method, params).catch((e: unknown) => e)) as ApiError;
      expect(error.code, method).toBe('invalid');
      expect(error.message).toMatch(message);
    }
  });

  it('keeps tab and line breaks where text spans lines, and the agent starts with them', async () => {
    const role = await owner.call('roles.create', {
      name: 'multiline',
      description: 'first line\nsecond line',
      agent: {
        adapter: 'command',
        command: ['sh', '-c', 'read line\necho "got: $line"'],
        env: { PEM: '-----BEGIN KEY-----\nabc\n-----END KEY-----' },
        instructions: 'Be brief.\n\tAnd kind.',
      },
    });
    const conversation = await owner.call('conversations.open', { roleId: role.id });
    await owner.call('conversations.send', { id: conversation.id, text: 'a\ttabbed\nmessage' });
    const reply = await owner.waitFor(
      async () =>
        (await owner.call('conversations.get', { id: conversation.id })).messages.find((m) => m.author.kind === 'role'),
      30_000,
      'the agent’s reply',
    );
    expect(reply.body).toMatch(/^got: /);
    expect(server.alive()).toBe(true);
  });

  it('still reads a role an older Parley stored with a control character, and refuses it back until it is fixed', async () => {
    const t = await openTestInstallation();
    try {
      const role = await t.owner('roles.create', {
        name: 'old',
        agent: { adapter: 'command', command: ['echo', 'ok'] },
      });
      // Written as an older Parley, which did not check characters, might have kept it.
      const stored = { adapter: 'command', command: ['echo', 'a\u001bb'] };
      t.installation.db.prepare('UPDATE roles SET agent = ? WHERE id = ?').run(JSON.stringify(stored), role.id);
      const [listed] = await t.owner('roles.list', {});
      expect(listed?.agent).toEqual(stored);
      const error = (await t
        .owner('roles.update', { id: role.id, agent: listed!.agent })
        .catch((e: unknown) => e)) as ApiError;
      expect(error.code).toBe('invalid');
      expect(error.message).toMatch(/agent\.command\.1: .*U\+001B/);
      await t.owner('roles.update', { id: role.id, agent: { adapter: 'command', command: ['echo', 'ab'] } });
      expect((await t.owner('roles.list', {}))[0]?.agent).toMatchObject({ command: ['echo', 'ab'] });
    } finally {
      await t.close();
    }
  });
});
