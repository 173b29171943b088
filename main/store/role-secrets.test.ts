// Role secrets at rest, with real installations on real SQLite files: sealed with the
// installation's box when it has one (the desktop app's keychain), as written when it
// has none (`parley serve`), and never a reason for a role to stop loading.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentSettings } from '../../shared/domain';
import { makeDataDir, removeDataDir } from '../../test-support/data-folder';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import { getRoleByName } from './queries/roles';
import type { SecretBox } from './secret-box';

/** A box like safeStorage: AES-256-GCM with a key of its own (here, made for the test). */
function testBox(key = randomBytes(32)): SecretBox {
  return {
    protection: 'os-keychain',
    encrypt(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    decrypt(sealed) {
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
      decipher.setAuthTag(sealed.subarray(12, 28));
      return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) removeDataDir(dir);
});
function dataDir(): string {
  const dir = makeDataDir('parley-secrets-');
  dirs.push(dir);
  return dir;
}

/** The roles table as it sits in the file, read with a connection of its own. */
function storedAgent(dir: string, name: string): string {
  const db = new Database(path.join(dir, 'parley.db'), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT agent FROM roles WHERE name = ?').get(name) as { agent: string }).agent;
  } finally {
    db.close();
  }
}

const withSecrets: AgentSettings = {
  adapter: 'command',
  command: ['node', '-e', 'process.stdout.write(String(process.env.DEPLOY_TOKEN))'],
  env: { DEPLOY_TOKEN: 'tok-3141592653', MODE: 'fast' },
};
const withKey: AgentSettings = {
  adapter: 'openai-compatible',
  baseUrl: 'http://127.0.0.1:9/v1',
  model: 'local',
  apiKey: 'sk-secret-2718281828',
};

async function openWith(dir: string, secrets?: SecretBox): Promise<TestInstallation> {
  return openTestInstallation({ dataDir: dir, ...(secrets ? { secrets } : {}) });
}

describe('role secrets at rest', () => {
  it('are sealed in the file when the installation has a box, and open for the agent', async () => {
    const dir = dataDir();
    const box = testBox();
    const t = await openWith(dir, box);
    try {
      await t.owner('roles.create', { name: 'deployer', agent: withSecrets });
      await t.owner('roles.create', { name: 'local', agent: withKey });
      for (const [name, secret] of [
        ['deployer', 'tok-3141592653'],
        ['deployer', 'fast'],
        ['local', 'sk-secret-2718281828'],
      ] as const) {
        const stored = storedAgent(dir, name);
        expect(stored).not.toContain(secret);
        expect(stored).toMatch(/"sealed:v1:[A-Za-z0-9+/=]+"/);
      }
      // Names and the rest stay readable; the values come back whole for the run.
      expect(JSON.parse(storedAgent(dir, 'deployer'))).toMatchObject({
        adapter: 'command',
        env: { DEPLOY_TOKEN: expect.any(String) as unknown },
      });
      expect(getRoleByName(t.installation.db, 'deployer')!.agent).toEqual(withSecrets);
      expect(getRoleByName(t.installation.db, 'local')!.agent).toEqual(withKey);

      // The agent gets the value it was given.
      const role = getRoleByName(t.installation.db, 'deployer')!;
      const conversation = await t.owner('conversations.open', { roleId: role.id });
      await t.owner('conversations.send', { id: conversation.id, text: 'go' });
      const answer = await t.waitFor(async () => {
        const detail = await t.owner('conversations.get', { id: conversation.id });
        return detail.messages.find((m) => m.author.kind === 'role')?.body;
      }, 'the command’s output');
      expect(answer).toBe('tok-3141592653');
    } finally {
      await t.installation.close();
    }
  });

  it('are stored as written without a box, as `parley serve` keeps them', async () => {
    const dir = dataDir();
    const t = await openWith(dir);
    try {
      await t.owner('roles.create', { name: 'deployer', agent: withSecrets });
      // A value that looks sealed is still the person's own value.
      const odd: AgentSettings = { ...withSecrets, env: { ODD: 'sealed:v1:not-really', ODDER: 'plain:sealed:v1:x' } };
      await t.owner('roles.create', { name: 'odd', agent: odd });
      expect(storedAgent(dir, 'deployer')).toContain('tok-3141592653');
      expect(getRoleByName(t.installation.db, 'odd')!.agent).toEqual(odd);
    } finally {
      await t.installation.close();
    }
  });

  it('seals what was stored as written once a box is there, and reads as not set where the box is missing', async () => {
    const dir = dataDir();
    const box = testBox();
    const plain = await openWith(dir);
    await plain.owner('roles.create', { name: 'deployer', agent: withSecrets });
    await plain.owner('roles.create', { name: 'local', agent: withKey });
    await plain.installation.close();

    const sealed = await openWith(dir, box);
    expect(storedAgent(dir, 'deployer')).not.toContain('tok-3141592653');
    expect(storedAgent(dir, 'local')).not.toContain('sk-secret-2718281828');
    expect(getRoleByName(sealed.installation.db, 'deployer')!.agent).toEqual(withSecrets);
    // Nor anywhere in the files: not in a freed page, not in the write-ahead log.
    for (const file of ['parley.db', 'parley.db-wal']) {
      const bytes = existsSync(path.join(dir, file)) ? readFileSync(path.join(dir, file)) : Buffer.alloc(0);
      expect(bytes.includes('tok-3141592653'), file).toBe(false);
      expect(bytes.includes('sk-secret-2718281828'), file).toBe(false);
    }
    await sealed.installation.close();

    // Opened elsewhere (another keychain, or by `parley serve`): the roles load, their secrets are not set.
    for (const elsewhere of [undefined, testBox()]) {
      const t = await openWith(dir, elsewhere);
      try {
        const roles = await t.owner('roles.list', {});
        expect(roles.map((r) => r.name)).toEqual(['deployer', 'local']);
        expect(roles.find((r) => r.name === 'local')!.hasApiKey).toBe(false);
        expect(getRoleByName(t.installation.db, 'deployer')!.agent).toEqual({ ...withSecrets, env: {} });
      } finally {
        await t.installation.close();
      }
    }

    // Back with the right box: nothing was lost by those opens.
    const again = await openWith(dir, box);
    try {
      expect(getRoleByName(again.installation.db, 'local')!.agent).toEqual(withKey);
    } finally {
      await again.installation.close();
    }
  });

  it('reads a damaged sealed value as not set, and the role still loads', async () => {
    const dir = dataDir();
    const box = testBox();
    const t = await openWith(dir, box);
    await t.owner('roles.create', { name: 'local', agent: withKey });
    await t.installation.close();
    const db = new Database(path.join(dir, 'parley.db'));
    const stored = JSON.parse(storedAgent(dir, 'local')) as { apiKey: string };
    const flipped = stored.apiKey.slice(0, -4) + (stored.apiKey.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    db.prepare('UPDATE roles SET agent = ? WHERE name = ?').run(
      JSON.stringify({ ...stored, apiKey: flipped }),
      'local',
    );
    db.close();
    const again = await openWith(dir, box);
    try {
      expect((await again.owner('roles.list', {}))[0]).toMatchObject({ name: 'local', hasApiKey: false });
    } finally {
      await again.installation.close();
    }
  });
});

describe('role secrets on the receive path', () => {
  it('stay sealed while a peer’s texts are received and held for approval', async () => {
    const box = testBox();
    let opened = 0;
    const counting: SecretBox = { ...box, decrypt: (sealed) => (opened++, box.decrypt(sealed)) };
    const bob = await openPeer('bob', { dataDir: dataDir(), secrets: counting });
    const alice = await openPeer('alice', { dataDir: dataDir() });
    try {
      await bob.owner('roles.create', { name: 'deployer', agent: withSecrets });
      const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
      const { inviterConnectionId } = await pair(bob, alice, { inviter: ['deployer'], acceptor: ['assistant'] });
      await bob.owner('connections.setPolicy', { id: inviterConnectionId, incoming: 'ask' });
      const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
      opened = 0;
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/deployer: one' });
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/deployer: two' });
      await bob.waitFor(async () => {
        const [thread] = await bob.owner('threads.list', { peerStarted: true });
        return thread?.counts.held === 2;
      }, 'both texts held at bob');
      expect(opened).toBe(0);
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});

describe('role secrets and the role API', () => {
  it('stay sealed while the role’s agent calls `parley`: only starting the agent opens them', async () => {
    const box = testBox();
    let opened = 0;
    const counting: SecretBox = { ...box, decrypt: (sealed) => (opened++, box.decrypt(sealed)) };
    const t = await openWith(dataDir(), counting);
    try {
      // Runs the shell line it is sent, with the real `parley` on its PATH and two sealed values in its environment.
      const role = await t.owner('roles.create', {
        name: 'deployer',
        agent: { ...withSecrets, command: ['sh', '-c', 'read line; eval "${line#*: }"'] },
      });
      const conversation = await t.owner('conversations.open', { roleId: role.id });
      const openedByTurn = async (line: string, last: string) => {
        opened = 0;
        await t.owner('conversations.send', { id: conversation.id, text: line });
        await t.waitFor(async () => {
          const detail = await t.owner('conversations.get', { id: conversation.id });
          return detail.turns.at(-1)?.status !== 'running' && detail.messages.at(-1)?.body === last;
        }, `the turn that ends with "${last}"`);
        return opened;
      };
      const quiet = await openedByTurn('echo "$MODE"', 'fast');
      const busy = await openedByTurn(
        'parley context > /dev/null && parley peers > /dev/null && parley report "$MODE" > /dev/null && echo done',
        'done',
      );
      expect(quiet).toBeGreaterThan(0);
      expect(busy).toBe(quiet);
    } finally {
      await t.close();
    }
  });
});
