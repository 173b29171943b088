// Role secrets are write-only: a role's environment values and API key go in through
// the app API and never come back out of it — not to members, not to owners, not to
// peers, not into the log or onto a command line. Tried on `parley serve` as a real
// child process (its log on), and on a real paired peer for the wire.
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, type ParamsOf } from '../../shared/api-contract';
import type { AgentSettings, RoleView } from '../../shared/domain';
import { dialPeer } from '../engine/transport';
import { getRole } from '../store/queries/roles';
import type { ApiClient } from '../../test-support/api-client';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import { removeDataDir, startServe, type ServeProcess } from '../../test-support/serve-process';

const SECRET = 'sk-live-7f3a9c1e5b2d4086';
const PASSWORD = 'hunter2-but-longer-0421';
const API_KEY = 'sk-openai-4c2b8e19d7a3';
const secrets = [SECRET, PASSWORD, API_KEY];
const sha = (value: string) => createHash('sha256').update(value).digest('hex');

/** Every secret is absent from this text. */
function expectNoSecret(text: string): void {
  for (const secret of secrets) expect(text).not.toContain(secret);
}

async function refused(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => new Error('expected a refusal'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

/** Prints what the agent got in API_KEY, as a hash (so the secret itself never lands in a message). */
const HASH_KEY = 'printf %s "$API_KEY" | sha256sum | cut -d " " -f 1';

describe('role secrets are write-only through the app API', () => {
  let server: ServeProcess;
  let owner: ApiClient;
  let member: ApiClient;
  const made: RoleView[] = [];

  const create = async (params: ParamsOf<'roles.create'>) => {
    const role = await owner.call('roles.create', params);
    made.push(role);
    return role;
  };

  beforeAll(async () => {
    // The log is on: nothing below may put a secret in it.
    server = await startServe({ name: 'alice', env: { PARLEY_LOG: 'info' } });
    owner = await server.connect();
    const { token } = await owner.call('people.add', { name: 'bob', kind: 'member' });
    member = await server.connect(token);
  }, 30_000);

  afterAll(async () => {
    await server?.stop();
    if (server) {
      expectNoSecret(server.stderr());
      removeDataDir(server.dataDir);
    }
  });

  it('shows members and owners each role’s environment names as set, never their values or the API key', async () => {
    const env = { API_KEY: SECRET, DB_PASSWORD: PASSWORD };
    const settings: AgentSettings[] = [
      { adapter: 'command', command: ['sh', '-c', HASH_KEY], env },
      { adapter: 'claude-code', command: '/usr/bin/false', env },
      { adapter: 'codex', command: '/usr/bin/false', env },
      { adapter: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKey: API_KEY },
    ];
    for (const [i, agent] of settings.entries()) {
      const role = await create({ name: `secretive-${i}`, agent });
      expectNoSecret(JSON.stringify(role));
    }
    const set = { API_KEY: { set: true }, DB_PASSWORD: { set: true } };
    for (const reader of [owner, member]) {
      const roles = await reader.call('roles.list', {});
      expectNoSecret(JSON.stringify(roles));
      const byName = (name: string) => roles.find((r) => r.name === name)!;
      expect(byName('secretive-0').agent).toEqual({ adapter: 'command', command: ['sh', '-c', HASH_KEY], env: set });
      expect(byName('secretive-1').agent).toEqual({ adapter: 'claude-code', command: '/usr/bin/false', env: set });
      expect(byName('secretive-2').agent).toEqual({ adapter: 'codex', command: '/usr/bin/false', env: set });
      expect(byName('secretive-3')).toMatchObject({
        hasApiKey: true,
        agent: { adapter: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' },
      });
      expect(byName('secretive-3').agent).not.toHaveProperty('apiKey');
    }
    // Members and owners see the same role.
    expect(await member.call('roles.list', {})).toEqual(await owner.call('roles.list', {}));
  });

  /** The hash of API_KEY as the role's agent gets it in a turn. */
  async function keySeenByAgent(roleId: number): Promise<string> {
    const conversation = await owner.call('conversations.open', { roleId });
    const before = (await owner.call('conversations.get', { id: conversation.id })).messages.length;
    await owner.call('conversations.send', { id: conversation.id, text: 'go' });
    return owner.waitFor(
      async () => {
        const { messages } = await owner.call('conversations.get', { id: conversation.id });
        const answer = messages.slice(before).find((m) => m.author.kind === 'role');
        return answer?.body.trim();
      },
      15_000,
      'the agent’s answer',
    );
  }

  it('keeps a stored value when an update leaves it out or marks it as set, and the agent still gets it', async () => {
    const role = await create({
      name: 'keeper',
      agent: { adapter: 'command', command: ['sh', '-c', HASH_KEY], env: { API_KEY: SECRET, REGION: 'eu-1' } },
    });
    expect(await keySeenByAgent(role.id)).toBe(sha(SECRET));

    // No agent settings at all, then settings without `env`: everything stored stays.
    await owner.call('roles.update', { id: role.id, description: 'keeps its key' });
    let updated = await owner.call('roles.update', {
      id: role.id,
      agent: { adapter: 'command', command: ['sh', '-c', HASH_KEY], instructions: 'be brief' },
    });
    expect(updated.agent).toMatchObject({ env: { API_KEY: { set: true }, REGION: { set: true } } });
    expect(await keySeenByAgent(role.id)).toBe(sha(SECRET));

    // The view sent back as it came, with one value replaced and one left out: kept, replaced, removed.
    updated = await owner.call('roles.update', {
      id: role.id,
      agent: { adapter: 'command', command: ['sh', '-c', HASH_KEY], env: { API_KEY: { set: true }, ZONE: 'b' } },
    });
    expect(updated.agent).toEqual({
      adapter: 'command',
      command: ['sh', '-c', HASH_KEY],
      env: { API_KEY: { set: true }, ZONE: { set: true } },
    });
    expect(await keySeenByAgent(role.id)).toBe(sha(SECRET));
    updated = await owner.call('roles.update', {
      id: role.id,
      agent: { adapter: 'command', command: ['sh', '-c', HASH_KEY], env: { API_KEY: PASSWORD, ZONE: { set: true } } },
    });
    expect(await keySeenByAgent(role.id)).toBe(sha(PASSWORD));
    // An empty env removes every value.
    updated = await owner.call('roles.update', {
      id: role.id,
      agent: { adapter: 'command', command: ['sh', '-c', HASH_KEY], env: {} },
    });
    expect(updated.agent).not.toHaveProperty('env');
    expect(await keySeenByAgent(role.id)).toBe(sha(''));
  });

  it('refuses to keep a value that was never stored', async () => {
    const role = await create({ name: 'empty', agent: { adapter: 'command', command: ['true'] } });
    const error = await refused(
      owner.call('roles.update', {
        id: role.id,
        agent: { adapter: 'command', command: ['true'], env: { API_KEY: { set: true } } },
      }),
    );
    expect(error.code).toBe('invalid');
    expect(error.message).toContain('API_KEY');
  });

  it('gives stored values only to the program they were given for: a new command or folder needs them again', async () => {
    const agent = { adapter: 'command' as const, command: ['sh', '-c', HASH_KEY], env: { API_KEY: SECRET } };
    const role = await create({ name: 'moving', agent });
    const keep = { API_KEY: { set: true as const } };
    const attempts: ParamsOf<'roles.update'>['agent'][] = [
      // A program that would print the key instead.
      { adapter: 'command', command: ['sh', '-c', 'printf %s "$API_KEY"'], env: keep },
      { adapter: 'command', command: ['sh', '-c', HASH_KEY], cwd: '/tmp', env: keep },
      { adapter: 'claude-code', command: '/usr/bin/env', env: keep },
    ];
    for (const attempt of attempts) {
      const error = await refused(owner.call('roles.update', { id: role.id, agent: attempt }));
      expect(error.code).toBe('invalid');
      expect(error.message).toMatch(/API_KEY/);
      expectNoSecret(error.message);
      expect(getStoredEnv(role.id)).toEqual({ API_KEY: SECRET });
    }
    // Without `env`, a new program starts without the stored values.
    const moved = await owner.call('roles.update', {
      id: role.id,
      agent: { adapter: 'command', command: ['sh', '-c', `${HASH_KEY}; true`] },
    });
    expect(moved.agent).not.toHaveProperty('env');
    expect(getStoredEnv(role.id)).toBeUndefined();
    // Given again, they go to the new program.
    await owner.call('roles.update', {
      id: role.id,
      agent: { adapter: 'command', command: ['sh', '-c', `${HASH_KEY}; true`], env: { API_KEY: SECRET } },
    });
    expect(await keySeenByAgent(role.id)).toBe(sha(SECRET));
  });

  /** What the database holds for the role's env: read from the serve process's database file. */
  function getStoredEnv(roleId: number): Record<string, string> | undefined {
    const db = openReadOnly();
    try {
      const agent = getRole(db, roleId)!.agent;
      return 'env' in agent ? agent.env : undefined;
    } finally {
      db.close();
    }
  }
  /** A second connection to the live database, read only: WAL lets it read beside the server. */
  const openReadOnly = () => new Database(`${server.dataDir}/parley.db`, { readonly: true, fileMustExist: true });

  it('never puts a value on a command line: not while the agent runs, not in its log', async () => {
    const role = await create({
      name: 'sleeper',
      agent: { adapter: 'command', command: ['sh', '-c', 'sleep 30'], env: { API_KEY: SECRET, DB_PASSWORD: PASSWORD } },
    });
    const conversation = await owner.call('conversations.open', { roleId: role.id });
    await owner.call('conversations.send', { id: conversation.id, text: 'nap' });
    await owner.waitFor(
      async () => (await owner.call('conversations.get', { id: conversation.id })).conversation.run.state === 'running',
      15_000,
      'the agent to work',
    );
    let seen = 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
        seen++;
        expectNoSecret(cmdline);
      } catch {
        // ended while we looked
      }
    }
    expect(seen).toBeGreaterThan(1);
    await owner.call('conversations.stop', { id: conversation.id });
    expectNoSecret(server.stderr());
  });
});

describe('role secrets never reach peers', () => {
  let bob: TestInstallation;
  let mallory: TestInstallation;

  beforeAll(async () => {
    bob = await openPeer('bob');
    await bob.owner('roles.create', {
      name: 'researcher',
      description: 'finds things',
      agent: { adapter: 'command', command: ['true'], env: { API_KEY: SECRET } },
    });
    await bob.owner('roles.create', {
      name: 'oracle',
      description: 'knows things',
      agent: { adapter: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKey: API_KEY },
    });
    mallory = await openPeer('mallory');
    await pair(bob, mallory, { inviter: ['researcher', 'oracle'] });
    // From here on mallory's side is spoken by hand, to see the frames as they are.
    await mallory.close();
    await bob.waitFor(async () => !(await bob.owner('connections.list', {}))[0]!.online, 'mallory offline');
  }, 60_000);

  afterAll(async () => {
    await bob?.close();
  });

  it('sends a peer the names and descriptions of the roles it may address, and nothing else', async () => {
    const { ws } = await dialPeer(
      mallory.installation.identity,
      bob.installation.peerAddress!,
      bob.installation.identity.fingerprint,
    );
    const frames: string[] = [];
    const roles = new Promise<unknown>((resolve) => {
      ws.on('message', (data: Buffer) => {
        const text = data.toString('utf8');
        frames.push(text);
        // A message may carry several frames (revision 3).
        const message = JSON.parse(text) as { type: string } | Array<{ type: string }>;
        for (const frame of Array.isArray(message) ? message : [message]) if (frame.type === 'roles') resolve(frame);
      });
    });
    ws.send(JSON.stringify({ type: 'hello', protocol: 2, name: 'mallory', address: null }));
    const frame = await roles;
    expect(frame).toEqual({
      type: 'roles',
      roles: expect.arrayContaining([
        { name: 'researcher', description: 'finds things' },
        { name: 'oracle', description: 'knows things' },
      ]) as unknown,
    });
    expect((frame as { roles: unknown[] }).roles).toHaveLength(2);
    for (const text of frames) expectNoSecret(text);
    ws.terminate();
  });
});
