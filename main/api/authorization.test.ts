// Who may read and act (DESIGN §7), method by method: every app API method is called by
// the owner, by a member who owns the object in question, and by another member, on a
// real installation with a real SQLite file. A call that is allowed must show its
// effect; a refused one must carry the expected code and change nothing.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  methods,
  type ErrorCode,
  type MethodName,
  type ParamsOf,
  type ResultOf,
} from '../../shared/api-contract';
import type { Conversation, Person, Role, RunSummary, Task } from '../../shared/domain';
import { openInstallation, type Installation } from '../installation';
import { log } from '../log';
import { assertBuilt } from '../paths';
import { groupAlive } from '../runs/process-tree';
import type { ApiSession } from './session';

type Method = Exclude<MethodName, 'session.signIn'>;
type Caller = 'owner' | 'member' | 'other';
type Outcome = 'allowed' | Extract<ErrorCode, 'forbidden' | 'not_found'>;

interface Row<M extends Method, F> {
  method: M;
  expect: Record<Caller, Outcome>;
  /** Fresh objects for one call, made by the owner and the member as needed. */
  setup: () => F | Promise<F>;
  params: (fixture: F) => ParamsOf<M>;
  /** What an allowed call must have done. */
  effect: (fixture: F, result: ResultOf<M>, caller: Person) => void | Promise<void>;
  /** After a refusal, besides the unchanged store: what must still hold (an agent still working). */
  unchanged?: (fixture: F) => void | Promise<void>;
  cleanup?: (fixture: F) => unknown;
}
type AnyRow = Row<Method, unknown>;
const row = <M extends Method, F>(r: Row<M, F>): AnyRow => r as unknown as AnyRow;

const everyone: Record<Caller, Outcome> = { owner: 'allowed', member: 'allowed', other: 'allowed' };
const ownersOnly: Record<Caller, Outcome> = { owner: 'allowed', member: 'forbidden', other: 'forbidden' };
/** A conversation is its person's alone; everyone else, owners included, is told it does not exist. */
const itsPersonOnly: Record<Caller, Outcome> = { owner: 'not_found', member: 'allowed', other: 'not_found' };
/** Finishing and deleting a task: its creator (the member) or an owner. */
const creatorOrOwner: Record<Caller, Outcome> = { owner: 'allowed', member: 'allowed', other: 'forbidden' };

let dataDir: string;
let installation: Installation;
let people: Record<Caller, Person>;
let counter = 0;
const fresh = (prefix: string) => `${prefix}-${++counter}`;
const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

async function call<M extends MethodName>(person: Person | null, method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
  return (await installation.call({ person }, method, params)) as ResultOf<M>;
}

/** The call's ApiError; fails the test if the call was allowed. */
async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected the call to be refused, but it was allowed');
}

async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 15_000,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Everything people (not agents) write: a refused call must leave all of it as it was.
 * Agents keep working in the background (their replies, turns and inputs), so those
 * are left out; the rows that need it check their agent separately.
 */
function snapshot(): Record<string, unknown[]> {
  const q = (sql: string) => installation.db.prepare(sql).all();
  return {
    people: q('SELECT * FROM people ORDER BY id'),
    signInTokens: q('SELECT * FROM sign_in_tokens ORDER BY id'),
    roles: q('SELECT * FROM roles ORDER BY id'),
    roleTokens: q('SELECT * FROM role_tokens ORDER BY id'),
    conversations: q('SELECT * FROM conversations ORDER BY id'),
    personMessages: q("SELECT * FROM messages WHERE author_kind = 'person' ORDER BY id"),
    tasks: q('SELECT * FROM tasks ORDER BY id'),
    personTaskLog: q("SELECT * FROM task_log WHERE author_kind = 'person' ORDER BY id"),
    runs: q('SELECT id, role_id, context_kind, context_id FROM runs ORDER BY id'),
  };
}

const count = (sql: string, ...params: (string | number)[]) =>
  (installation.db.prepare(sql).get(...params) as { n: number }).n;

// ---- fixtures ---------------------------------------------------------------------

const newRole = () => call(people.owner, 'roles.create', { name: fresh('role'), agent: { adapter: 'scripted' } });

async function memberConversation(text?: string): Promise<{ role: Role; conversation: Conversation }> {
  const role = await newRole();
  const conversation = await call(people.member, 'conversations.open', { roleId: role.id });
  if (text !== undefined) await call(people.member, 'conversations.send', { id: conversation.id, text });
  return { role, conversation };
}

async function memberTask(body = ''): Promise<{ role: Role; task: Task }> {
  const role = await newRole();
  const task = await call(people.member, 'tasks.create', { roleId: role.id, title: fresh('task'), body });
  return { role, task };
}

/** The agent's process is up and working (a real `sleep 30` of the scripted agent). */
async function working(run: () => Promise<RunSummary>): Promise<number> {
  return waitFor('the agent to be working', async () => {
    const summary = await run();
    if (summary.state !== 'running' || !summary.lastTurn) return undefined;
    const turn = installation.db.prepare('SELECT pid FROM turns WHERE id = ?').get(summary.lastTurn.id) as
      { pid: number | null } | undefined;
    return turn?.pid ?? undefined;
  });
}

const conversationRun = async (id: number) => (await call(people.member, 'conversations.get', { id })).conversation.run;
const taskRun = async (id: number) => (await call(people.member, 'tasks.get', { id })).task.run;

async function sleepingConversation() {
  const fixture = await memberConversation('sleep 30');
  const pid = await working(() => conversationRun(fixture.conversation.id));
  return { ...fixture, pid };
}

async function sleepingTask() {
  const fixture = await memberTask();
  // The first turn takes the brief and answers it; the comment starts a turn of its own.
  await waitFor('the first turn to end', async () =>
    (await call(people.member, 'tasks.get', { id: fixture.task.id })).log.some((entry) => entry.kind === 'output'),
  );
  await call(people.member, 'tasks.comment', { id: fixture.task.id, text: 'sleep 30' });
  const pid = await working(() => taskRun(fixture.task.id));
  return { ...fixture, pid };
}

const signInAs = async (token: string): Promise<ApiSession> => {
  const session: ApiSession = { person: null };
  await installation.call(session, 'session.signIn', { token });
  return session;
};

// ---- the table --------------------------------------------------------------------

const rows: AnyRow[] = [
  row({
    method: 'session.whoami',
    expect: everyone,
    setup: () => null,
    params: () => ({}),
    effect: (_f, result, caller) => {
      expect(result.person).toEqual(caller);
      expect(result.installation).toEqual({ id: installation.id, name: 'alice' });
    },
  }),

  row({
    method: 'people.list',
    expect: everyone,
    setup: () => null,
    params: () => ({}),
    effect: (_f, result) => {
      expect(result.map((p) => p.id)).toEqual(
        expect.arrayContaining([people.owner.id, people.member.id, people.other.id]),
      );
      expect(result).toHaveLength(count('SELECT count(*) AS n FROM people'));
    },
  }),
  row({
    method: 'people.add',
    expect: ownersOnly,
    setup: () => ({ name: fresh('person') }),
    params: (f) => ({ name: f.name, kind: 'member' }),
    effect: async (f, result) => {
      expect(result.person).toMatchObject({ name: f.name, kind: 'member' });
      expect(await call(people.other, 'people.list', {})).toContainEqual(result.person);
      expect((await signInAs(result.token)).person).toEqual(result.person);
    },
  }),
  row({
    method: 'people.remove',
    expect: ownersOnly,
    setup: async () => {
      const added = await call(people.owner, 'people.add', { name: fresh('leaving'), kind: 'member' });
      const role = await newRole();
      const conversation = await call(added.person, 'conversations.open', { roleId: role.id });
      return { ...added, conversation };
    },
    params: (f) => ({ id: f.person.id }),
    effect: async (f, result) => {
      expect(result).toEqual({ removed: true });
      expect((await call(people.member, 'people.list', {})).map((p) => p.id)).not.toContain(f.person.id);
      expect(count('SELECT count(*) AS n FROM conversations WHERE id = ?', f.conversation.id)).toBe(0);
      expect((await refusal(signInAs(f.token))).code).toBe('unauthenticated');
    },
  }),

  row({
    method: 'roles.list',
    expect: everyone,
    setup: newRole,
    params: () => ({}),
    effect: (role, result) => {
      expect(result).toContainEqual(role);
    },
  }),
  row({
    method: 'roles.create',
    expect: ownersOnly,
    setup: () => ({ name: fresh('made') }),
    params: (f) => ({ name: f.name, description: 'made in a test', agent: { adapter: 'scripted' } }),
    effect: async (f, result) => {
      expect(result).toMatchObject({ name: f.name, description: 'made in a test', agent: { adapter: 'scripted' } });
      expect(await call(people.other, 'roles.list', {})).toContainEqual(result);
    },
  }),
  row({
    method: 'roles.update',
    expect: ownersOnly,
    setup: newRole,
    params: (role) => ({
      id: role.id,
      description: 'changed',
      agent: { adapter: 'scripted', instructions: 'be brief' },
    }),
    effect: async (role, result) => {
      expect(result).toMatchObject({ id: role.id, name: role.name, description: 'changed' });
      const listed = (await call(people.other, 'roles.list', {})).find((r) => r.id === role.id);
      expect(listed).toMatchObject({
        description: 'changed',
        agent: { adapter: 'scripted', instructions: 'be brief' },
      });
    },
  }),
  row({
    method: 'roles.remove',
    expect: ownersOnly,
    setup: async () => {
      const { role, conversation } = await memberConversation();
      const task = await call(people.other, 'tasks.create', { roleId: role.id, title: fresh('task') });
      return { role, conversation, task };
    },
    params: (f) => ({ id: f.role.id }),
    effect: async (f, result) => {
      expect(result).toEqual({ removed: true });
      expect((await call(people.member, 'roles.list', {})).map((r) => r.id)).not.toContain(f.role.id);
      expect((await refusal(call(people.member, 'conversations.get', { id: f.conversation.id }))).code).toBe(
        'not_found',
      );
      expect((await refusal(call(people.member, 'tasks.get', { id: f.task.id }))).code).toBe('not_found');
    },
  }),
  row({
    method: 'roles.token',
    expect: ownersOnly,
    setup: newRole,
    params: (role) => ({ id: role.id }),
    effect: (role, result) => {
      expect(result.token).toMatch(/^prl_/);
      const stored = installation.db
        .prepare('SELECT role_id, token_hash FROM role_tokens WHERE token_hash = ?')
        .get(sha256(result.token));
      expect(stored).toEqual({ role_id: role.id, token_hash: sha256(result.token) });
    },
  }),

  row({
    method: 'conversations.list',
    expect: everyone,
    setup: () => memberConversation('hello'),
    params: () => ({}),
    effect: (f, result, caller) => {
      for (const conversation of result) expect(conversation.personId).toBe(caller.id);
      expect(result.some((c) => c.id === f.conversation.id)).toBe(caller.id === people.member.id);
      expect(result).toHaveLength(count('SELECT count(*) AS n FROM conversations WHERE person_id = ?', caller.id));
    },
  }),
  row({
    method: 'conversations.open',
    expect: everyone,
    setup: newRole,
    params: (role) => ({ roleId: role.id }),
    effect: async (role, result, caller) => {
      expect(result).toMatchObject({ personId: caller.id, roleId: role.id, roleName: role.name });
      expect((await call(caller, 'conversations.open', { roleId: role.id })).id).toBe(result.id);
      expect((await call(caller, 'conversations.list', {})).map((c) => c.id)).toContain(result.id);
    },
  }),
  row({
    method: 'conversations.get',
    expect: itsPersonOnly,
    setup: () => memberConversation('hello get'),
    params: (f) => ({ id: f.conversation.id }),
    effect: (f, result) => {
      expect(result.conversation).toMatchObject({ id: f.conversation.id, personId: people.member.id });
      expect(result.messages[0]).toMatchObject({ body: 'hello get', author: { kind: 'person', id: people.member.id } });
    },
  }),
  row({
    method: 'conversations.send',
    expect: itsPersonOnly,
    setup: () => memberConversation(),
    params: (f) => ({ id: f.conversation.id, text: `ping ${f.conversation.id}` }),
    effect: async (f, result, caller) => {
      expect(result).toMatchObject({ conversationId: f.conversation.id, author: { kind: 'person', id: caller.id } });
      await waitFor('the echo', async () =>
        (await call(caller, 'conversations.get', { id: f.conversation.id })).messages.some(
          (m) => m.author.kind === 'role' && m.body === `echo: ping ${f.conversation.id}`,
        ),
      );
    },
  }),
  row({
    method: 'conversations.stop',
    expect: itsPersonOnly,
    setup: sleepingConversation,
    params: (f) => ({ id: f.conversation.id }),
    effect: async (f, result) => {
      expect(result).toEqual({ stopped: true });
      expect(groupAlive(f.pid)).toBe(false);
      const run = await conversationRun(f.conversation.id);
      expect(run.state).toBe('idle');
      expect(run.lastTurn?.status).toBe('stopped');
    },
    unchanged: async (f) => {
      expect((await conversationRun(f.conversation.id)).state).toBe('running');
      expect(groupAlive(f.pid)).toBe(true);
    },
    cleanup: (f) => call(people.member, 'conversations.stop', { id: f.conversation.id }),
  }),
  row({
    method: 'conversations.delete',
    expect: itsPersonOnly,
    setup: () => memberConversation('soon gone'),
    params: (f) => ({ id: f.conversation.id }),
    effect: async (f, result) => {
      expect(result).toEqual({ deleted: true });
      expect((await refusal(call(people.member, 'conversations.get', { id: f.conversation.id }))).code).toBe(
        'not_found',
      );
      expect((await call(people.member, 'conversations.list', {})).map((c) => c.id)).not.toContain(f.conversation.id);
      expect(count('SELECT count(*) AS n FROM messages WHERE conversation_id = ?', f.conversation.id)).toBe(0);
    },
  }),

  row({
    method: 'tasks.list',
    expect: everyone,
    setup: () => memberTask(),
    params: () => ({}),
    effect: (f, result) => {
      expect(result.map((t) => t.id)).toContain(f.task.id);
      expect(result).toHaveLength(count('SELECT count(*) AS n FROM tasks'));
    },
  }),
  row({
    method: 'tasks.create',
    expect: everyone,
    setup: newRole,
    params: (role) => ({ roleId: role.id, title: `for ${role.name}`, body: 'do it' }),
    effect: async (role, result, caller) => {
      expect(result).toMatchObject({
        roleId: role.id,
        title: `for ${role.name}`,
        body: 'do it',
        status: 'open',
        createdBy: caller.id,
      });
      expect((await call(people.other, 'tasks.list', {})).map((t) => t.id)).toContain(result.id);
    },
  }),
  row({
    method: 'tasks.get',
    expect: everyone,
    setup: () => memberTask('the body'),
    params: (f) => ({ id: f.task.id }),
    effect: (f, result) => {
      expect(result.task).toMatchObject({ id: f.task.id, body: 'the body', createdBy: people.member.id });
    },
  }),
  row({
    method: 'tasks.comment',
    expect: everyone,
    setup: () => memberTask(),
    params: (f) => ({ id: f.task.id, text: `note on ${f.task.id}` }),
    effect: async (f, result, caller) => {
      expect(result).toMatchObject({ taskId: f.task.id, kind: 'comment', author: { kind: 'person', id: caller.id } });
      const { log } = await call(people.member, 'tasks.get', { id: f.task.id });
      expect(log).toContainEqual(result);
    },
  }),
  row({
    method: 'tasks.finish',
    expect: creatorOrOwner,
    setup: () => memberTask(),
    params: (f) => ({ id: f.task.id }),
    effect: async (f, result, caller) => {
      expect(result).toMatchObject({ id: f.task.id, status: 'finished' });
      expect(result.finishedAt).not.toBeNull();
      const { task, log } = await call(people.other, 'tasks.get', { id: f.task.id });
      expect(task.status).toBe('finished');
      expect(log.some((e) => e.kind === 'status' && e.author.id === caller.id)).toBe(true);
    },
  }),
  row({
    method: 'tasks.stop',
    expect: everyone,
    setup: sleepingTask,
    params: (f) => ({ id: f.task.id }),
    effect: async (f, result) => {
      expect(result).toEqual({ stopped: true });
      expect(groupAlive(f.pid)).toBe(false);
      const run = await taskRun(f.task.id);
      expect(run.state).toBe('idle');
      expect(run.lastTurn?.status).toBe('stopped');
    },
    cleanup: (f) => call(people.member, 'tasks.stop', { id: f.task.id }),
  }),
  row({
    method: 'tasks.delete',
    expect: creatorOrOwner,
    setup: async () => {
      const fixture = await memberTask();
      const subtask = await call(people.other, 'tasks.create', {
        roleId: fixture.role.id,
        title: fresh('subtask'),
        parentId: fixture.task.id,
      });
      return { ...fixture, subtask };
    },
    params: (f) => ({ id: f.task.id }),
    effect: async (f, result) => {
      expect(result).toEqual({ deleted: true });
      for (const id of [f.task.id, f.subtask.id])
        expect((await refusal(call(people.other, 'tasks.get', { id }))).code).toBe('not_found');
    },
  }),
];

// ---- the tests --------------------------------------------------------------------

beforeAll(async () => {
  assertBuilt();
  log.setQuiet(true); // agents' slow-query warnings under load; errors still show
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-authz-'));
  installation = await openInstallation({ dataDir, name: 'alice', maxConcurrentTurns: 16, stopGraceMs: 500 });
  const owner = installation.owner();
  const member = (await call(owner, 'people.add', { name: 'bob', kind: 'member' })).person;
  const other = (await call(owner, 'people.add', { name: 'carol', kind: 'member' })).person;
  people = { owner, member, other };
});

afterAll(async () => {
  await installation?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const callerWords: Record<Caller, string> = {
  owner: 'the owner',
  member: 'a member who owns the object',
  other: 'another member',
};

describe('app API authorization', () => {
  it('has a row for every method of the contract but session.signIn', () => {
    const covered = rows.map((r) => r.method);
    expect(new Set(covered).size).toBe(covered.length);
    const contract = Object.keys(methods).filter((m) => m !== 'session.signIn');
    expect([...covered].sort()).toEqual(contract.sort());
  });

  for (const r of rows) {
    describe(r.method, () => {
      for (const caller of ['owner', 'member', 'other'] as const) {
        const outcome = r.expect[caller];
        const words = outcome === 'allowed' ? 'allows' : `refuses with ${outcome}`;
        it(`${words} ${callerWords[caller]}`, async () => {
          const fixture = await r.setup();
          try {
            const person = people[caller];
            if (outcome === 'allowed') {
              const result = await call(person, r.method, r.params(fixture));
              await r.effect(fixture, result, person);
            } else {
              const before = snapshot();
              const error = await refusal(call(person, r.method, r.params(fixture)));
              expect(error.code).toBe(outcome);
              expect(snapshot()).toEqual(before);
              await r.unchanged?.(fixture);
            }
          } finally {
            await r.cleanup?.(fixture);
          }
        });
      }

      it('refuses a caller who has not signed in, with unauthenticated', async () => {
        const fixture = await r.setup();
        try {
          const before = snapshot();
          const error = await refusal(call(null, r.method, r.params(fixture)));
          expect(error.code).toBe('unauthenticated');
          expect(snapshot()).toEqual(before);
          await r.unchanged?.(fixture);
        } finally {
          await r.cleanup?.(fixture);
        }
      });
    });
  }
});

describe('session.signIn', () => {
  it('refuses a token it never issued, and the session stays signed out', async () => {
    const session: ApiSession = { person: null };
    const error = await refusal(installation.call(session, 'session.signIn', { token: 'pst_not-a-real-token' }));
    expect(error.code).toBe('unauthenticated');
    expect(session.person).toBeNull();
    expect((await refusal(installation.call(session, 'session.whoami', {}))).code).toBe('unauthenticated');
  });

  it('signs in as the person a people.add token belongs to', async () => {
    const added = await call(people.owner, 'people.add', { name: fresh('newcomer'), kind: 'member' });
    const session: ApiSession = { person: null };
    expect(await installation.call(session, 'session.signIn', { token: added.token })).toEqual({
      person: added.person,
    });
    expect(session.person).toEqual(added.person);
    const whoami = (await installation.call(session, 'session.whoami', {})) as ResultOf<'session.whoami'>;
    expect(whoami.person).toEqual(added.person);
  });

  it('signs in as the owner with an owner token', async () => {
    const session = await signInAs(installation.issueOwnerToken('test'));
    expect(session.person).toEqual(people.owner);
  });

  it('ends a removed person’s session: every later call is unauthenticated', async () => {
    const added = await call(people.owner, 'people.add', { name: fresh('removed'), kind: 'member' });
    const session = await signInAs(added.token);
    const role = await newRole();
    await installation.call(session, 'conversations.open', { roleId: role.id });
    await call(people.owner, 'people.remove', { id: added.person.id });
    const tasksBefore = snapshot().tasks;
    expect((await refusal(installation.call(session, 'session.whoami', {}))).code).toBe('unauthenticated');
    expect(session.person).toBeNull();
    // A stale person object is not enough either: the person is read afresh on every call.
    const stale = installation.call({ person: added.person }, 'tasks.create', { roleId: role.id, title: 'sneaky' });
    expect((await refusal(stale)).code).toBe('unauthenticated');
    expect(snapshot().tasks).toEqual(tasksBefore);
    expect((await refusal(signInAs(added.token))).code).toBe('unauthenticated');
  });
});

describe('people.remove', () => {
  it('refuses an owner removing themself, with conflict, and changes nothing', async () => {
    const before = snapshot();
    const error = await refusal(call(people.owner, 'people.remove', { id: people.owner.id }));
    expect(error.code).toBe('conflict');
    expect(snapshot()).toEqual(before);
  });

  it('lets one owner remove another owner', async () => {
    const second = await call(people.owner, 'people.add', { name: fresh('co-owner'), kind: 'owner' });
    expect(await call(people.owner, 'people.remove', { id: second.person.id })).toEqual({ removed: true });
    expect(count("SELECT count(*) AS n FROM people WHERE kind = 'owner'")).toBe(1);
  });

  // Two owners removing each other at the same moment: the last-owner rule is the only
  // thing between them and an installation without owners. KNOWN BUG (reported with a
  // patch): `people.remove` checks the rule before it waits for the person's agents to
  // stop and deletes after, so both removals pass the check and both delete. Marked
  // `it.fails` until the patch lands; then make it a plain `it`. It runs on an
  // installation of its own, since the bug leaves that one without any owner.
  it('never removes the last owner, even when two owners remove each other at once', async () => {
    const ownDir = mkdtempSync(path.join(os.tmpdir(), 'parley-authz-race-'));
    const own = await openInstallation({ dataDir: ownDir, name: 'race' });
    try {
      const first = own.owner();
      const second = (
        (await own.call({ person: first }, 'people.add', { name: 'co-owner', kind: 'owner' })) as ResultOf<'people.add'>
      ).person;
      const [a, b] = await Promise.allSettled([
        own.call({ person: second }, 'people.remove', { id: first.id }),
        own.call({ person: first }, 'people.remove', { id: second.id }),
      ]);
      const owners = (own.db.prepare("SELECT count(*) AS n FROM people WHERE kind = 'owner'").get() as { n: number }).n;
      expect(owners).toBe(1);
      // One removal goes through; the other is refused: the last owner stays (conflict),
      // or its caller is no longer there to act (unauthenticated).
      const outcomes = [a, b].map((s) => (s.status === 'fulfilled' ? 'removed' : (s.reason as ApiError).code));
      expect(outcomes.filter((o) => o === 'removed')).toHaveLength(1);
      expect(['conflict', 'unauthenticated']).toContain(outcomes.find((o) => o !== 'removed'));
    } finally {
      await own.close();
      rmSync(ownDir, { recursive: true, force: true });
    }
  });
});

describe('deleting and removing', () => {
  it('deletes a task’s subtasks, however deep, and stops their agents', async () => {
    const { role, task } = await memberTask();
    const sub = await call(people.other, 'tasks.create', { roleId: role.id, title: fresh('sub'), parentId: task.id });
    const subsub = await call(people.owner, 'tasks.create', {
      roleId: role.id,
      title: fresh('subsub'),
      parentId: sub.id,
    });
    await waitFor('the first turn to end', async () =>
      (await call(people.member, 'tasks.get', { id: subsub.id })).log.some((entry) => entry.kind === 'output'),
    );
    await call(people.member, 'tasks.comment', { id: subsub.id, text: 'sleep 30' });
    const pid = await working(() => taskRun(subsub.id));
    expect((await call(people.member, 'tasks.get', { id: task.id })).subtasks.map((t) => t.id)).toEqual([sub.id]);

    expect(await call(people.member, 'tasks.delete', { id: task.id })).toEqual({ deleted: true });
    const ids = [task.id, sub.id, subsub.id];
    for (const id of ids) expect((await refusal(call(people.owner, 'tasks.get', { id }))).code).toBe('not_found');
    const listed = (await call(people.other, 'tasks.list', {})).map((t) => t.id);
    for (const id of ids) expect(listed).not.toContain(id);
    expect(groupAlive(pid)).toBe(false);
    const placeholders = ids.map(() => '?').join(',');
    expect(count(`SELECT count(*) AS n FROM task_log WHERE task_id IN (${placeholders})`, ...ids)).toBe(0);
    expect(
      count(`SELECT count(*) AS n FROM runs WHERE context_kind = 'task' AND context_id IN (${placeholders})`, ...ids),
    ).toBe(0);
  });

  it('removes a role with every person’s conversations and every task, and stops its agents', async () => {
    const { role, conversation, pid } = await sleepingConversation();
    const ownerConversation = await call(people.owner, 'conversations.open', { roleId: role.id });
    const task = await call(people.other, 'tasks.create', { roleId: role.id, title: fresh('task') });
    const subtask = await call(people.member, 'tasks.create', {
      roleId: role.id,
      title: fresh('sub'),
      parentId: task.id,
    });

    expect(await call(people.owner, 'roles.remove', { id: role.id })).toEqual({ removed: true });
    expect(groupAlive(pid)).toBe(false);
    expect((await refusal(call(people.member, 'conversations.get', { id: conversation.id }))).code).toBe('not_found');
    expect((await refusal(call(people.owner, 'conversations.get', { id: ownerConversation.id }))).code).toBe(
      'not_found',
    );
    for (const id of [task.id, subtask.id])
      expect((await refusal(call(people.other, 'tasks.get', { id }))).code).toBe('not_found');
    expect(count('SELECT count(*) AS n FROM conversations WHERE role_id = ?', role.id)).toBe(0);
    expect(count('SELECT count(*) AS n FROM tasks WHERE role_id = ?', role.id)).toBe(0);
    expect(count('SELECT count(*) AS n FROM runs WHERE role_id = ?', role.id)).toBe(0);
    expect((await refusal(call(people.owner, 'conversations.open', { roleId: role.id }))).code).toBe('not_found');
  });
});

describe('tokens at rest', () => {
  it('stores sign-in and role tokens only as hashes: not in any table, not in the database file', async () => {
    const added = await call(people.owner, 'people.add', { name: fresh('hashed'), kind: 'member' });
    const role = await newRole();
    const { token: roleToken } = await call(people.owner, 'roles.token', { id: role.id });
    const tokens = [added.token, roleToken];

    expect(
      installation.db.prepare('SELECT person_id FROM sign_in_tokens WHERE token_hash = ?').get(sha256(added.token)),
    ).toEqual({
      person_id: added.person.id,
    });
    expect(
      installation.db.prepare('SELECT role_id FROM role_tokens WHERE token_hash = ?').get(sha256(roleToken)),
    ).toEqual({
      role_id: role.id,
    });

    // Neither the token nor its random part is in any column of any table.
    const tables = installation.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
      name: string;
    }[];
    expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['sign_in_tokens', 'role_tokens']));
    for (const { name } of tables) {
      const dump = JSON.stringify(installation.db.prepare(`SELECT * FROM "${name}"`).all());
      for (const token of tokens) {
        expect(dump).not.toContain(token);
        expect(dump).not.toContain(token.slice(4));
      }
    }

    // Nor anywhere in the file's bytes, once the WAL is folded in (the hashes are, which
    // proves the file holds the latest data).
    const [checkpoint] = installation.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    expect(checkpoint?.busy).toBe(0);
    const file = path.join(dataDir, 'parley.db');
    const wal = `${file}-wal`;
    expect(existsSync(wal) ? statSync(wal).size : 0).toBe(0);
    const bytes = readFileSync(file);
    for (const token of tokens) {
      expect(bytes.indexOf(token.slice(4))).toBe(-1);
      expect(bytes.indexOf(sha256(token))).toBeGreaterThanOrEqual(0);
    }
  });
});
