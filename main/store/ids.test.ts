// Ids are never handed out again (DESIGN §11.1), on a real installation paired with a
// real peer: a deleted conversation's or task's agent conversations keep naming their
// root by id, so a new conversation or task that got that id would show them — another
// person's exchanges — under itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MethodName, ParamsOf, ResultOf } from '../../shared/api-contract';
import type { AgentSettings, Person, ThreadSummary } from '../../shared/domain';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';

/** Alice's role: sends "ask PEER/ROLE: TEXT" (a line of its input) there, and only notes anything else. */
const TALKER = String.raw`in=$(cat)
to=$(printf '%s\n' "$in" | sed -nE 's/^([^ :]+: )?ask ([^ :]+): .*$/\2/p' | head -n 1)
if [ -n "$to" ]; then
  exec parley send --to "$to" "$(printf '%s\n' "$in" | sed -nE 's/^([^ :]+: )?ask [^ :]+: (.*)$/\2/p' | head -n 1)"
fi
echo noted`;
/** The peer's researcher answers every text at once, with what the text's fence holds. */
const ANSWERER = String.raw`exec parley reply "answer: $(sed -n '/^<<<peer-text-/,/>>>$/{/^<<</d;/>>>$/d;p;}')"`;
const talker: AgentSettings = { adapter: 'command', command: ['sh', '-c', TALKER] };
const answerer: AgentSettings = { adapter: 'command', command: ['sh', '-c', ANSWERER] };

type Caller = <M extends MethodName>(method: M, params: ParamsOf<M>) => Promise<ResultOf<M>>;

describe('ids are never handed out again', () => {
  let alice: TestInstallation;
  let peer: TestInstallation;
  let roleId: number;
  let max: { person: Person; call: Caller };
  let mia: { person: Person; call: Caller };

  beforeAll(async () => {
    alice = await openPeer('alice');
    peer = await openPeer('peer');
    await peer.owner('roles.create', { name: 'researcher', agent: answerer });
    roleId = (await alice.owner('roles.create', { name: 'assistant', agent: talker })).id;
    await pair(peer, alice, { inviter: ['researcher'] });
    const member = async (name: string) => {
      const { person } = await alice.owner('people.add', { name, kind: 'member' });
      return { person, call: alice.as(person) };
    };
    max = await member('max');
    mia = await member('mia');
  }, 60_000);

  afterAll(async () => {
    await alice?.close();
    await peer?.close();
  });

  /** The agent conversation under `root` once the peer's answer is in it. */
  const answered = (call: Caller, root: ParamsOf<'threads.list'>) =>
    alice.waitFor(async () => {
      const [thread] = await call('threads.list', root);
      return thread && thread.counts.received + thread.counts.handled > 0 ? thread : undefined;
    }, 'the peer’s answer');

  it('never gives a deleted conversation’s id to a new one, so its agent conversations stay out of it', async () => {
    const maxConversation = await max.call('conversations.open', { roleId });
    await max.call('conversations.send', { id: maxConversation.id, text: 'ask peer/researcher: the plan of max' });
    const thread = await answered(max.call, { root: { kind: 'conversation', id: maxConversation.id } });
    await max.call('conversations.delete', { id: maxConversation.id });

    const miaConversation = await mia.call('conversations.open', { roleId });
    const root = { kind: 'conversation' as const, id: miaConversation.id };
    expect(await mia.call('threads.page', { root })).toEqual({ total: 0, threads: [] });
    expect(await mia.call('threads.list', { root })).toEqual([]);
    expect(miaConversation.id).toBeGreaterThan(maxConversation.id);
    // The agent conversation still names max's conversation, which is gone for good: owners read it.
    const { thread: orphan } = await alice.owner('threads.get', { id: thread.id });
    expect(orphan.root).toEqual({
      kind: 'conversation',
      id: maxConversation.id,
      gone: true,
      title: 'max’s conversation with assistant',
    });
    await expect(mia.call('threads.get', { id: thread.id })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('never gives a deleted task’s id to a new one, so its agent conversations stay out of it', async () => {
    const task = await max.call('tasks.create', {
      roleId,
      title: 'first',
      body: 'ask peer/researcher: the numbers of max',
    });
    const thread: ThreadSummary = await answered(max.call, { root: { kind: 'task', id: task.id } });
    await max.call('tasks.delete', { id: task.id });

    const next = await mia.call('tasks.create', { roleId, title: 'second' });
    const root = { kind: 'task' as const, id: next.id };
    expect(await mia.call('threads.page', { root })).toEqual({ total: 0, threads: [] });
    expect(await mia.call('threads.list', { root })).toEqual([]);
    expect(next.id).toBeGreaterThan(task.id);
    const { thread: orphan } = await alice.owner('threads.get', { id: thread.id });
    expect(orphan.root).toEqual({ kind: 'task', id: task.id, gone: true, title: 'first' });
  });

  it('never gives a removed person’s, a removed role’s or a replaced token’s id to the next one', async () => {
    const db = alice.installation.db;
    const { person: gone } = await alice.owner('people.add', { name: 'gone', kind: 'member' });
    const tokenRow = () => (db.prepare('SELECT max(id) AS id FROM sign_in_tokens').get() as { id: number }).id;
    const firstToken = tokenRow();
    await alice.owner('people.reissueToken', { id: gone.id });
    const secondToken = tokenRow();
    expect(secondToken).toBeGreaterThan(firstToken);
    await alice.owner('people.remove', { id: gone.id });
    const { person: next } = await alice.owner('people.add', { name: 'next', kind: 'member' });
    expect(next.id).toBeGreaterThan(gone.id);
    expect(tokenRow()).toBeGreaterThan(secondToken);

    const role = await alice.owner('roles.create', { name: 'passing', agent: { adapter: 'scripted' } });
    await alice.owner('roles.remove', { id: role.id });
    const after = await alice.owner('roles.create', { name: 'staying', agent: { adapter: 'scripted' } });
    expect(after.id).toBeGreaterThan(role.id);
  });
});
