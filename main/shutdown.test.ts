// SIGTERM and SIGINT end `parley serve` within two seconds even with app API sockets
// open and an agent working: the sockets close with 1001, the paired peer sees it go
// offline at once (not after its ping times out), and serve.json and the role API
// socket are gone. Nothing of the agents' sandbox outlives it, even killed with SIGKILL.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { processAlive } from './runs/process-tree';
import { agentPids, processesNaming } from '../test-support/processes';
import { node, pairNodes, type ServeNode } from '../test-support/serve-network';
import { removeDataDir, startServe } from '../test-support/serve-process';
import { noSandbox } from '../test-support/system-parts';
import { until } from '../test-support/until';

/** A signed-in app API socket, as a browser tab holds one; resolves with its close code when it closes. */
async function openTab(api: string, token: string): Promise<{ closed: Promise<number> }> {
  const ws = new WebSocket(api);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const closedWith = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  const signedIn = new Promise((resolve) => ws.once('message', resolve));
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session.signIn', params: { token } }));
  await signedIn;
  // Wrapped: an async function returning a promise would wait for it.
  return { closed: closedWith };
}

// The relays end with Parley through util-linux's setpriv (Essential on Debian).
const noSetpriv = spawnSync('setpriv', ['--version']).error !== undefined;
if (noSetpriv)
  console.warn('skipped: the sandbox’s relays when Parley is killed: setpriv (util-linux) is not installed');

/**
 * A temporary folder of its own, for a sandboxed `parley serve` (other tests' installations
 * use the machine's), removed after `body` with whatever of the sandbox still runs there.
 */
async function inOwnTemporaryFolder(body: (tmp: string) => Promise<void>): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-shutdown-tmp-'));
  try {
    await body(tmp);
  } finally {
    // Should the test fail, what it left does not outlive it.
    for (const pid of processesNaming(`UNIX-LISTEN:${tmp}/`)) process.kill(pid, 'SIGTERM');
    rmSync(tmp, { recursive: true, force: true });
  }
}

const sandboxedServe = (tmp: string) => startServe({ name: 'alice', env: { PARLEY_SANDBOX: 'on', TMPDIR: tmp } });

/** Resolves with the exit, or null if it did not come within `ms`. */
function exitWithin(serve: ServeNode['serve'], ms: number) {
  return Promise.race([serve.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), ms))]);
}

describe('shutting down', () => {
  const nodes: ServeNode[] = [];
  afterEach(async () => {
    for (const n of nodes.splice(0)) {
      await n.serve.stop();
      removeDataDir(n.serve.dataDir);
    }
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`ends on ${signal} within 2 s with sockets open and an agent working, and the peer sees it offline at once`, async () => {
      const alice = await node(await startServe({ name: 'alice' }), 'alice');
      const bob = await node(await startServe({ name: 'bob' }), 'bob');
      nodes.push(alice, bob);
      for (const n of [alice, bob])
        await n.api.call('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
      await pairNodes(alice, ['assistant'], bob, ['assistant']);
      const [role] = await alice.api.call('roles.list', {});
      const conversation = await alice.api.call('conversations.open', { roleId: role!.id });
      await alice.api.call('conversations.send', { id: conversation.id, text: 'sleep 30' });
      const agent = await alice.api.waitFor(
        () => Promise.resolve(agentPids(alice.serve.process.pid!)[0]),
        30_000,
        'the agent',
      );
      const tab = await openTab(alice.serve.info.api, alice.serve.info.token);
      // One more socket that never signed in.
      const anonymous = new WebSocket(alice.serve.info.api);
      anonymous.on('error', () => {});
      await new Promise((resolve) => anonymous.once('open', resolve));
      const anonymousClosed = new Promise<number>((resolve) => anonymous.once('close', (code) => resolve(code)));
      const dataDir = alice.serve.dataDir;
      const roleApi = alice.serve.info.roleApi;

      const started = Date.now();
      const peerSeesOffline = bob.api.waitFor(
        async () => {
          const connection = (await bob.api.call('connections.list', {})).find((c) => c.name === 'alice');
          return connection && !connection.online ? Date.now() - started : undefined;
        },
        30_000,
        'bob to see alice offline',
      );
      alice.serve.process.kill(signal);
      const exit = await exitWithin(alice.serve, 10_000);
      const elapsed = Date.now() - started;
      expect(exit, `parley serve did not exit on ${signal}:\n${alice.serve.stderr()}`).not.toBeNull();
      expect(exit).toEqual({ code: 0, signal: null });
      expect(elapsed).toBeLessThan(2_000);
      expect(await tab.closed).toBe(1001);
      expect(await anonymousClosed).toBe(1001);
      expect(existsSync(path.join(dataDir, 'serve.json'))).toBe(false);
      expect(existsSync(roleApi)).toBe(false);
      expect(processAlive(agent)).toBe(false);
      // Told, not timed out: bob's pings would take 15–30 s to notice.
      expect(await peerSeesOffline).toBeLessThan(10_000);
    }, 120_000);
  }

  it.skipIf(noSandbox('the sandbox’s temporary folder at shutdown'))(
    'leaves nothing of the sandbox in the temporary folder once it has exited',
    () =>
      inOwnTemporaryFolder(async (tmp) => {
        const serve = await sandboxedServe(tmp);
        nodes.push(await node(serve, 'alice'));
        // The open-network runtime has its folder there while it runs.
        expect(readdirSync(tmp).filter((name) => name.startsWith('parley-srt-'))).toHaveLength(1);
        serve.process.kill('SIGTERM');
        expect(await exitWithin(serve, 10_000)).toEqual({ code: 0, signal: null });
        expect(readdirSync(tmp)).toEqual([]);
      }),
    60_000,
  );

  it.skipIf(noSandbox('the sandbox’s relays when Parley is killed') || noSetpriv)(
    'leaves no sandbox relay listening once it is killed with SIGKILL, and the next start removes what it left',
    () =>
      inOwnTemporaryFolder(async (tmp) => {
        const serve = await sandboxedServe(tmp);
        nodes.push(await node(serve, 'alice'));
        // The relays listen there, one per set of proxies: the agents' own and those of runs allowed the open network.
        const relays = processesNaming(`UNIX-LISTEN:${tmp}/`);
        expect(relays).toHaveLength(2);
        serve.process.kill('SIGKILL');
        expect(await exitWithin(serve, 10_000)).toEqual({ code: null, signal: 'SIGKILL' });
        await until(() => relays.every((pid) => !processAlive(pid)), 'the relays to end', 10_000);
        // What it could not remove (its proxies' socket, a folder) goes when the next one starts.
        const killed = String(serve.process.pid);
        expect(readdirSync(tmp).filter((name) => name.includes(killed))).not.toEqual([]);
        const next = await sandboxedServe(tmp);
        nodes.push(await node(next, 'alice'));
        expect(readdirSync(tmp).filter((name) => name.includes(killed))).toEqual([]);
        await next.stop();
      }),
    60_000,
  );
});
