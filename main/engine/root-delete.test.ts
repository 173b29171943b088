// Deleting a root at its edge (DESIGN §11.6, "Deleting a root is one step"): kill -9
// while the agents of its agent conversations are being stopped.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Conversation, Role, ThreadSummary, TurnSummary } from '../../shared/domain';
import { processAlive } from '../runs/process-tree';
import { agentPidsIn, edgeAgent, killAgentsIn } from '../../test-support/edge-agent';
import { RawPeer, standInIdentity } from '../../test-support/raw-peer';
import { until } from '../../test-support/until';
import { startWirePeer, type WirePeer } from '../../test-support/wire-peer';
import { makeDataDir, removeDataDir } from '../../test-support/data-folder';

const processes: WirePeer[] = [];
const dirs: string[] = [];
const pidFiles: string[] = [];
const raws: RawPeer[] = [];
afterEach(async () => {
  for (const raw of raws.splice(0)) raw.close();
  for (const p of processes.splice(0)) await p.kill();
  for (const file of pidFiles.splice(0)) killAgentsIn(file);
  for (const dir of dirs.splice(0)) removeDataDir(dir);
});

function tempDir(prefix: string): string {
  const dir = makeDataDir(prefix);
  dirs.push(dir);
  return dir;
}

describe('root deletion (DESIGN §11.6)', () => {
  it('“Closing its agent conversations, failing their unsent texts and deleting the root happen in one transaction; a crash leaves the before or the after, never a mix”', async () => {
    const dataDir = tempDir('parley-delete-alice-');
    const pids = path.join(tempDir('parley-delete-pids-'), 'pids');
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
      agent: edgeAgent(tempDir('parley-delete-agent-'), pids),
    });
    const { code } = await call<{ code: string }>('connections.invite', { roles: ['assistant'] });
    const bob = await standInIdentity('bob', code, { roles: ['researcher'], exposes: ['researcher'] });
    const raw = await RawPeer.dial(bob.identity, alice.ready.address, alice.ready.fingerprint, {
      type: 'hello',
      protocol: 2,
      name: 'bob',
      address: null,
    });
    raws.push(raw);
    await raw.next('roles');

    // alice's conversation asks bob; bob's answer comes back and alice's agent works on it.
    const conversation = await call<Conversation>('conversations.open', { roleId: role.id });
    await call('conversations.send', { id: conversation.id, text: 'send bob/researcher what is new?' });
    const question = await raw.next('text', (f) => f.body === 'what is new?');
    raw.send({ type: 'ack', thread: question.thread, seq: question.seq });
    raw.send({ type: 'text', thread: question.thread, seq: 1, from: 'researcher', to: 'assistant', body: 'hang' });
    const [agent] = await until(() => {
      const found = agentPidsIn(pids);
      return found.length > 0 ? found : undefined;
    }, 'alice’s agent to work on the answer');

    // The delete stops that agent, which ignores SIGTERM: alice is killed during the grace.
    const deleting = call('conversations.delete', { id: conversation.id }).catch(() => undefined);
    const thread = await until(async () => {
      const [t] = await call<ThreadSummary[]>('threads.list', { orphaned: true }).catch(() => []);
      return t?.run.state === 'stopping' ? t : undefined;
    }, 'the delete to be stopping the agent');
    await alice.kill();
    processes.splice(processes.indexOf(alice), 1);
    await deleting;

    alice = await start(300);
    // The after: the conversation is gone, its agent conversation closed, nothing re-run.
    expect(await call<Conversation[]>('conversations.list')).toEqual([]);
    const detail = await call<{ thread: ThreadSummary; turns: TurnSummary[] }>('threads.get', { id: thread.id });
    expect(detail.thread).toMatchObject({ status: 'closed', closeReason: 'root deleted', root: { gone: true } });
    expect(detail.turns.map((turn) => turn.status)).toEqual(['stopped']);
    expect(processAlive(agent!)).toBe(false);
    expect(agentPidsIn(pids)).toEqual([agent]);
  }, 120_000);
});
