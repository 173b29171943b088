// Stop at its edges (ADR 0035 "Stop", DESIGN §11.4 "Stop drops only what the agent was
// given"): a text that arrives while the agent works, a crash during the stop's grace,
// a rejection after the stop. Real installations, linked in memory and over mutual TLS;
// where the test must reject late or hold back an ack, the peer is driven by hand with a
// real, paired identity over TLS.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Conversation, Message, Role, TextView, TurnSummary } from '../../shared/domain';
import { processAlive } from '../runs/process-tree';
import { runnableRuns } from '../store/queries/runs';
import { agentPidsIn, edgeAgent, killAgentsIn } from '../../test-support/edge-agent';
import { makeDataDir, removeDataDir } from '../../test-support/data-folder';
import type { TestInstallation } from '../../test-support/installation';
import { memoryNetwork } from '../../test-support/memory-network';
import { noticesTakenBy } from '../../test-support/notices';
import { openPeer, pair } from '../../test-support/network';
import { newThreadId, RawPeer, standInIdentity } from '../../test-support/raw-peer';
import { until } from '../../test-support/until';
import { startWirePeer, type WirePeer } from '../../test-support/wire-peer';

const open: TestInstallation[] = [];
const processes: WirePeer[] = [];
const dirs: string[] = [];
const pidFiles: string[] = [];
const raws: RawPeer[] = [];
afterEach(async () => {
  for (const raw of raws.splice(0)) raw.close();
  for (const p of processes.splice(0)) await p.kill();
  for (const t of open.splice(0)) await t.close();
  for (const file of pidFiles.splice(0)) killAgentsIn(file);
  for (const dir of dirs.splice(0)) removeDataDir(dir);
});

function tempDir(prefix: string): string {
  const dir = makeDataDir(prefix);
  dirs.push(dir);
  return dir;
}

async function peer(name: string, options: Parameters<typeof openPeer>[1] = {}) {
  const t = await openPeer(name, options);
  open.push(t);
  return t;
}

const texts = async (t: TestInstallation, id: number, direction: 'in' | 'out'): Promise<TextView[]> =>
  (await t.owner('threads.get', { id })).texts.filter((text) => text.direction === direction);

const links = memoryNetwork();
/** How two installations link: in memory, or over mutual TLS on loopback. */
const linkings = [
  { name: 'links in memory', options: () => links.options() },
  { name: 'mutual TLS', options: () => ({}) },
];

describe('stop (DESIGN §11.4)', () => {
  it.each(linkings)(
    '“Text that arrived during that turn … waits; it goes to the next turn, which starts only when new text … arrives”, over $name',
    async (linking) => {
      const alice = await peer('alice', linking.options());
      const bob = await peer('bob', linking.options());
      const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
      await bob.owner('roles.create', { name: 'researcher', agent: { adapter: 'scripted' } });
      await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
      const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
      // bob's agent works on text 1.
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: sleep 30' });
      const thread = await bob.waitFor(async () => {
        const [t] = await bob.owner('threads.list', { peerStarted: true });
        return t?.run.state === 'running' && t.run.session ? t : undefined;
      }, 'bob’s agent to work on text 1');
      // alice sends text 2 in the same agent conversation; it waits at bob, received.
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: second' });
      await bob.waitFor(async () => (await texts(bob, thread.id, 'in')).length === 2, 'text 2 at bob');

      await bob.owner('threads.stop', { id: thread.id });
      // Only what the stopped turn was given counts as handled.
      expect((await texts(bob, thread.id, 'in')).map((t) => [t.body, t.state])).toEqual([
        ['sleep 30', 'handled'],
        ['second', 'received'],
      ]);
      // Nothing restarts the agent for the text that waits.
      expect(runnableRuns(bob.installation.db, 100)).toEqual([]);
      expect((await bob.owner('threads.get', { id: thread.id })).turns.map((t) => t.status)).toEqual(['stopped']);

      // New text starts the next turn, and text 2 goes to it with the notice of the stop.
      await alice.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: third' });
      const log = await bob.waitFor(async () => {
        const detail = await bob.owner('threads.get', { id: thread.id });
        return detail.turns.at(-1)?.status === 'done' ? detail.runLog : undefined;
      }, 'the next turn at bob');
      expect(log.at(-1)?.output).toBe(
        'replied: answer from researcher: second\nreplied: answer from researcher: third',
      );
      const last = (await bob.owner('threads.get', { id: thread.id })).turns.at(-1)!;
      expect(noticesTakenBy(bob.installation.db, last.id)).toEqual([
        expect.stringMatching(/^You were stopped by bob before your previous turn finished/),
      ]);
      expect((await texts(bob, thread.id, 'in')).map((t) => t.state)).toEqual(['handled', 'handled', 'handled']);
    },
  );

  it('“A stop is committed before the first signal, so a crash during the grace never re-runs the stopped request”', async () => {
    const dataDir = tempDir('parley-stop-crash-');
    const pids = path.join(tempDir('parley-stop-pids-'), 'pids');
    pidFiles.push(pids);
    const start = async (grace: number) => {
      const p = await startWirePeer({ dataDir, name: 'alice', args: ['--start-turns', '--stop-grace', String(grace)] });
      processes.push(p);
      return p;
    };
    let alice = await start(120_000);
    const call = <T>(method: string, params: object = {}) =>
      alice.request<{ result: T }>('call', { method, params }).then((r) => r.result);
    const role = await call<Role>('roles.create', {
      name: 'assistant',
      agent: edgeAgent(tempDir('parley-stop-agent-'), pids),
    });
    const conversation = await call<Conversation>('conversations.open', { roleId: role.id });
    await call('conversations.send', { id: conversation.id, text: 'hang' });
    const [agent] = await until(() => {
      const found = agentPidsIn(pids);
      return found.length > 0 ? found : undefined;
    }, 'the agent to work');

    const stopping = call('conversations.stop', { id: conversation.id }).catch(() => undefined);
    await until(async () => {
      const detail = await call<{ conversation: Conversation }>('conversations.get', { id: conversation.id });
      return detail.conversation.run.state === 'stopping';
    }, 'the stop’s grace');
    await alice.kill();
    processes.splice(processes.indexOf(alice), 1);
    await stopping;
    expect(processAlive(agent!)).toBe(true);

    alice = await start(300);
    const detail = await call<{ conversation: Conversation; turns: TurnSummary[]; messages: Message[] }>(
      'conversations.get',
      { id: conversation.id },
    );
    expect(detail.turns.map((turn) => [turn.status, turn.attempt])).toEqual([['stopped', 0]]);
    expect(detail.conversation.run.state).toBe('idle');
    expect(detail.messages.map((m) => m.body).join('\n')).not.toContain('Parley was restarted');
    expect(processAlive(agent!)).toBe(false);
    expect(agentPidsIn(pids)).toEqual([agent]);
  }, 120_000);

  it('“nothing else restarts it”: a peer’s rejection of a text the stopped turn sent waits for the next turn', async () => {
    const alice = await peer('alice');
    const pids = path.join(tempDir('parley-stop-pids-'), 'pids');
    pidFiles.push(pids);
    await alice.owner('roles.create', { name: 'assistant', agent: edgeAgent(tempDir('parley-stop-agent-'), pids) });
    const { code } = await alice.owner('connections.invite', { roles: ['assistant'] });
    const bob = await standInIdentity('bob', code, { roles: ['researcher'], exposes: ['researcher'] });
    const raw = await RawPeer.dial(bob.identity, alice.installation.peerAddress!, alice.installation.id, {
      type: 'hello',
      protocol: 2,
      name: 'bob',
      address: null,
    });
    raws.push(raw);
    await raw.next('roles');
    // bob starts an agent conversation; alice's agent replies, then keeps working.
    const wire = newThreadId();
    raw.send({ type: 'text', thread: wire, seq: 1, from: 'researcher', to: 'assistant', body: 'reply on it\nwait' });
    await raw.next('ack', (f) => f.thread === wire);
    const answer = await raw.next('text', (f) => f.thread === wire);
    expect(answer.body).toBe('on it');
    await until(() => agentPidsIn(pids).length === 1, 'alice’s agent to keep working');
    const [thread] = await alice.owner('threads.list', { peerStarted: true });
    expect(await alice.owner('threads.stop', { id: thread!.id })).toEqual({ stopped: true });

    // bob refuses the reply (too much waiting there): alice's agent is not woken for it.
    raw.send({ type: 'reject', thread: wire, seq: answer.seq, reason: 'queue' });
    await raw.roundTrip();
    expect((await texts(alice, thread!.id, 'out')).map((t) => [t.state, t.reason])).toEqual([['failed', 'queue']]);
    expect(runnableRuns(alice.installation.db, 100)).toEqual([]);
    expect((await alice.owner('threads.get', { id: thread!.id })).turns.map((t) => t.status)).toEqual(['stopped']);

    // The next text from bob starts the next turn, which hears of both.
    raw.send({ type: 'text', thread: wire, seq: 2, from: 'researcher', to: 'assistant', body: 'and now?' });
    const log = await alice.waitFor(async () => {
      const detail = await alice.owner('threads.get', { id: thread!.id });
      return detail.turns.at(-1)?.status === 'done' ? detail.runLog : undefined;
    }, 'the next turn');
    const output = log.at(-1)!.output;
    expect(output).toContain('notice: You were stopped by alice');
    expect(output).toContain('notice: Your text #1 to bob/researcher was rejected (queue)');
    expect(output.split('\n').at(-1)).toBe('text: and now?');
  });
});
