import Database from 'better-sqlite3';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { noticesTakenBy } from '../../test-support/notices';
import { agentPids } from '../../test-support/processes';
import { removeDataDir, startServe, type ServeProcess } from '../../test-support/serve-process';
import { processAlive } from './process-tree';

describe('crash recovery', () => {
  const servers: ServeProcess[] = [];
  let dataDir: string | null = null;
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop();
    if (dataDir) removeDataDir(dataDir);
    dataDir = null;
  });

  async function start(): Promise<ServeProcess> {
    const server = await startServe({ name: 'alice', ...(dataDir ? { dataDir } : {}) });
    dataDir = server.dataDir;
    servers.push(server);
    return server;
  }

  async function sleepingAgent(server: ServeProcess, conversationId: number, text: string) {
    const client = await server.connect();
    await client.call('conversations.send', { id: conversationId, text });
    return client.waitFor(() => Promise.resolve(agentPids(server.process.pid!)[0]), 15_000, 'the agent process');
  }

  it('re-runs a turn cut off by a crash once, telling the agent so, after ending the orphaned agent', async () => {
    const first = await start();
    const client = await first.connect();
    const role = await client.call('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const conversation = await client.call('conversations.open', { roleId: role.id });
    const orphan = await sleepingAgent(first, conversation.id, 'sleep 1');
    await first.crash();
    // The agent lives on in its own process group until the next start ends it.
    expect(processAlive(orphan)).toBe(true);

    const second = await start();
    expect(processAlive(orphan)).toBe(false);
    const again = await second.connect();
    const detail = await again.waitFor(
      async () => {
        const d = await again.call('conversations.get', { id: conversation.id });
        return d.turns.at(-1)?.status === 'done' ? d : undefined;
      },
      15_000,
      'the re-run',
    );
    expect(detail.turns.map((turn) => [turn.status, turn.attempt])).toEqual([
      ['interrupted', 0],
      ['done', 1],
    ]);
    expect(detail.messages.at(-1)?.body).toBe('slept 1');
    const db = new Database(path.join(second.dataDir, 'parley.db'), { readonly: true });
    const told = noticesTakenBy(db, detail.turns.at(-1)!.id);
    db.close();
    expect(told).toEqual([
      'Parley was restarted while your previous turn was working. You are given the same request again; check what you already did before repeating it.',
    ]);
  });

  it('does not re-run a turn a second time when Parley is cut off again', async () => {
    const first = await start();
    const client = await first.connect();
    const role = await client.call('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const conversation = await client.call('conversations.open', { roleId: role.id });
    await sleepingAgent(first, conversation.id, 'sleep 30');
    await first.crash();

    const second = await start();
    await second
      .connect()
      .then((c) => c.waitFor(() => Promise.resolve(agentPids(second.process.pid!)[0]), 15_000, 'the re-run agent'));
    await second.crash();

    const third = await start();
    const last = await third.connect();
    const detail = await last.call('conversations.get', { id: conversation.id });
    expect(detail.turns.map((turn) => [turn.status, turn.attempt])).toEqual([
      ['interrupted', 0],
      ['interrupted', 1],
    ]);
    expect(detail.conversation.run).toMatchObject({ state: 'idle', pending: 0 });
    expect(detail.messages.at(-1)).toMatchObject({
      author: { kind: 'system' },
      body: 'Parley stopped twice while the agent worked on this request; it was dropped.',
    });
    expect(agentPids(third.process.pid!)).toEqual([]);
  });
});
