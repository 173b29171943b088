import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSettings } from '../../shared/domain';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import { agentEnv, inheritedEnv } from './environment';

let fixtures: string;
/** A folder with files in it, so that a glob would have something to expand to. */
let folder: string;

/** Small agent programs, written once per test file. */
const scripts = {
  argv: `process.stdout.write(JSON.stringify(process.argv.slice(2)));`,
  cwd: `process.stdout.write(process.cwd());`,
  env: `
    const pick = (name) => process.env[name] ?? null;
    process.stdout.write(JSON.stringify({
      FROM_ROLE: pick('FROM_ROLE'), HOME: pick('HOME'), LANG: pick('LANG'), PATH: pick('PATH'),
      PARLEY_TOKEN: pick('PARLEY_TOKEN'), PARLEY_API: pick('PARLEY_API'),
      PARLEY_TEST_SECRET: pick('PARLEY_TEST_SECRET'), ELECTRON_RUN_AS_NODE: pick('ELECTRON_RUN_AS_NODE'),
    }));
  `,
  big: `
    const line = 'x'.repeat(1023) + '\\n';
    const chunk = line.repeat(1024);
    process.stdout.write(chunk);
    process.stdout.write(chunk, () => process.exit(0));
  `,
  stdin: `
    let input = '';
    process.stdin.on('data', (d) => (input += d));
    process.stdin.on('end', () => process.stdout.write(JSON.stringify(input)));
  `,
};

beforeAll(() => {
  fixtures = mkdtempSync(path.join(os.tmpdir(), 'parley-command-'));
  for (const [name, body] of Object.entries(scripts)) writeFileSync(path.join(fixtures, `${name}.cjs`), body);
  folder = mkdtempSync(path.join(os.tmpdir(), 'parley-command-cwd-'));
  writeFileSync(path.join(folder, 'a.txt'), 'a');
  writeFileSync(path.join(folder, 'b.txt'), 'b');
});
afterAll(() => {
  rmSync(fixtures, { recursive: true, force: true });
  rmSync(folder, { recursive: true, force: true });
});

const command = (
  script: keyof typeof scripts,
  extra: Partial<Extract<AgentSettings, { adapter: 'command' }>> = {},
  args: string[] = [],
): AgentSettings => ({
  adapter: 'command',
  command: [process.execPath, path.join(fixtures, `${script}.cjs`), ...args],
  ...extra,
});

describe('command adapter', () => {
  let t: TestInstallation;
  afterEach(async () => {
    await t?.close();
  });

  /** Runs one turn with the agent; resolves to the conversation once the turn has ended. */
  async function oneTurn(agent: AgentSettings, text = 'hello') {
    const role = await t.owner('roles.create', { name: 'agent', agent });
    const conversation = await t.owner('conversations.open', { roleId: role.id });
    await t.owner('conversations.send', { id: conversation.id, text });
    return t.waitFor(async () => {
      const detail = await t.owner('conversations.get', { id: conversation.id });
      const status = detail.turns.at(-1)?.status;
      return status === 'done' || status === 'failed' ? detail : undefined;
    }, 'the turn to end');
  }

  const reply = (detail: Awaited<ReturnType<typeof oneTurn>>) => detail.messages.at(-1)!.body;

  it('passes arguments to the program as they are, without a shell', async () => {
    t = await openTestInstallation();
    const args = [
      '$HOME',
      '${PATH}',
      'a; echo injected',
      '*',
      '*.txt',
      '$(id)',
      '`id`',
      "it's",
      '"quoted"',
      '> created.txt',
      '&& touch created2.txt',
      '| cat',
      '~',
      'two  spaces',
    ];
    const detail = await oneTurn(command('argv', { cwd: folder }, args));
    expect(detail.turns.at(-1)?.status).toBe('done');
    expect(JSON.parse(reply(detail))).toEqual(args);
    expect(readdirSync(folder).sort()).toEqual(['a.txt', 'b.txt']);
  });

  it('works in the role’s folder, or in a folder of its own outside the data folder when it names none', async () => {
    t = await openTestInstallation();
    expect(reply(await oneTurn(command('cwd', { cwd: folder })))).toBe(realpathSync(folder));
    await t.owner('roles.remove', { id: (await t.owner('roles.list', {}))[0]!.id });
    const own = reply(await oneTurn(command('cwd')));
    const role = (await t.owner('roles.list', {}))[0]!;
    expect(own).toBe(realpathSync(path.join(t.installation.rolesDir, `role-${role.id}`)));
    expect(path.relative(realpathSync(t.installation.dataDir), own)).toMatch(/^\.\./);
  });

  it('fails the turn with a clear message when the working folder does not exist', async () => {
    t = await openTestInstallation();
    const missing = path.join(folder, 'no-such-folder');
    const detail = await oneTurn(command('cwd', { cwd: missing }));
    expect(detail.turns.at(-1)).toMatchObject({ status: 'failed' });
    expect(reply(detail)).toBe(
      `The agent failed: the role’s working folder ${missing} does not exist: create it, or change the folder in the role's settings`,
    );
  });

  it('gives the program a minimal inherited environment, the role’s env, then Parley’s own variables', async () => {
    t = await openTestInstallation();
    process.env.PARLEY_TEST_SECRET = 'must-not-leak';
    try {
      const detail = await oneTurn(
        command('env', {
          env: { FROM_ROLE: 'yes', LANG: 'C.UTF-8', PATH: '/role/bin', PARLEY_TOKEN: 'forged' },
        }),
      );
      const env = JSON.parse(reply(detail)) as Record<string, string | null>;
      expect(env.FROM_ROLE).toBe('yes');
      expect(env.LANG).toBe('C.UTF-8');
      expect(env.HOME).toBe(process.env.HOME ?? null);
      // Parley's environment stays out unless it is on the list; the role cannot forge the token.
      expect(env.PARLEY_TEST_SECRET).toBeNull();
      expect(env.ELECTRON_RUN_AS_NODE).toBeNull();
      expect(env.PARLEY_TOKEN).toMatch(/^prt_/);
      expect(env.PARLEY_API).toBe(t.installation.roleApiSocket);
      // The role's PATH first, then Parley's (with `parley`), then the inherited one.
      const dirs = env.PATH!.split(path.delimiter);
      expect(dirs[0]).toBe('/role/bin');
      expect(dirs[1]).toBe(path.join(t.installation.dataDir, 'bin'));
    } finally {
      delete process.env.PARLEY_TEST_SECRET;
    }
  });

  it('cuts an output over the cap and says so', async () => {
    t = await openTestInstallation();
    const detail = await oneTurn(command('big'));
    expect(detail.turns.at(-1)?.status).toBe('done');
    const body = reply(detail);
    const [kept, note] = body.split('\n\n[Parley cut this output: ');
    expect(kept!.length).toBeLessThanOrEqual(1024 * 1024);
    expect(kept!.length).toBeGreaterThan(1024 * 1024 - 1024);
    expect(kept!.replace(/\n/g, '')).toMatch(/^x+$/);
    expect(note).toMatch(/printed more than 1 MiB; only the beginning is kept\]$/);
  });

  it('gives the inputs as text, or the whole turn as JSON', async () => {
    t = await openTestInstallation();
    const asText = await oneTurn(command('stdin'), 'one line\nand another');
    expect(JSON.parse(reply(asText))).toBe('alice: one line\nand another\n');
    await t.owner('roles.remove', { id: (await t.owner('roles.list', {}))[0]!.id });
    const asJson = await oneTurn(command('stdin', { input: 'json', instructions: 'Be brief.' }), 'hi');
    const turn = JSON.parse(JSON.parse(reply(asJson)) as string) as Record<string, unknown>;
    expect(turn).toMatchObject({
      session: null,
      role: 'agent',
      instructions: 'Be brief.',
      context: { kind: 'conversation', person: { name: 'alice' } },
      peers: [],
      inputs: [{ kind: 'message', from: 'alice', body: 'hi' }],
    });
  });
});

describe('agentEnv', () => {
  it('inherits only the listed names and the locale', () => {
    const source = { PATH: '/usr/bin', HOME: '/home/a', LC_ALL: 'C', OPENAI_API_KEY: 'sk-x', AWS_SECRET: 'y' };
    expect(inheritedEnv(source)).toEqual({ PATH: '/usr/bin', HOME: '/home/a', LC_ALL: 'C' });
    expect(agentEnv({ HOME: '/elsewhere' }, { PARLEY_API: '/sock', PATH: '/parley/bin:/usr/bin' }, source)).toEqual({
      PATH: '/parley/bin:/usr/bin',
      HOME: '/elsewhere',
      LC_ALL: 'C',
      PARLEY_API: '/sock',
    });
  });
});

describe('agent processes', () => {
  // Nothing in main/ may hand a command line to a shell: every agent and CLI is spawned with an argv array.
  it('are never started through a shell', () => {
    const root = path.join(import.meta.dirname, '..');
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.test.ts')) {
          const source = readFileSync(file, 'utf8');
          if (
            /\bshell\s*:\s*(?!false\b)/.test(source) ||
            /\b(exec|execSync)\s*\(/.test(source.replace(/\.exec\(/g, ''))
          )
            offenders.push(path.relative(root, file));
        }
      }
    };
    walk(root);
    expect(offenders).toEqual([]);
    expect(existsSync(path.join(root, 'runs', 'process-tree.ts'))).toBe(true);
  });
});
