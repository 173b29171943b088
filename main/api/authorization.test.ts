// Who may read and act (DESIGN §7), method by method: every app API method is called by
// the owner, by a member who owns the object in question, and by another member, on a
// real installation with a real SQLite file. A call that is allowed must show its
// effect; a refused one must carry the expected code and change nothing.
//
// Agent conversations (ADR 0035) and connections need a peer: the installation under
// test listens on loopback and is paired for real, over mutual TLS, with a second
// installation ("peer") that the read-only rows share; a row that pauses, revokes or
// otherwise changes a connection pairs a peer of its own for each call.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  methods,
  type AppEvent,
  type ChangedKind,
  type ErrorCode,
  type MethodName,
  type ParamsOf,
  type ResultOf,
} from '../../shared/api-contract';
import type {
  AgentSettings,
  ConnectionSummary,
  Conversation,
  Person,
  RoleView,
  RunSummary,
  Task,
  ThreadSummary,
} from '../../shared/domain';
import { decodeInvite } from '../engine/invitation';
import { insertRelay, listRelays } from '../store/queries/relays';
import { getRole } from '../store/queries/roles';
import { openInstallation, type Installation } from '../installation';
import { log } from '../log';
import { assertBuilt, projectRoot } from '../paths';
import { groupAlive } from '../runs/process-tree';
import { makeDataDir, removeDataDir } from '../../test-support/data-folder';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';
import type { ApiSession } from './session';

type Method = Exclude<MethodName, 'session.signIn'>;
type Caller = 'owner' | 'member' | 'other';
type Outcome = 'allowed' | Extract<ErrorCode, 'forbidden' | 'not_found'>;

interface Row<M extends Method, F> {
  method: M;
  /** Which case of the method, when it has several rows (agent conversations by root). */
  about?: string;
  expect: Record<Caller, Outcome>;
  /** Fresh objects for one call, made by the owner and the member as needed. */
  setup: () => F | Promise<F>;
  /**
   * When the fixtures are made (agent conversations are slow to make one by one):
   * `each` (the default), just before each call; `batch`, the row's four at once, before
   * its first call; `shared`, one for the row's four calls, which only read, made in
   * beforeAll alongside the other rows' shared ones.
   */
  fixtures?: 'each' | 'batch' | 'shared';
  params: (fixture: F) => ParamsOf<M>;
  /** What an allowed call must have done. */
  effect: (fixture: F, result: ResultOf<M>, caller: Person) => void | Promise<void>;
  /**
   * The change events an allowed call must send, and which of the three callers hear
   * each: exactly those who may read what changed (DESIGN §11.2).
   */
  events?: (fixture: F, result: ResultOf<M>, caller: Caller) => HeardEvent[];
  /** After a refusal, besides the unchanged store: what must still hold (an agent still working). */
  unchanged?: (fixture: F) => void | Promise<void>;
  cleanup?: (fixture: F) => unknown;
}
type AnyRow = Row<Method, unknown>;
interface HeardEvent {
  kind: ChangedKind;
  id: number;
  heardBy: readonly Caller[];
}
const all: readonly Caller[] = ['owner', 'member', 'other'];
const heard = (kind: ChangedKind, id: number, heardBy: readonly Caller[]): HeardEvent => ({ kind, id, heardBy });
const row = <M extends Method, F>(r: Row<M, F>): AnyRow => r as unknown as AnyRow;

const everyone: Record<Caller, Outcome> = { owner: 'allowed', member: 'allowed', other: 'allowed' };
const ownersOnly: Record<Caller, Outcome> = { owner: 'allowed', member: 'forbidden', other: 'forbidden' };
/** A conversation is its person's alone; everyone else, owners included, is told it does not exist. */
const itsPersonOnly: Record<Caller, Outcome> = { owner: 'not_found', member: 'allowed', other: 'not_found' };
/** Finishing and deleting a task: its creator (the member) or an owner. */
const creatorOrOwner: Record<Caller, Outcome> = { owner: 'allowed', member: 'allowed', other: 'forbidden' };
/** An agent conversation whose root is gone: owners read and stop it; to anyone else it does not exist. */
const ownersRead: Record<Caller, Outcome> = { owner: 'allowed', member: 'not_found', other: 'not_found' };

let dataDir: string;
/** The installation under test, "alice", listening for peers. */
let alice: TestInstallation;
let installation: Installation;
/** The peer the read-only rows share: "peer", exposing `researcher` to alice, who exposes `helper`. */
let peer: TestInstallation;
/** Alice's connection to `peer`. */
let peerConnectionId: number;
/** Peers still open, closed in afterAll if a row could not close its own. */
const remotes = new Set<TestInstallation>();
/** The fixtures of the rows whose calls only read, made in beforeAll. */
const sharedFixtures = new Map<AnyRow, Promise<unknown>>();
let people: Record<Caller, Person>;
/** Every change event sent, and those each caller's session heard. */
const emitted: AppEvent[] = [];
const heardBy: Record<Caller, AppEvent[]> = { owner: [], member: [], other: [] };
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
    connections: q(
      'SELECT id, fingerprint, name, address, status, queue_limit, revoked_at FROM connections ORDER BY id',
    ),
    exposedRoles: q('SELECT * FROM exposed_roles ORDER BY connection_id, role_id'),
    invitations: q('SELECT * FROM invitations ORDER BY id'),
    threads: q('SELECT id, status, close_reason, root_gone FROM threads ORDER BY id'),
    approvals: q('SELECT id, state, decided_by FROM approvals ORDER BY id'),
    readMarks: q('SELECT person_id, object_kind, object_id, content_id, event_id FROM read_marks ORDER BY 1, 2, 3'),
    readFloors: q('SELECT * FROM read_floors ORDER BY person_id'),
  };
}

const count = (sql: string, ...params: (string | number)[]) =>
  (installation.db.prepare(sql).get(...params) as { n: number }).n;

// ---- fixtures ---------------------------------------------------------------------

const newRole = () => call(people.owner, 'roles.create', { name: fresh('role'), agent: { adapter: 'scripted' } });

async function memberConversation(text?: string): Promise<{ role: RoleView; conversation: Conversation }> {
  const role = await newRole();
  const conversation = await call(people.member, 'conversations.open', { roleId: role.id });
  if (text !== undefined) await call(people.member, 'conversations.send', { id: conversation.id, text });
  return { role, conversation };
}

async function memberTask(body = ''): Promise<{ role: RoleView; task: Task }> {
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

// ---- fixtures: peers and agent conversations ---------------------------------------

/**
 * The agents of the agent-conversation rows, as shell scripts: a Node agent per turn
 * is too slow for this many rows on two cores. They read a turn's inputs as text
 * ("FROM: BODY"). A line "ask PEER/ROLE: TEXT" (after its sender) sends TEXT there,
 * "nap" keeps the agent busy (a real process to stop), anything else is only noted.
 */
const TALKER = String.raw`in=$(cat)
to=$(printf '%s\n' "$in" | sed -nE 's/^([^ :]+: )?ask ([^ :]+): .*$/\2/p' | head -n 1)
if [ -n "$to" ]; then
  exec parley send --to "$to" "$(printf '%s\n' "$in" | sed -nE 's/^([^ :]+: )?ask [^ :]+: (.*)$/\2/p' | head -n 1)"
fi
case "$in" in *"nap "*) exec sleep 120 ;; esac
echo noted`;
/** The peer's researcher answers every text at once: "answer: TEXT", TEXT being what its fence holds. */
const ANSWERER = String.raw`exec parley reply "answer: $(sed -n '/^<<<peer-text-/,/>>>$/{/^<<</d;/>>>$/d;p;}')"`;
const talker: AgentSettings = { adapter: 'command', command: ['sh', '-c', TALKER] };
const answerer: AgentSettings = { adapter: 'command', command: ['sh', '-c', ANSWERER] };
/** What makes the agent that gets the answer (or, in a thread the peer started, the question) nap. */
const NAP = 'nap 120';

const newTalker = () => call(people.owner, 'roles.create', { name: fresh('talker'), agent: talker });

interface ThreadFixture {
  thread: ThreadSummary;
  /** Someone who may read it: the member for the ones the member started, the owner for the peer's. */
  reader: Person;
  /** The question, or NAP. */
  question: string;
  /** The napping agent's process, for a busy one. */
  pid?: number;
}

const threadDetail = (f: Pick<ThreadFixture, 'thread' | 'reader'>) =>
  call(f.reader, 'threads.get', { id: f.thread.id });

/**
 * Waits for the agent conversation `pick` finds in `list`, then until its agent has
 * taken what came in: napping on it when `question` is NAP, or done with it (so no
 * agent writes anything while a row's call is checked).
 */
async function settled(
  reader: Person,
  list: ParamsOf<'threads.list'>,
  question: string,
  pick: (thread: ThreadSummary) => boolean = () => true,
): Promise<ThreadFixture> {
  const found = await alice.waitFor(
    async () => (await call(reader, 'threads.list', list)).find(pick),
    'the agent conversation',
  );
  const f = { thread: found, reader, question };
  if (question === NAP) return { ...f, pid: await working(async () => (await threadDetail(f)).thread.run) };
  // Done: what came in handled, and what went out (the reply guard's answer, DESIGN §11.7) delivered.
  const thread = await alice.waitFor(async () => {
    const { thread } = await threadDetail(f);
    const { received, handled, sent, queued } = thread.counts;
    return received === 0 && handled > 0 && sent === 0 && queued === 0 && thread.run.state === 'idle' && thread;
  }, 'its agent to be done');
  return { ...f, thread };
}

/** The member asks peer/researcher from their conversation: an agent conversation rooted there. */
async function conversationThread(question = fresh('question')) {
  const role = await newTalker();
  const conversation = await call(people.member, 'conversations.open', { roleId: role.id });
  await call(people.member, 'conversations.send', { id: conversation.id, text: `ask peer/researcher: ${question}` });
  const list = { root: { kind: 'conversation' as const, id: conversation.id } };
  return { role, conversation, ...(await settled(people.member, list, question)) };
}

/** The member gives a role a task that asks peer/researcher: an agent conversation rooted in the task. */
async function taskThread(question = fresh('question')) {
  const role = await newTalker();
  const task = await call(people.member, 'tasks.create', {
    roleId: role.id,
    title: fresh('task'),
    body: `ask peer/researcher: ${question}`,
  });
  return { role, task, ...(await settled(people.member, { root: { kind: 'task', id: task.id } }, question)) };
}

/** The peer's person asks alice/helper through a role of the peer's own: an agent conversation the peer started. */
async function peerAsks(text: string): Promise<string> {
  const asker = await peer.owner('roles.create', { name: fresh('asker'), agent: talker });
  const conversation = await peer.owner('conversations.open', { roleId: asker.id });
  await peer.owner('conversations.send', { id: conversation.id, text: `ask alice/helper: ${text}` });
  return asker.name;
}

async function peerStartedThread(question = fresh('question')) {
  const asker = await peerAsks(question);
  return settled(people.owner, { peerStarted: true }, question, (t) => t.peerRole === asker);
}

/** Alice's helper, asked by the peer, asks peer/researcher in turn: an agent conversation rooted in the peer's. */
async function relayThread(question = fresh('question')) {
  const asker = await peerAsks(`ask peer/researcher: ${question}`);
  const root = await alice.waitFor(
    async () => (await call(people.owner, 'threads.list', { peerStarted: true })).find((t) => t.peerRole === asker),
    'the agent conversation the peer started',
  );
  // The one the peer started is its own root, so it is listed under itself too.
  const list = { root: { kind: 'thread' as const, id: root.id } };
  return { root, ...(await settled(people.owner, list, question, (t) => t.startedBy === 'local')) };
}

/** The member deletes their conversation after its agent conversation is done: the root is gone. */
async function orphanedThread() {
  const f = await conversationThread();
  await call(people.member, 'conversations.delete', { id: f.conversation.id });
  const { thread } = await call(people.owner, 'threads.get', { id: f.thread.id });
  expect(thread).toMatchObject({ root: { gone: true }, status: 'closed' });
  return { ...f, thread };
}

/** What the allowed `threads.stop` of a napping agent must have done. */
async function expectStopped(f: ThreadFixture, result: ResultOf<'threads.stop'>, caller: Person) {
  expect(result).toEqual({ stopped: true });
  expect(groupAlive(f.pid!)).toBe(false);
  const { thread, texts } = await threadDetail(f);
  expect(thread.status).toBe('open');
  expect(thread.run.state).toBe('idle');
  expect(thread.run.lastTurn).toMatchObject({ status: 'stopped', reason: `Stopped by ${caller.name}` });
  // What it was given in that turn counts as handled (ADR 0035, Stop).
  expect(texts.filter((t) => t.direction === 'in').map((t) => t.state)).toEqual(['handled']);
}

/** After a refused `threads.stop`: the agent still naps. */
async function expectStillWorking(f: ThreadFixture) {
  expect((await threadDetail(f)).thread.run.state).toBe('running');
  expect(groupAlive(f.pid!)).toBe(true);
}

/**
 * The member asks a remote's role that naps on it: an ask rooted in the member's
 * conversation, delivered, with no answer, which can be withdrawn.
 */
async function unansweredAsk(): Promise<ThreadFixture & { remote: TestInstallation }> {
  const remote = await openRemote();
  await remote.owner('roles.create', { name: 'sleeper', agent: { adapter: 'command', command: ['sleep', '120'] } });
  await pair(remote, alice, { inviter: ['sleeper'] });
  const role = await newTalker();
  const conversation = await call(people.member, 'conversations.open', { roleId: role.id });
  const question = fresh('question');
  await call(people.member, 'conversations.send', {
    id: conversation.id,
    text: `ask ${remote.installation.name}/sleeper: ${question}`,
  });
  const thread = await alice.waitFor(async () => {
    const [t] = await call(people.member, 'threads.list', { root: { kind: 'conversation', id: conversation.id } });
    return t?.counts.acked === 1 ? t : undefined;
  }, 'the ask delivered');
  await remote.waitFor(async () => {
    const [t] = await remote.owner('threads.list', { peerStarted: true });
    return t?.run.state === 'running';
  }, 'the remote’s agent to nap on it');
  return { thread, reader: people.member, question, remote };
}

/** A peer of a row's own, closed (after the link is gone) by closeRemote. */
async function openRemote(): Promise<TestInstallation> {
  const remote = await openPeer(fresh('remote'));
  remotes.add(remote);
  return remote;
}

/** A peer of its own, paired with alice (the peer invites, alice's owner accepts), neither exposing a role. */
async function pairedRemote(): Promise<{ remote: TestInstallation; id: number }> {
  const remote = await openRemote();
  const { acceptorConnectionId } = await pair(remote, alice);
  return { remote, id: acceptorConnectionId };
}

/**
 * Alice revokes the remote (so she never dials it again once it is gone), and the remote
 * closes only once both sides have let go of the link, with no frame left in flight.
 */
async function closeRemote(remote: TestInstallation): Promise<void> {
  const ours = (await call(people.owner, 'connections.list', {})).filter(
    (c) => c.fingerprint === remote.installation.id,
  );
  for (const c of ours) if (c.status !== 'revoked') await call(people.owner, 'connections.revoke', { id: c.id });
  await remote.waitFor(
    async () => (await remote.owner('connections.list', {})).every((c) => c.status === 'revoked' && !c.online),
    'the remote to take the revocation',
  );
  await alice.waitFor(() => ours.every((c) => !installation.engine.isOnline(c.id)), 'alice to let go of the link');
  remotes.delete(remote);
  await remote.close();
}

const connection = async (id: number, person: Person = people.other): Promise<ConnectionSummary> => {
  const found = (await call(person, 'connections.list', {})).find((c) => c.id === id);
  expect(found).toBeDefined();
  return found!;
};

// ---- fixtures: what waits for approval ----------------------------------------------

/**
 * "gate", a peer of its own whose connection asks first both ways here: alice's agents'
 * sends to it are held, and its texts wait before alice's agents take them. It exposes
 * `quiet` (an agent that answers nothing); its askers ask alice/helper.
 */
let gate: Promise<{ remote: TestInstallation; id: number; name: string }> | undefined;
let gateConnectionId = 0;
function gatePeer() {
  gate ??= (async () => {
    const remote = await openRemote();
    await remote.owner('roles.create', { name: 'quiet', agent: { adapter: 'command', command: ['true'] } });
    const { acceptorConnectionId: id } = await pair(remote, alice, { inviter: ['quiet'], acceptor: ['helper'] });
    const { name } = await call(people.owner, 'connections.setPolicy', { id, outgoing: 'ask', incoming: 'ask' });
    gateConnectionId = id;
    return { remote, id, name };
  })();
  return gate;
}

/** The "always allow" rules stored, as the columns the rows check. */
const rules = () =>
  installation.db.prepare('SELECT peer_role, kind, root_kind, root_id, created_by FROM allow_rules ORDER BY id').all();
const forgetRules = () => installation.db.prepare('DELETE FROM allow_rules').run();
/** A rule for the shared peer's researcher's texts, whose connection holds nothing: it changes no other row. */
const addRule = (root: { kind: 'conversation'; id: number } | null, by: Person): number =>
  Number(
    installation.db
      .prepare(
        `INSERT INTO allow_rules (connection_id, peer_role, kind, root_kind, root_id, created_by, created_by_name)
         VALUES (?, 'researcher', 'incoming', ?, ?, ?, ?)`,
      )
      .run(peerConnectionId, root?.kind ?? null, root?.id ?? null, by.id, by.name).lastInsertRowid,
  );
const gateId = () => gateConnectionId;

/** The approval that waits for the held text of `thread` (direction `direction`), once it is there. */
async function heldIn(reader: Person, threadRowId: number, direction: 'out' | 'in') {
  return alice.waitFor(
    async () => {
      const list = await call(reader, 'approvals.list', {});
      const kind = direction === 'out' ? 'outgoing' : 'incoming';
      return list.find((a) => a.kind === kind && a.thread?.id === threadRowId && a.state === 'pending');
    },
    `the held ${direction === 'out' ? 'send' : 'text'}`,
  );
}

/** The member's talker asks gate/quiet from their conversation: the send is held. */
async function heldInMemberConversation() {
  const { name } = await gatePeer();
  const role = await newTalker();
  const conversation = await call(people.member, 'conversations.open', { roleId: role.id });
  await call(people.member, 'conversations.send', { id: conversation.id, text: `ask ${name}/quiet: ${fresh('q')}` });
  const thread = await alice.waitFor(
    async () => (await call(people.member, 'threads.list', { root: { kind: 'conversation', id: conversation.id } }))[0],
    'the agent conversation',
  );
  return { thread, approval: await heldIn(people.member, thread.id, 'out') };
}

/** The member's task asks gate/quiet: the send is held, and every member reads the task. */
async function heldInTask() {
  const { name } = await gatePeer();
  const role = await newTalker();
  const task = await call(people.member, 'tasks.create', {
    roleId: role.id,
    title: fresh('task'),
    body: `ask ${name}/quiet: ${fresh('q')}`,
  });
  const thread = await alice.waitFor(
    async () => (await call(people.member, 'threads.list', { root: { kind: 'task', id: task.id } }))[0],
    'the agent conversation',
  );
  return { thread, approval: await heldIn(people.member, thread.id, 'out') };
}

/** gate's asker asks alice/helper: its text waits at alice before helper takes it. */
async function heldIncomingFromPeer() {
  const { remote } = await gatePeer();
  // A role of its own: one conversation per fixture, so each text is a turn's only one.
  const asker = await remote.owner('roles.create', { name: fresh('asker'), agent: talker });
  const conversation = await remote.owner('conversations.open', { roleId: asker.id });
  const question = fresh('q');
  await remote.owner('conversations.send', { id: conversation.id, text: `ask alice/helper: ${question}` });
  const approval = await alice.waitFor(async () => {
    const list = await call(people.owner, 'approvals.list', {});
    return list.find((a) => a.kind === 'incoming' && a.text?.preview === question);
  }, 'the held text from gate');
  const { thread } = await call(people.owner, 'threads.get', { id: approval.thread!.id });
  return { thread, approval };
}

/** helper's answer to gate (its final output, sent as the reply) is held: an owner's to let out. */
async function heldReplyToPeer() {
  const incoming = await heldIncomingFromPeer();
  await call(people.owner, 'approvals.decide', { id: incoming.approval.id, approve: true });
  return { thread: incoming.thread, approval: await heldIn(people.owner, incoming.thread.id, 'out') };
}

/** The member's agent asks to use a tool (as the acp worker does) and waits. */
async function permissionInMemberConversation() {
  const role = await call(people.owner, 'roles.create', {
    name: fresh('builder'),
    agent: {
      adapter: 'command',
      command: [process.execPath, path.join(projectRoot, 'dist', 'testing', 'permission-asker.js')],
    },
  });
  const conversation = await call(people.member, 'conversations.open', { roleId: role.id });
  const title = fresh('tool');
  await call(people.member, 'conversations.send', { id: conversation.id, text: title });
  const approval = await alice.waitFor(
    async () => (await call(people.member, 'approvals.list', {})).find((a) => a.title === title),
    'the permission request',
  );
  return { conversation, approval };
}

/** An outgoing text's state after a person's word on it. */
const outState = (seq: number, threadRowId: number) =>
  installation.db
    .prepare("SELECT state, reason FROM texts WHERE thread_id = ? AND direction = 'out' AND seq = ?")
    .get(threadRowId, seq) as { state: string; reason: string | null };
const inState = (seq: number, threadRowId: number) =>
  installation.db
    .prepare("SELECT state, reason FROM texts WHERE thread_id = ? AND direction = 'in' AND seq = ?")
    .get(threadRowId, seq) as { state: string; reason: string | null };

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
    events: (_f, result) => [heard('person', result.person.id, all)],
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
    events: (f) => [heard('person', f.person.id, all)],
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
    method: 'people.reissueToken',
    expect: ownersOnly,
    setup: () => call(people.owner, 'people.add', { name: fresh('reissued'), kind: 'member' }),
    params: (f) => ({ id: f.person.id }),
    effect: async (f, result) => {
      expect(result.token).toMatch(/^pst_/);
      expect((await refusal(signInAs(f.token))).code).toBe('unauthenticated');
      expect((await signInAs(result.token)).person).toEqual(f.person);
      expect(count('SELECT count(*) AS n FROM sign_in_tokens WHERE person_id = ?', f.person.id)).toBe(1);
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
    events: (_f, result) => [heard('role', result.id, all)],
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
    events: (role) => [heard('role', role.id, all)],
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
    events: (f) => [heard('role', f.role.id, all)],
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
    events: (_f, result, caller) => [heard('conversation', result.id, [caller])],
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
    events: (f) => [heard('conversation', f.conversation.id, ['member'])],
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
    events: (f) => [heard('conversation', f.conversation.id, ['member'])],
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
    events: (f) => [heard('conversation', f.conversation.id, ['member'])],
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
    events: (_f, result) => [heard('task', result.id, all)],
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
    events: (f) => [heard('task', f.task.id, all)],
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
    events: (f) => [heard('task', f.task.id, all)],
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
    events: (f) => [heard('task', f.task.id, all)],
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
    events: (f) => [heard('task', f.task.id, all), heard('task', f.subtask.id, all)],
    // Its subtask is the member's too: deleting someone else's is refused (below).
    setup: async () => {
      const fixture = await memberTask();
      const subtask = await call(people.member, 'tasks.create', {
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

  // Agent conversations: a person reads one when they can read its root (ADR 0035).
  row({
    method: 'threads.list',
    about: 'rooted in a person’s conversation',
    expect: itsPersonOnly,
    setup: () => conversationThread(),
    fixtures: 'shared',
    params: (f) => ({ root: { kind: 'conversation', id: f.conversation.id } }),
    effect: (f, result) => {
      expect(result).toHaveLength(1);
      expect(result[0]).toMatchObject({
        id: f.thread.id,
        root: { kind: 'conversation', id: f.conversation.id, gone: false },
        startedBy: 'local',
        localRole: f.role.name,
        peerRole: 'researcher',
        connection: { id: peerConnectionId, name: 'peer' },
      });
    },
  }),
  row({
    method: 'threads.get',
    about: 'rooted in a person’s conversation',
    expect: itsPersonOnly,
    setup: () => conversationThread(),
    fixtures: 'shared',
    params: (f) => ({ id: f.thread.id }),
    effect: (f, result) => {
      expect(result.thread).toEqual(f.thread);
      expect(result.texts.map((t) => [t.direction, t.body, t.state])).toEqual([
        ['out', f.question, 'acked'],
        ['in', `answer: ${f.question}`, 'handled'],
      ]);
      expect(result.runLog.map((entry) => entry.output)).toEqual(['noted']);
    },
  }),
  row({
    method: 'threads.stop',
    about: 'rooted in a person’s conversation',
    expect: itsPersonOnly,
    events: (f) => [heard('thread', f.thread.id, ['member'])],
    setup: () => conversationThread(NAP),
    fixtures: 'batch',
    params: (f) => ({ id: f.thread.id }),
    effect: expectStopped,
    unchanged: expectStillWorking,
    cleanup: (f) => call(f.reader, 'threads.stop', { id: f.thread.id }),
  }),

  row({
    method: 'ledger.get',
    about: 'of a person’s conversation',
    expect: itsPersonOnly,
    setup: () => conversationThread(),
    fixtures: 'shared',
    params: (f) => ({ root: { kind: 'conversation', id: f.conversation.id }, format: 'markdown' }),
    effect: (f, result) => {
      expect(result.ledger.entries.map((e) => [e.threadId, e.peer, e.peerRole])).toEqual([
        [f.thread.id, 'peer', 'researcher'],
      ]);
      expect(result.ledger.entries[0]!.texts.map((t) => [t.direction, t.body, t.state])).toEqual([
        ['out', f.question, 'acked'],
        ['in', `answer: ${f.question}`, 'handled'],
      ]);
      expect(result.markdown).toContain(`> ${f.question}`);
    },
  }),
  row({
    method: 'ledger.get',
    about: 'of a task',
    expect: everyone,
    setup: () => taskThread(),
    fixtures: 'shared',
    params: (f) => ({ root: { kind: 'task', id: f.task.id } }),
    effect: (f, result) => {
      expect(result.ledger.root).toMatchObject({ kind: 'task', id: f.task.id });
      expect(result.ledger.entries.map((e) => e.threadId)).toEqual([f.thread.id]);
      expect(result.markdown).toBeNull();
    },
  }),
  row({
    method: 'threads.withdraw',
    about: 'rooted in a person’s conversation',
    expect: itsPersonOnly,
    events: (f) => [heard('thread', f.thread.id, ['member'])],
    setup: unansweredAsk,
    fixtures: 'batch',
    params: (f) => ({ id: f.thread.id }),
    effect: async (f, result, caller) => {
      expect(result).toEqual({ withdrawn: true });
      expect((await threadDetail(f)).thread.withdrawn).toMatchObject({ seq: 1, by: caller.name });
      // The remote stops its agent as its own Stop would.
      await f.remote.waitFor(async () => {
        const [t] = await f.remote.owner('threads.list', { peerStarted: true });
        return t?.run.lastTurn?.status === 'stopped' && t.run.lastTurn.reason === 'Withdrawn by alice';
      }, 'the remote to stop its agent');
    },
    unchanged: async (f) => expect((await threadDetail(f)).thread.withdrawn ?? null).toBeNull(),
    cleanup: (f) => closeRemote(f.remote),
  }),

  row({
    method: 'threads.list',
    about: 'rooted in a task',
    expect: everyone,
    setup: () => taskThread(),
    fixtures: 'shared',
    params: (f) => ({ root: { kind: 'task', id: f.task.id } }),
    effect: (f, result) => {
      expect(result.map((t) => t.id)).toEqual([f.thread.id]);
      expect(result[0]).toMatchObject({ root: { kind: 'task', id: f.task.id, gone: false }, localRole: f.role.name });
    },
  }),
  row({
    method: 'threads.get',
    about: 'rooted in a task',
    expect: everyone,
    setup: () => taskThread(),
    fixtures: 'shared',
    params: (f) => ({ id: f.thread.id }),
    effect: (f, result) => {
      expect(result.thread).toEqual(f.thread);
      expect(result.texts.map((t) => t.body)).toEqual([f.question, `answer: ${f.question}`]);
    },
  }),
  row({
    method: 'threads.stop',
    about: 'rooted in a task',
    expect: everyone,
    events: (f) => [heard('thread', f.thread.id, all)],
    setup: () => taskThread(NAP),
    fixtures: 'batch',
    params: (f) => ({ id: f.thread.id }),
    effect: expectStopped,
    unchanged: expectStillWorking,
    cleanup: (f) => call(f.reader, 'threads.stop', { id: f.thread.id }),
  }),

  row({
    method: 'threads.list',
    about: 'started by the peer',
    expect: everyone,
    setup: () => peerStartedThread(),
    fixtures: 'shared',
    params: () => ({ peerStarted: true }),
    effect: (f, result) => {
      expect(result.find((t) => t.id === f.thread.id)).toEqual(f.thread);
      for (const thread of result) expect(thread.startedBy).toBe('peer');
      expect(result).toHaveLength(count("SELECT count(*) AS n FROM threads WHERE started_by = 'peer'"));
    },
  }),
  row({
    method: 'threads.get',
    about: 'started by the peer',
    expect: everyone,
    setup: () => peerStartedThread(),
    fixtures: 'shared',
    params: (f) => ({ id: f.thread.id }),
    effect: (f, result) => {
      expect(result.thread).toEqual(f.thread);
      expect(result.thread).toMatchObject({
        startedBy: 'peer',
        localRole: 'helper',
        root: { kind: 'thread', id: f.thread.id },
      });
      // The helper's final output went back as its reply (the reply guard, DESIGN §11.7).
      expect(result.texts.map((t) => [t.direction, t.body, t.state])).toEqual([
        ['in', f.question, 'handled'],
        ['out', 'noted', 'acked'],
      ]);
    },
  }),
  row({
    method: 'threads.stop',
    about: 'started by the peer',
    expect: everyone,
    events: (f) => [heard('thread', f.thread.id, all)],
    setup: () => peerStartedThread(NAP),
    fixtures: 'batch',
    params: (f) => ({ id: f.thread.id }),
    effect: expectStopped,
    unchanged: expectStillWorking,
    cleanup: (f) => call(f.reader, 'threads.stop', { id: f.thread.id }),
  }),

  row({
    method: 'threads.list',
    about: 'rooted in one the peer started',
    expect: everyone,
    setup: () => relayThread(),
    fixtures: 'shared',
    params: (f) => ({ root: { kind: 'thread', id: f.root.id } }),
    effect: (f, result) => {
      expect(result.find((t) => t.id === f.thread.id)).toEqual(f.thread);
      for (const thread of result)
        expect(thread.root).toEqual({ kind: 'thread', id: f.root.id, gone: false, title: null });
    },
  }),
  row({
    method: 'threads.get',
    about: 'rooted in one the peer started',
    expect: everyone,
    setup: () => relayThread(),
    fixtures: 'shared',
    params: (f) => ({ id: f.thread.id }),
    effect: (f, result) => {
      expect(result.thread).toEqual(f.thread);
      expect(result.thread).toMatchObject({ startedBy: 'local', localRole: 'helper', peerRole: 'researcher' });
      expect(result.texts.map((t) => t.body)).toEqual([f.question, `answer: ${f.question}`]);
    },
  }),
  row({
    method: 'threads.stop',
    about: 'rooted in one the peer started',
    expect: everyone,
    events: (f) => [heard('thread', f.thread.id, all)],
    setup: () => relayThread(NAP),
    fixtures: 'batch',
    params: (f) => ({ id: f.thread.id }),
    effect: expectStopped,
    unchanged: expectStillWorking,
    cleanup: (f) => call(f.reader, 'threads.stop', { id: f.thread.id }),
  }),

  row({
    method: 'threads.list',
    about: 'whose root was deleted',
    expect: ownersOnly,
    setup: orphanedThread,
    fixtures: 'shared',
    params: () => ({ orphaned: true }),
    effect: (f, result) => {
      expect(result.find((t) => t.id === f.thread.id)).toEqual(f.thread);
      for (const thread of result) expect(thread.root.gone).toBe(true);
      expect(result).toHaveLength(count('SELECT count(*) AS n FROM threads WHERE root_gone = 1'));
    },
  }),
  row({
    method: 'threads.page',
    about: 'rooted in a person’s conversation',
    expect: itsPersonOnly,
    setup: () => conversationThread(),
    fixtures: 'shared',
    params: (f) => ({ root: { kind: 'conversation', id: f.conversation.id }, limit: 10 }),
    effect: (f, result) => {
      expect(result.total).toBe(1);
      expect(result.threads.map((t) => t.id)).toEqual([f.thread.id]);
    },
  }),
  row({
    method: 'threads.page',
    about: 'rooted in a task',
    expect: everyone,
    setup: () => taskThread(),
    fixtures: 'shared',
    params: (f) => ({ root: { kind: 'task', id: f.task.id } }),
    effect: (f, result) => {
      expect(result).toMatchObject({ total: 1, threads: [{ id: f.thread.id }] });
    },
  }),
  row({
    method: 'threads.page',
    about: 'started by the peer',
    expect: everyone,
    setup: () => peerStartedThread(),
    fixtures: 'shared',
    params: () => ({ peerStarted: true, offset: 0, limit: 500 }),
    effect: (f, result) => {
      expect(result.total).toBe(count("SELECT count(*) AS n FROM threads WHERE started_by = 'peer'"));
      expect(result.threads.find((t) => t.id === f.thread.id)?.startedBy).toBe('peer');
    },
  }),
  row({
    method: 'threads.page',
    about: 'whose root was deleted',
    expect: ownersOnly,
    setup: orphanedThread,
    fixtures: 'shared',
    params: () => ({ orphaned: true }),
    effect: (f, result) => {
      expect(result.total).toBe(count('SELECT count(*) AS n FROM threads WHERE root_gone = 1'));
      for (const thread of result.threads) expect(thread.root.gone).toBe(true);
      expect(result.threads.some((t) => t.id === f.thread.id)).toBe(true);
    },
  }),
  row({
    method: 'threads.get',
    about: 'whose root was deleted',
    expect: ownersRead,
    setup: orphanedThread,
    fixtures: 'shared',
    params: (f) => ({ id: f.thread.id }),
    effect: (f, result) => {
      expect(result.thread).toEqual(f.thread);
      expect(result.thread).toMatchObject({ status: 'closed', closeReason: 'root deleted' });
      expect(result.texts.map((t) => t.body)).toEqual([f.question, `answer: ${f.question}`]);
    },
  }),
  row({
    method: 'threads.stop',
    about: 'whose root was deleted',
    expect: ownersRead,
    setup: orphanedThread,
    fixtures: 'shared',
    params: (f) => ({ id: f.thread.id }),
    // Deleting the root already ended its agent; the stop finds nothing to stop.
    effect: async (f, result) => {
      expect(result).toEqual({ stopped: false });
      expect((await call(people.owner, 'threads.get', { id: f.thread.id })).thread).toEqual(f.thread);
    },
  }),

  row({
    method: 'connections.list',
    expect: everyone,
    setup: () => null,
    params: () => ({}),
    effect: (_f, result) => {
      expect(result.find((c) => c.id === peerConnectionId)).toMatchObject({
        name: 'peer',
        fingerprint: peer.installation.id,
        status: 'active',
        online: true,
        exposedRoles: ['helper'],
        peerRoles: [{ name: 'researcher' }],
      });
      expect(result).toHaveLength(count('SELECT count(*) AS n FROM connections'));
    },
  }),
  row({
    method: 'connections.invite',
    expect: ownersOnly,
    setup: newRole,
    params: (role) => ({ roles: [role.name], expiresInMinutes: 30 }),
    effect: (role, result, caller) => {
      const invite = decodeInvite(result.code);
      expect(invite).toMatchObject({
        v: 2,
        name: 'alice',
        address: installation.peerAddress,
        fingerprint: installation.id,
        expires: result.expiresAt,
      });
      expect(decodeInvite(result.link)).toEqual(invite);
      const minutes = (Date.parse(result.expiresAt) - Date.now()) / 60_000;
      expect(minutes).toBeGreaterThan(29);
      expect(minutes).toBeLessThanOrEqual(30);
      const stored = installation.db
        .prepare('SELECT roles, created_by, used_at FROM invitations WHERE secret_hash = ?')
        .get(sha256(invite.secret));
      expect(stored).toEqual({ roles: JSON.stringify([role.name]), created_by: caller.id, used_at: null });
    },
  }),
  row({
    method: 'connections.accept',
    expect: ownersOnly,
    events: (_f, result) => [heard('connection', result.id, all)],
    setup: async () => {
      const remote = await openRemote();
      const { code } = await remote.owner('connections.invite', { roles: [] });
      return { remote, code };
    },
    params: (f) => ({ code: f.code, roles: ['helper'] }),
    effect: async (f, result) => {
      expect(result).toMatchObject({
        name: f.remote.installation.name,
        fingerprint: f.remote.installation.id,
        status: 'active',
        exposedRoles: ['helper'],
      });
      expect(await connection(result.id)).toMatchObject({ status: 'active', online: true });
      const theirs = await f.remote.waitFor(
        async () => (await f.remote.owner('connections.list', {})).find((c) => c.peerRoles.length > 0),
        'the inviter to see alice and her roles',
      );
      expect(theirs).toMatchObject({ name: 'alice', fingerprint: installation.id, peerRoles: [{ name: 'helper' }] });
    },
    unchanged: async (f) => {
      expect(await f.remote.owner('connections.list', {})).toEqual([]);
    },
    cleanup: (f) => closeRemote(f.remote),
  }),
  row({
    method: 'connections.pause',
    expect: ownersOnly,
    events: (f) => [heard('connection', f.id, all)],
    setup: pairedRemote,
    params: (f) => ({ id: f.id }),
    effect: async (f, result) => {
      expect(result).toMatchObject({ id: f.id, status: 'paused' });
      expect((await connection(f.id)).status).toBe('paused');
    },
    unchanged: async (f) => {
      expect((await connection(f.id)).status).toBe('active');
    },
    cleanup: (f) => closeRemote(f.remote),
  }),
  row({
    method: 'connections.unpause',
    expect: ownersOnly,
    events: (f) => [heard('connection', f.id, all)],
    setup: async () => {
      const f = await pairedRemote();
      await call(people.owner, 'connections.pause', { id: f.id });
      return f;
    },
    params: (f) => ({ id: f.id }),
    effect: async (f, result) => {
      expect(result).toMatchObject({ id: f.id, status: 'active' });
      expect((await connection(f.id)).status).toBe('active');
    },
    unchanged: async (f) => {
      expect((await connection(f.id)).status).toBe('paused');
    },
    cleanup: (f) => closeRemote(f.remote),
  }),
  row({
    method: 'connections.revoke',
    expect: ownersOnly,
    events: (f) => [heard('connection', f.id, all)],
    setup: pairedRemote,
    params: (f) => ({ id: f.id }),
    effect: async (f, result) => {
      expect(result).toMatchObject({ id: f.id, status: 'revoked' });
      expect((await connection(f.id)).status).toBe('revoked');
      await f.remote.waitFor(
        async () => (await f.remote.owner('connections.list', {}))[0]?.status === 'revoked',
        'the peer to hear of the revocation',
      );
    },
    unchanged: async (f) => {
      expect(await connection(f.id)).toMatchObject({ status: 'active', online: true });
      expect((await f.remote.owner('connections.list', {}))[0]?.status).toBe('active');
    },
    cleanup: (f) => closeRemote(f.remote),
  }),
  row({
    method: 'connections.expose',
    expect: ownersOnly,
    events: (f) => [heard('connection', f.id, all)],
    setup: async () => ({ ...(await pairedRemote()), role: await newRole() }),
    params: (f) => ({ id: f.id, roles: [f.role.name] }),
    effect: async (f, result) => {
      expect(result).toMatchObject({ id: f.id, exposedRoles: [f.role.name] });
      expect((await connection(f.id)).exposedRoles).toEqual([f.role.name]);
      await f.remote.waitFor(
        async () => (await f.remote.owner('connections.list', {}))[0]?.peerRoles.some((r) => r.name === f.role.name),
        'the peer to see the role',
      );
    },
    unchanged: async (f) => {
      expect((await connection(f.id)).exposedRoles).toEqual([]);
      expect((await f.remote.owner('connections.list', {}))[0]?.peerRoles).toEqual([]);
    },
    cleanup: (f) => closeRemote(f.remote),
  }),
  row({
    method: 'connections.setQueueLimit',
    expect: ownersOnly,
    events: (f) => [heard('connection', f.id, all)],
    setup: pairedRemote,
    params: (f) => ({ id: f.id, limit: 7 }),
    effect: async (f, result) => {
      expect(result).toMatchObject({ id: f.id, queue: { used: 0, limit: 7 } });
      expect((await connection(f.id)).queue).toEqual({ used: 0, limit: 7 });
    },
    unchanged: async (f) => {
      expect((await connection(f.id)).queue).toEqual({ used: 0, limit: 100 });
    },
    cleanup: (f) => closeRemote(f.remote),
  }),

  row({
    method: 'connections.setPolicy',
    expect: ownersOnly,
    events: (f) => [heard('connection', f.id, all)],
    setup: pairedRemote,
    params: (f) => ({ id: f.id, outgoing: 'ask' }),
    effect: async (f, result) => {
      expect(result).toMatchObject({ id: f.id, policy: { outgoing: 'ask', incoming: 'run' } });
      expect((await connection(f.id)).policy).toEqual({ outgoing: 'ask', incoming: 'run' });
    },
    unchanged: async (f) => {
      expect((await connection(f.id)).policy).toEqual({ outgoing: 'send', incoming: 'run' });
    },
    cleanup: (f) => closeRemote(f.remote),
  }),

  row({
    method: 'connections.setTrust',
    expect: ownersOnly,
    events: (f) => [heard('connection', f.id, all)],
    setup: pairedRemote,
    params: (f) => ({ id: f.id, level: 'work' }),
    effect: async (f, result) => {
      expect(result).toMatchObject({ id: f.id, trust: 'work' });
      expect((await connection(f.id)).trust).toBe('work');
    },
    unchanged: async (f) => {
      // Members read the level; only an owner changes it.
      expect((await connection(f.id)).trust).toBe('answer');
    },
    cleanup: (f) => closeRemote(f.remote),
  }),
  row({
    method: 'connections.setSandbox',
    expect: ownersOnly,
    events: (f) => [heard('connection', f.id, all)],
    setup: pairedRemote,
    params: (f) => ({ id: f.id, required: false }),
    effect: (f, result) => {
      expect(result).toEqual({ id: f.id, required: false });
      expect(count('SELECT count(*) AS n FROM connections WHERE id = ? AND sandbox_required = 0', f.id)).toBe(1);
    },
    unchanged: (f) => {
      expect(count('SELECT count(*) AS n FROM connections WHERE id = ? AND sandbox_required = 1', f.id)).toBe(1);
    },
    cleanup: (f) => closeRemote(f.remote),
  }),
  row({
    method: 'sandbox.get',
    expect: everyone,
    setup: () => null,
    params: () => ({}),
    effect: (_f, result) => {
      expect(result.available).toBe(installation.sandbox.available);
    },
  }),

  row({
    method: 'approvals.list',
    expect: everyone,
    fixtures: 'shared',
    setup: async () => ({ mine: await heldInMemberConversation(), reply: await heldReplyToPeer() }),
    params: () => ({}),
    effect: (f, result, caller) => {
      const mine = result.find((a) => a.id === f.mine.approval.id);
      const reply = result.find((a) => a.id === f.reply.approval.id);
      // The member's own held send: only theirs to see and decide.
      if (caller.id === people.member.id) expect(mine).toMatchObject({ canDecide: true, kind: 'outgoing' });
      else expect(mine).toBeUndefined();
      // What alice's agent sends to a peer that asked: everyone sees it, owners decide.
      expect(reply).toMatchObject({ kind: 'outgoing', canDecide: caller.kind === 'owner' });
    },
  }),
  row({
    method: 'approvals.decide',
    about: 'a send held in the member’s conversation',
    expect: itsPersonOnly,
    fixtures: 'batch',
    events: (f) => [heard('approval', f.approval.id, ['member']), heard('thread', f.thread.id, ['member'])],
    setup: heldInMemberConversation,
    params: (f) => ({ id: f.approval.id, approve: true }),
    effect: (f, result) => {
      expect(result).toMatchObject({ id: f.approval.id, state: 'approved', decidedBy: people.member.name });
      expect(outState(1, f.thread.id).state).not.toBe('held');
    },
    unchanged: (f) => expect(outState(1, f.thread.id)).toEqual({ state: 'held', reason: null }),
  }),
  row({
    method: 'approvals.decide',
    about: 'a send held in a task',
    expect: everyone,
    fixtures: 'batch',
    events: (f) => [heard('approval', f.approval.id, all)],
    setup: heldInTask,
    params: (f) => ({ id: f.approval.id, approve: false }),
    effect: (f, result, caller) => {
      expect(result).toMatchObject({ state: 'denied', decidedBy: caller.name });
      expect(outState(1, f.thread.id)).toEqual({ state: 'failed', reason: 'denied' });
    },
    unchanged: (f) => expect(outState(1, f.thread.id)).toEqual({ state: 'held', reason: null }),
  }),
  row({
    method: 'approvals.decide',
    about: 'a reply held for a peer that asked: an owner’s to allow',
    expect: ownersOnly,
    fixtures: 'batch',
    events: (f) => [heard('approval', f.approval.id, all)],
    setup: heldReplyToPeer,
    params: (f) => ({ id: f.approval.id, approve: true }),
    effect: (f, result) => {
      expect(result).toMatchObject({ state: 'approved' });
      expect(outState(1, f.thread.id).state).not.toBe('held');
    },
    unchanged: (f) => expect(outState(1, f.thread.id)).toEqual({ state: 'held', reason: null }),
  }),
  row({
    method: 'approvals.decide',
    about: 'a text from a peer held before the agent takes it',
    expect: everyone,
    fixtures: 'batch',
    events: (f) => [heard('approval', f.approval.id, all)],
    setup: heldIncomingFromPeer,
    params: (f) => ({ id: f.approval.id, approve: false }),
    effect: (f, result) => {
      expect(result).toMatchObject({ kind: 'incoming', state: 'denied' });
      expect(inState(1, f.thread.id)).toEqual({ state: 'handled', reason: 'denied' });
    },
    unchanged: (f) => expect(inState(1, f.thread.id)).toEqual({ state: 'held', reason: null }),
  }),
  row({
    method: 'approvals.decide',
    about: 'an agent’s request to use a tool in the member’s conversation',
    expect: itsPersonOnly,
    fixtures: 'batch',
    events: (f) => [heard('approval', f.approval.id, ['member'])],
    setup: permissionInMemberConversation,
    params: (f) => ({ id: f.approval.id, approve: true }),
    effect: async (f, result) => {
      expect(result).toMatchObject({ kind: 'permission', state: 'approved' });
      await waitFor('the agent to hear it', async () =>
        (await call(people.member, 'conversations.get', { id: f.conversation.id })).messages.some(
          (m) => m.body === `approved by ${people.member.name}`,
        ),
      );
    },
    unchanged: (f) =>
      expect(installation.db.prepare('SELECT state FROM approvals WHERE id = ?').pluck().get(f.approval.id)).toBe(
        'pending',
      ),
  }),

  row({
    method: 'approvals.decide',
    about: 'approve and always allow the peer role within its task: whoever decides',
    expect: everyone,
    fixtures: 'batch',
    events: (f) => [heard('approval', f.approval.id, all), heard('connection', gateId(), all)],
    setup: heldInTask,
    params: (f) => ({ id: f.approval.id, approve: true, remember: 'root' }),
    effect: (f, result, caller) => {
      expect(result).toMatchObject({ state: 'approved', decidedBy: caller.name });
      expect(rules()).toEqual([
        { peer_role: 'quiet', kind: 'outgoing', root_kind: 'task', root_id: f.approval.root.id, created_by: caller.id },
      ]);
    },
    unchanged: (f) => {
      expect(rules()).toEqual([]);
      expect(outState(1, f.thread.id)).toEqual({ state: 'held', reason: null });
    },
    cleanup: forgetRules,
  }),
  row({
    method: 'approvals.decide',
    about: 'approve and always allow the peer role everywhere: owners only',
    expect: ownersOnly,
    // One at a time: the owner's rule lets through what else waits from the peer role.
    setup: heldInTask,
    params: (f) => ({ id: f.approval.id, approve: true, remember: 'peer-role' }),
    effect: (_f, result, caller) => {
      expect(result).toMatchObject({ state: 'approved' });
      expect(rules()).toEqual([
        { peer_role: 'quiet', kind: 'outgoing', root_kind: null, root_id: null, created_by: caller.id },
      ]);
    },
    unchanged: (f) => {
      // Refused as a whole: the text is not approved without the rule either.
      expect(rules()).toEqual([]);
      expect(outState(1, f.thread.id)).toEqual({ state: 'held', reason: null });
    },
    cleanup: forgetRules,
  }),
  row({
    method: 'allowRules.list',
    expect: everyone,
    setup: async () => {
      const { conversation } = await memberConversation();
      const everywhere = addRule(null, people.owner);
      const inMine = addRule({ kind: 'conversation', id: conversation.id }, people.member);
      return { everywhere, inMine };
    },
    params: () => ({ connectionId: peerConnectionId }),
    effect: (f, result, caller) => {
      // A rule that holds everywhere is the connection's, read by all; one in a conversation, by its reader.
      const ids = result.map((rule) => rule.id).sort((a, b) => a - b);
      expect(ids).toEqual(caller.id === people.member.id ? [f.everywhere, f.inMine] : [f.everywhere]);
      expect(result.find((rule) => rule.id === f.everywhere)).toMatchObject({
        peer: expect.stringMatching(/\/researcher$/) as string,
        kind: 'incoming',
        root: null,
        createdBy: people.owner.name,
        canRemove: caller.kind === 'owner',
      });
    },
    cleanup: forgetRules,
  }),
  row({
    method: 'allowRules.remove',
    expect: creatorOrOwner,
    setup: () => ({ id: addRule(null, people.member) }),
    params: (f) => ({ id: f.id }),
    effect: (_f, result) => {
      expect(result).toEqual({ removed: true });
      expect(rules()).toEqual([]);
    },
    unchanged: () => expect(rules()).toHaveLength(1),
    cleanup: forgetRules,
  }),
  row({
    method: 'notifications.get',
    expect: everyone,
    setup: () => null,
    params: () => ({}),
    effect: (_f, result) => {
      expect(result.kinds).toContainEqual({ kind: 'answer', notify: true });
      expect(result.connections).toContainEqual(expect.objectContaining({ id: peerConnectionId, notify: true }));
    },
  }),
  row({
    method: 'notifications.set',
    expect: everyone,
    setup: () => null,
    params: () => ({
      kinds: [{ kind: 'answer', notify: false }],
      connections: [{ id: peerConnectionId, notify: false }],
    }),
    effect: async (_f, result, caller) => {
      expect(result.kinds).toContainEqual({ kind: 'answer', notify: false });
      expect(result.connections).toContainEqual(expect.objectContaining({ id: peerConnectionId, notify: false }));
      // Each person's own: nobody else's changed.
      for (const other of Object.values(people).filter((p) => p.id !== caller.id))
        expect((await call(other, 'notifications.get', {})).kinds).toContainEqual({ kind: 'answer', notify: true });
    },
    unchanged: () => expect(count('SELECT count(*) AS n FROM notification_prefs')).toBe(0),
    cleanup: () => installation.db.prepare('DELETE FROM notification_prefs').run(),
  }),

  row({
    method: 'attention.list',
    expect: everyone,
    setup: async () => {
      const fixture = await memberConversation('hello');
      await waitFor('the role’s answer', async () =>
        (await call(people.member, 'conversations.get', { id: fixture.conversation.id })).messages.some(
          (m) => m.author.kind === 'role',
        ),
      );
      return fixture;
    },
    fixtures: 'shared',
    params: () => ({}),
    // What waits on each is only of what they read: the member's answer is news to the member alone.
    effect: (f, result, caller) => {
      const answer = result.items.find((i) => i.kind === 'answer' && i.object.id === f.conversation.id);
      expect(Boolean(answer)).toBe(caller.id === people.member.id);
      expect(result.marks.some((m) => m.object.kind === 'conversation' && m.object.id === f.conversation.id)).toBe(
        caller.id === people.member.id,
      );
      for (const item of result.items)
        if (item.object.kind === 'conversation')
          expect(
            count('SELECT count(*) AS n FROM conversations WHERE id = ? AND person_id = ?', item.object.id, caller.id),
          ).toBe(1);
    },
  }),
  row({
    method: 'attention.markRead',
    about: 'a person’s conversation',
    expect: itsPersonOnly,
    setup: async () => {
      const fixture = await memberConversation('hello');
      await waitFor('the answer to wait on the member', async () =>
        (await call(people.member, 'attention.list', {})).items.some((i) => i.object.id === fixture.conversation.id),
      );
      return fixture;
    },
    params: (f) => ({ kind: 'conversation', id: f.conversation.id }),
    effect: async (f) => {
      const after = await call(people.member, 'attention.list', {});
      expect(after.items.some((i) => i.object.kind === 'conversation' && i.object.id === f.conversation.id)).toBe(
        false,
      );
    },
  }),
  row({
    method: 'attention.markRead',
    about: 'a task',
    expect: everyone,
    setup: async () => {
      const fixture = await memberTask();
      await waitFor('the task’s news', async () =>
        (await call(people.other, 'attention.list', {})).items.some(
          (i) => i.object.kind === 'task' && i.object.id === fixture.task.id,
        ),
      );
      return fixture;
    },
    params: (f) => ({ kind: 'task', id: f.task.id }),
    // Read by the caller, and by nobody else on their behalf.
    effect: async (f, _result, caller) => {
      const has = async (person: Person) =>
        (await call(person, 'attention.list', {})).items.some(
          (i) => i.object.kind === 'task' && i.object.id === f.task.id,
        );
      expect(await has(caller)).toBe(false);
      if (caller.id !== people.other.id) expect(await has(people.other)).toBe(true);
    },
  }),
  row({
    method: 'attention.markRead',
    about: 'an agent conversation rooted in a person’s conversation',
    expect: itsPersonOnly,
    setup: () => conversationThread(),
    fixtures: 'shared',
    params: (f) => ({ kind: 'thread', id: f.thread.id }),
    effect: async (f) => {
      const after = await call(people.member, 'attention.list', {});
      expect(after.marks.some((m) => m.object.kind === 'thread' && m.object.id === f.thread.id)).toBe(false);
    },
  }),
  row({
    method: 'attention.markRead',
    about: 'an agent conversation the peer started',
    expect: everyone,
    setup: () => peerStartedThread(),
    fixtures: 'shared',
    params: (f) => ({ kind: 'thread', id: f.thread.id }),
    effect: async (f, _result, caller) => {
      const after = await call(caller, 'attention.list', {});
      expect(after.items.some((i) => i.object.kind === 'thread' && i.object.id === f.thread.id)).toBe(false);
    },
  }),
  row({
    method: 'attention.markRead',
    about: 'an agent conversation whose root was deleted',
    expect: ownersRead,
    setup: orphanedThread,
    fixtures: 'shared',
    params: (f) => ({ kind: 'thread', id: f.thread.id }),
    effect: async (f) => {
      const after = await call(people.owner, 'attention.list', {});
      expect(after.marks.some((m) => m.object.kind === 'thread' && m.object.id === f.thread.id)).toBe(false);
    },
  }),
  row({
    method: 'attention.markRead',
    about: 'what a peer did to a connection',
    expect: ownersOnly,
    setup: () => null,
    params: () => ({ kind: 'connection', id: peerConnectionId }),
    effect: async () => {
      const after = await call(people.owner, 'attention.list', {});
      expect(after.items.some((i) => i.object.kind === 'connection' && i.object.id === peerConnectionId)).toBe(false);
    },
  }),
  row({
    method: 'attention.markRead',
    about: 'every agent conversation peers started',
    expect: everyone,
    setup: () => peerStartedThread(),
    fixtures: 'shared',
    params: () => ({ kind: 'peerStarted' }),
    effect: async (_f, _result, caller) => {
      const after = await call(caller, 'attention.list', {});
      expect(after.marks.filter((m) => m.peerStarted)).toEqual([]);
    },
  }),
  row({
    method: 'attention.markRead',
    about: 'everything',
    expect: everyone,
    setup: () => null,
    params: () => ({ kind: 'all' }),
    effect: (_f, _result, caller) => {
      expect(count('SELECT count(*) AS n FROM read_marks WHERE person_id = ?', caller.id)).toBe(0);
      const floor = installation.db
        .prepare('SELECT message_id FROM read_floors WHERE person_id = ?')
        .pluck()
        .get(caller.id);
      expect(floor).toBeGreaterThan(0);
    },
  }),

  row({
    method: 'network.get',
    expect: everyone,
    setup: () => null,
    params: () => ({}),
    effect: (_f, result) => {
      expect(result).toMatchObject({
        configuredBy: 'settings',
        listening: installation.peerAddress,
        invitationAddress: installation.peerAddress,
      });
    },
  }),
  row({
    method: 'network.update',
    expect: ownersOnly,
    setup: () => null,
    // The address it has already, written out: nothing moves, so the peer stays online for the other rows.
    params: () => ({ advertise: installation.peerAddress! }),
    effect: async (_f, result) => {
      expect(result).toMatchObject({
        advertise: installation.peerAddress,
        invitationAddress: installation.peerAddress,
      });
      await call(people.owner, 'network.update', { advertise: null });
    },
    unchanged: () => {
      expect(installation.network.status().advertise).toBeNull();
    },
  }),
  row({
    method: 'network.check',
    expect: ownersOnly,
    setup: () => null,
    params: () => ({}),
    effect: (_f, result) => {
      expect(result.check).toMatchObject({ address: installation.peerAddress, reachable: true });
    },
  }),

  row({
    method: 'relays.list',
    expect: everyone,
    setup: () => insertRelay(installation.db, randomBytes(32).toString('hex'), 'relay.example:1', people.owner.id),
    params: () => ({}),
    effect: (f, result) => {
      // Off the DHT here, so nobody could be asked whether the relay answers.
      expect(result).toContainEqual({
        id: f.id,
        key: f.key,
        address: 'relay.example:1',
        addedAt: f.added_at,
        answers: null,
      });
    },
  }),
  row({
    method: 'relays.add',
    expect: ownersOnly,
    setup: () => ({ key: randomBytes(32).toString('hex') }),
    params: (f) => ({ key: f.key, address: 'relay.example:2' }),
    effect: (f, result) => {
      expect(result).toMatchObject({ key: f.key, address: 'relay.example:2', answers: null });
      expect(listRelays(installation.db).map((r) => r.key)).toContain(f.key);
    },
    events: (_f, result) => [heard('relays', result.id, all)],
  }),
  row({
    method: 'relays.remove',
    expect: ownersOnly,
    setup: () => insertRelay(installation.db, randomBytes(32).toString('hex'), null, people.owner.id),
    params: (f) => ({ id: f.id }),
    effect: (f, result) => {
      expect(result).toEqual({ removed: true });
      expect(listRelays(installation.db).map((r) => r.id)).not.toContain(f.id);
    },
    events: (f) => [heard('relays', f.id, all)],
    unchanged: (f) => {
      expect(listRelays(installation.db).map((r) => r.id)).toContain(f.id);
    },
  }),

  row({
    method: 'invitations.list',
    expect: everyone,
    setup: async () => {
      const role = await newRole();
      return { role, invitation: await call(people.owner, 'connections.invite', { roles: [role.name] }) };
    },
    params: () => ({}),
    effect: (f, result) => {
      const listed = result.find((i) => i.expiresAt === f.invitation.expiresAt && i.roles[0] === f.role.name);
      expect(listed).toMatchObject({ createdBy: { id: people.owner.id, name: people.owner.name } });
      expect(JSON.stringify(result)).not.toContain(f.invitation.code);
    },
  }),
  row({
    method: 'invitations.cancel',
    expect: ownersOnly,
    setup: async () => {
      await call(people.owner, 'connections.invite', {});
      return installation.db.prepare('SELECT max(id) AS id FROM invitations').get() as { id: number };
    },
    params: (f) => ({ id: f.id }),
    effect: async (f, result) => {
      expect(result).toEqual({ cancelled: true });
      expect(count('SELECT count(*) AS n FROM invitations WHERE id = ?', f.id)).toBe(0);
      expect((await call(people.other, 'invitations.list', {})).map((i) => i.id)).not.toContain(f.id);
    },
  }),
  row({
    method: 'connections.remove',
    expect: ownersOnly,
    setup: async () => {
      const f = await pairedRemote();
      await call(people.owner, 'connections.revoke', { id: f.id });
      return f;
    },
    params: (f) => ({ id: f.id }),
    effect: async (f, result) => {
      expect(result).toEqual({ removed: true });
      expect((await call(people.other, 'connections.list', {})).map((c) => c.id)).not.toContain(f.id);
      expect(count('SELECT count(*) AS n FROM connections WHERE id = ? AND removed_at IS NOT NULL', f.id)).toBe(1);
    },
    unchanged: async (f) => {
      expect((await connection(f.id)).status).toBe('revoked');
    },
    cleanup: (f) => closeRemote(f.remote),
  }),

  row({
    method: 'search',
    // Everyone may search; each finds only what they read: the member's conversation is theirs alone.
    expect: everyone,
    setup: async () => {
      const word = fresh('quetzal').replace('-', '');
      const { conversation } = await memberConversation(`${word} in a conversation`);
      const { task } = await memberTask(`${word} in a task`);
      return { word, conversation, task };
    },
    params: (f) => ({ query: f.word }),
    effect: (f, result, caller) => {
      const found = result.hits.map((hit) => `${hit.kind} ${hit.id}`).sort();
      const expected = [`task ${f.task.id}`];
      if (caller.id === people.member.id) expected.push(`conversation ${f.conversation.id}`);
      expect(found).toEqual(expected.sort());
    },
  }),

  row({
    method: 'firstRun.get',
    expect: everyone,
    setup: () => null,
    params: () => ({}),
    effect: (_f, result, caller) => {
      expect(result.dismissed).toBe(
        count('SELECT count(*) AS n FROM first_run_dismissals WHERE person_id = ?', caller.id) > 0,
      );
      // Set up without a first run (no default role): no checklist is offered.
      expect(result.offered).toBe(false);
      expect(result.steps.connect).toBe(true);
      expect(result.role?.id).toBe(
        (installation.db.prepare('SELECT min(id) AS id FROM roles').get() as { id: number }).id,
      );
    },
  }),
  row({
    method: 'firstRun.dismiss',
    // Each person hides their own checklist, and no one else's.
    expect: everyone,
    setup: () => null,
    params: () => ({}),
    effect: async (_f, result, caller) => {
      expect(result.dismissed).toBe(true);
      for (const person of Object.values(people))
        expect((await call(person, 'firstRun.get', {})).dismissed).toBe(
          count('SELECT count(*) AS n FROM first_run_dismissals WHERE person_id = ?', person.id) > 0,
        );
      expect(count('SELECT count(*) AS n FROM first_run_dismissals WHERE person_id = ?', caller.id)).toBe(1);
    },
  }),
];

// ---- the tests --------------------------------------------------------------------

beforeAll(async () => {
  assertBuilt();
  log.setQuiet(true); // agents' slow-query warnings under load; errors still show
  dataDir = makeDataDir('parley-authz-');
  // Settings of its own, as the desktop app has them, so that network.update is allowed for owners.
  alice = await openPeer('alice', { dataDir, maxConcurrentTurns: 16, stopGraceMs: 500, peers: { kind: 'remembered' } });
  installation = alice.installation;
  const owner = installation.owner();
  const member = (await call(owner, 'people.add', { name: 'bob', kind: 'member' })).person;
  const other = (await call(owner, 'people.add', { name: 'carol', kind: 'member' })).person;
  people = { owner, member, other };
  installation.events.observe((event) => emitted.push(event));
  for (const caller of all) installation.subscribe({ person: people[caller] }, (event) => heardBy[caller].push(event));
  peer = await openPeer('peer', { maxConcurrentTurns: 16 });
  remotes.add(peer);
  await peer.owner('roles.create', { name: 'researcher', agent: answerer });
  await call(owner, 'roles.create', { name: 'helper', agent: talker });
  peerConnectionId = (await pair(peer, alice, { inviter: ['researcher'], acceptor: ['helper'] })).acceptorConnectionId;
  // All at once, and settled before the first row: no agent writes while a row checks.
  for (const r of rows) if (r.fixtures === 'shared') sharedFixtures.set(r, Promise.resolve().then(r.setup));
  await Promise.allSettled(sharedFixtures.values());
}, 60_000); // eleven agent conversations between two installations, on a busy machine

afterAll(async () => {
  try {
    for (const remote of remotes) await closeRemote(remote);
  } finally {
    for (const remote of remotes) await remote.close();
    await alice?.close();
    if (dataDir) removeDataDir(dataDir);
  }
});

const title = (r: AnyRow) => (r.about ? `${r.method} (${r.about})` : r.method);

const callerWords: Record<Caller, string> = {
  owner: 'the owner',
  member: 'a member who owns the object',
  other: 'another member',
};

describe('app API authorization', () => {
  it('has a row for every method of the contract but session.signIn, and one row per case', () => {
    const titles = rows.map(title);
    expect(new Set(titles).size).toBe(titles.length);
    const covered = new Set(rows.map((r) => r.method));
    const contract = Object.keys(methods).filter((m) => m !== 'session.signIn');
    expect([...covered].sort()).toEqual(contract.sort());
  });

  /** Where each event log stood before a call. */
  const mark = () => ({
    emitted: emitted.length,
    heard: { owner: heardBy.owner.length, member: heardBy.member.length, other: heardBy.other.length },
  });

  /** Each expected event was sent, and heard by exactly the callers who may read what changed. */
  async function expectHeard(from: ReturnType<typeof mark>, expected: HeardEvent[]) {
    const is = (e: HeardEvent) => (event: AppEvent) =>
      event.type === 'changed' && event.kind === e.kind && event.id === e.id;
    for (const e of expected) {
      await waitFor(`a ${e.kind} ${e.id} event`, () => emitted.slice(from.emitted).some(is(e)));
      for (const caller of all)
        expect(heardBy[caller].slice(from.heard[caller]).some(is(e)), `${caller} hears ${e.kind} ${e.id}`).toBe(
          e.heardBy.includes(caller),
        );
    }
  }

  /** Refused: the code, and nothing people write or read in connections.list changed. */
  async function expectRefused(person: Person | null, r: AnyRow, fixture: unknown, code: ErrorCode) {
    const before = snapshot();
    const connectionsBefore = await call(people.owner, 'connections.list', {});
    const error = await refusal(call(person, r.method, r.params(fixture)));
    expect(error.code).toBe(code);
    expect(snapshot()).toEqual(before);
    expect(await call(people.owner, 'connections.list', {})).toEqual(connectionsBefore);
    await r.unchanged?.(fixture);
  }

  for (const r of rows) {
    describe(title(r), () => {
      let batch: Promise<unknown[]> | undefined;
      /** The fixture of the row's call number `i` (the signed-out one is the fourth). */
      const setup = (i: number): Promise<unknown> => {
        if (r.fixtures === 'shared') return sharedFixtures.get(r)!;
        if (r.fixtures === 'batch')
          return (batch ??= Promise.all([0, 1, 2, 3].map(() => Promise.resolve().then(r.setup)))).then((all) => all[i]);
        return Promise.resolve().then(r.setup);
      };
      const cleanup = r.fixtures === 'shared' ? undefined : r.cleanup;

      for (const [i, caller] of (['owner', 'member', 'other'] as const).entries()) {
        const outcome = r.expect[caller];
        const words = outcome === 'allowed' ? 'allows' : `refuses with ${outcome}`;
        it(`${words} ${callerWords[caller]}`, async () => {
          const fixture = await setup(i);
          try {
            const person = people[caller];
            if (outcome === 'allowed') {
              const from = mark();
              const result = await call(person, r.method, r.params(fixture));
              await r.effect(fixture, result, person);
              if (r.events) await expectHeard(from, r.events(fixture, result, caller));
            } else await expectRefused(person, r, fixture, outcome);
          } finally {
            await cleanup?.(fixture);
          }
        });
      }

      it('refuses a caller who has not signed in, with unauthenticated', async () => {
        const fixture = await setup(3);
        try {
          await expectRefused(null, r, fixture, 'unauthenticated');
        } finally {
          await cleanup?.(fixture);
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

describe('sessions bound to their sign-in token', () => {
  it('checks the token on every call: once it is gone, the session ends with the next call', async () => {
    const added = await call(people.owner, 'people.add', { name: fresh('bound'), kind: 'member' });
    const session = await signInAs(added.token);
    installation.db.prepare('DELETE FROM sign_in_tokens WHERE person_id = ?').run(added.person.id);
    const error = await refusal(installation.call(session, 'session.whoami', {}));
    expect(error).toMatchObject({ code: 'unauthenticated', message: 'your sign-in token was replaced' });
    expect(session.person).toBeNull();
    expect((await call(people.owner, 'people.list', {})).map((p) => p.id)).toContain(added.person.id);
  });

  it('hears nothing once its person is removed, not even the removal', async () => {
    const added = await call(people.owner, 'people.add', { name: fresh('leaving'), kind: 'member' });
    const session = await signInAs(added.token);
    const ended: string[] = [];
    session.onEnd = (reason) => ended.push(reason);
    const heard: AppEvent[] = [];
    const off = installation.subscribe(session, (event) => heard.push(event));
    const from = emitted.length;
    await call(people.owner, 'tasks.create', { roleId: (await newRole()).id, title: fresh('before') });
    expect(heard.length).toBeGreaterThan(0);
    const before = heard.length;
    await call(people.owner, 'people.remove', { id: added.person.id });
    expect(ended).toEqual(['you were removed from this installation']);
    expect(session.person).toBeNull();
    await call(people.owner, 'tasks.create', { roleId: (await newRole()).id, title: fresh('after') });
    expect(
      emitted.slice(from).some((e) => e.type === 'changed' && e.kind === 'person' && e.id === added.person.id),
    ).toBe(true);
    expect(heard.length).toBe(before);
    off();
  });
});

describe('roles.list: what owners and members see of a role', () => {
  it('shows both the same role: environment names as set, never a value, never the API key', async () => {
    const secret = 'sk-authz-0f9e8d7c6b5a';
    const withEnv = await call(people.owner, 'roles.create', {
      name: fresh('keyed'),
      agent: { adapter: 'command', command: ['true'], env: { TOKEN: secret, MODE: 'fast' } },
    });
    const withKey = await call(people.owner, 'roles.create', {
      name: fresh('llm'),
      agent: { adapter: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKey: secret },
    });
    const ownerView = await call(people.owner, 'roles.list', {});
    const memberView = await call(people.member, 'roles.list', {});
    expect(memberView).toEqual(ownerView);
    expect(JSON.stringify(ownerView)).not.toContain(secret);
    expect(JSON.stringify(ownerView)).not.toContain('fast');
    expect(ownerView.find((r) => r.id === withEnv.id)?.agent).toEqual({
      adapter: 'command',
      command: ['true'],
      env: { TOKEN: { set: true }, MODE: { set: true } },
    });
    const keyed = ownerView.find((r) => r.id === withKey.id);
    expect(keyed).toMatchObject({ hasApiKey: true, agent: { adapter: 'openai-compatible', model: 'm' } });
    expect(keyed?.agent).not.toHaveProperty('apiKey');
    // Stored as given: the agent gets them.
    expect(getRole(installation.db, withEnv.id)?.agent).toMatchObject({ env: { TOKEN: secret, MODE: 'fast' } });
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
  // thing between them and an installation without owners. `people.remove` waits for the
  // person's agents to stop between its first check and the delete, so it checks again
  // inside the deleting transaction. It runs on an installation of its own, since a
  // regression would leave that one without any owner.
  it('never removes the last owner, even when two owners remove each other at once', async () => {
    const ownDir = makeDataDir('parley-authz-race-');
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
      removeDataDir(ownDir);
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

    // An owner may delete every task of the tree, so the owner may delete it whole.
    expect(await call(people.owner, 'tasks.delete', { id: task.id })).toEqual({ deleted: true });
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

  it('refuses a member deleting their task when a subtask is someone else’s, naming it, and deletes nothing', async () => {
    const { role, task } = await memberTask();
    const mine = await call(people.member, 'tasks.create', {
      roleId: role.id,
      title: fresh('mine'),
      parentId: task.id,
    });
    const theirs = await call(people.other, 'tasks.create', {
      roleId: role.id,
      title: 'carol’s part',
      parentId: mine.id,
    });
    const before = snapshot();
    const error = await refusal(call(people.member, 'tasks.delete', { id: task.id }));
    expect(error.code).toBe('forbidden');
    expect(error.message).toContain(`"carol’s part" (#${theirs.id}, made by carol)`);
    expect(snapshot()).toEqual(before);
    for (const id of [task.id, mine.id, theirs.id])
      expect((await call(people.other, 'tasks.get', { id })).task.id).toBe(id);
    // Once its creator deletes theirs, the member may delete the rest.
    expect(await call(people.other, 'tasks.delete', { id: theirs.id })).toEqual({ deleted: true });
    expect(await call(people.member, 'tasks.delete', { id: task.id })).toEqual({ deleted: true });
    for (const id of [task.id, mine.id])
      expect((await refusal(call(people.owner, 'tasks.get', { id }))).code).toBe('not_found');
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
