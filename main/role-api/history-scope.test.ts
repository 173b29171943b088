// `parley history` stays inside what the people of the run's own root may read (DESIGN
// §11.3): a run answering for Mia never lists Max's exchanges with that peer role. Real
// installations paired over mutual TLS, several people, and agents that call the real
// `parley` CLI from real turns; a role token (an owner's script) still lists everything.
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MethodName, ParamsOf, ResultOf } from '../../shared/api-contract';
import type { AgentSettings, Person } from '../../shared/domain';
import { distPaths } from '../paths';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';

/**
 * Alice's assistant: "show history" prints `parley history peer/researcher` as its
 * output; a line "ask PEER/ROLE: TEXT" sends TEXT there; anything else is only noted.
 */
const ASSISTANT = String.raw`in=$(cat)
case "$in" in *"show history"*) exec parley history peer/researcher ;; esac
to=$(printf '%s\n' "$in" | sed -nE 's/^([^ :]+: )?ask ([^ :]+): .*$/\2/p' | head -n 1)
if [ -n "$to" ]; then
  exec parley send --to "$to" "$(printf '%s\n' "$in" | sed -nE 's/^([^ :]+: )?ask [^ :]+: (.*)$/\2/p' | head -n 1)"
fi
echo noted`;
const assistant: AgentSettings = { adapter: 'command', command: ['sh', '-c', ASSISTANT] };

type Caller = <M extends MethodName>(method: M, params: ParamsOf<M>) => Promise<ResultOf<M>>;
interface HistoryRow {
  thread: string;
  direction: 'out' | 'in';
  body: string;
}

/** What each exchange with peer/researcher was about; each phrase is in one exchange's texts. */
const about = {
  max: 'the plan of max',
  mia: 'the question of mia',
  zoe: 'the words of zoe (deleted)',
  task: 'the numbers for the task',
  peer: 'hello from the peer',
} as const;
type Exchange = keyof typeof about;
const everyExchange = Object.keys(about) as Exchange[];

/** Which exchanges a history lists, by the phrases in its texts. */
const exchangesIn = (history: HistoryRow[]): Exchange[] =>
  everyExchange.filter((key) => history.some((row) => row.body.includes(about[key])));

describe('parley history from a run', () => {
  let alice: TestInstallation;
  let peer: TestInstallation;
  let roleId: number;
  const people: Record<'max' | 'mia' | 'zoe', { person: Person; call: Caller }> = {} as never;

  /** An agent conversation under `root` with the peer's answer in it. */
  const answered = (call: Caller, root: ParamsOf<'threads.list'>) =>
    alice.waitFor(async () => {
      const [thread] = await call('threads.list', root);
      return thread && thread.counts.handled > 0 && thread.run.state === 'idle' ? thread : undefined;
    }, 'the peer’s answer');

  beforeAll(async () => {
    alice = await openPeer('alice');
    peer = await openPeer('peer');
    // The peer's researcher is the scripted agent: it answers what it is asked, and asks what its person says.
    const researcher = await peer.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
    roleId = (await alice.owner('roles.create', { name: 'assistant', agent: assistant })).id;
    await pair(peer, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
    for (const name of ['max', 'mia', 'zoe'] as const) {
      const { person } = await alice.owner('people.add', { name, kind: 'member' });
      people[name] = { person, call: alice.as(person) };
    }

    // Each person asks peer/researcher from their own conversation with the assistant.
    for (const name of ['max', 'mia', 'zoe'] as const) {
      const { call } = people[name];
      const conversation = await call('conversations.open', { roleId });
      await call('conversations.send', { id: conversation.id, text: `ask peer/researcher: ${about[name]}` });
      await answered(call, { root: { kind: 'conversation', id: conversation.id } });
      // Zoe deletes hers: its agent conversation's root is gone, and owners alone read it.
      if (name === 'zoe') await call('conversations.delete', { id: conversation.id });
    }
    // Mia gives the assistant a task that asks too.
    const task = await people.mia.call('tasks.create', {
      roleId,
      title: 'numbers',
      body: `ask peer/researcher: ${about.task}`,
    });
    await answered(people.mia.call, { root: { kind: 'task', id: task.id } });
    // And the peer's researcher starts an agent conversation with the assistant.
    await askFromPeer(about.peer);
    await alice.waitFor(async () => {
      const [thread] = await alice.owner('threads.list', { peerStarted: true });
      return thread && thread.counts.handled > 0 && thread.run.state === 'idle' ? thread : undefined;
    }, 'the agent conversation the peer started');

    async function askFromPeer(text: string) {
      const conversation = await peer.owner('conversations.open', { roleId: researcher.id });
      await peer.owner('conversations.send', { id: conversation.id, text: `ask alice/assistant: ${text}` });
    }
  }, 90_000);

  afterAll(async () => {
    await alice?.close();
    await peer?.close();
  });

  /** The history the assistant's run printed in a person's conversation. */
  async function historyInConversation(call: Caller): Promise<HistoryRow[]> {
    const conversation = await call('conversations.open', { roleId });
    const before = (await call('conversations.get', { id: conversation.id })).messages.length;
    await call('conversations.send', { id: conversation.id, text: 'show history' });
    const output = await alice.waitFor(async () => {
      const { messages } = await call('conversations.get', { id: conversation.id });
      return messages.slice(before).find((m) => m.author.kind === 'role')?.body;
    }, 'the assistant’s answer');
    return JSON.parse(output) as HistoryRow[];
  }

  it('from a run in Mia’s conversation: Mia’s exchanges and what every member reads, never Max’s', async () => {
    expect(exchangesIn(await historyInConversation(people.mia.call))).toEqual(['mia', 'task', 'peer']);
  });

  it('from a run in Max’s conversation: Max’s, never Mia’s', async () => {
    expect(exchangesIn(await historyInConversation(people.max.call))).toEqual(['max', 'task', 'peer']);
  });

  it('from a run in an owner’s conversation: also the exchanges whose topic was deleted, which owners read', async () => {
    expect(exchangesIn(await historyInConversation(alice.owner))).toEqual(['zoe', 'task', 'peer']);
  });

  it('from a run on a task: only what every member reads, no one’s conversation', async () => {
    const task = await people.mia.call('tasks.create', { roleId, title: 'look back', body: 'show history' });
    const output = await alice.waitFor(async () => {
      const { log } = await people.mia.call('tasks.get', { id: task.id });
      return log.find((entry) => entry.kind === 'output')?.body;
    }, 'the task’s output');
    expect(exchangesIn(JSON.parse(output) as HistoryRow[])).toEqual(['task', 'peer']);
  });

  it('from a run in an agent conversation the peer started: only what every member reads', async () => {
    const [thread] = await alice.owner('threads.list', { peerStarted: true });
    const conversation = (await peer.owner('conversations.list', {}))[0]!;
    await peer.owner('conversations.send', { id: conversation.id, text: 'ask alice/assistant: show history' });
    const output = await alice.waitFor(async () => {
      const { runLog } = await alice.owner('threads.get', { id: thread!.id });
      return runLog.find((entry) => entry.output.startsWith('['))?.output;
    }, 'the history in the agent conversation’s run log');
    expect(exchangesIn(JSON.parse(output) as HistoryRow[])).toEqual(['task', 'peer']);
  });

  it('with a role token, an owner’s script reads every exchange', async () => {
    const { token } = await alice.owner('roles.token', { id: roleId });
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [distPaths.cli, 'history', 'peer/researcher'],
        { env: { PATH: process.env.PATH, PARLEY_TOKEN: token, PARLEY_API: alice.installation.roleApiSocket } },
        (error, out, err) => (error ? reject(new Error(err)) : resolve(out)),
      ),
    );
    expect(exchangesIn(JSON.parse(stdout) as HistoryRow[])).toEqual(everyExchange);
  });
});
