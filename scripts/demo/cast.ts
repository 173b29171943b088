// The demo's cast: its own DHT, the three installations, and the steps the story is told in
// (a person says something, a message arrives, two installations pair).
import createTestnet, { type Testnet } from '@hyperswarm/testnet';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Conversation, Person } from '../../shared/domain';
import { decodeInvite, encodeInvite } from '../../main/engine/invitation';
import type { ApiClient } from '../../test-support/api-client';
import { makeDataDir, startServe, type ServeProcess } from '../../test-support/serve-process';
import { agentPids } from '../../test-support/processes';
import { describeConnection, line, quote, short, stateOf, Unexpected, who } from './transcript';
import { Watcher } from './watcher';

export interface Node {
  name: string;
  serve: ServeProcess;
  client: ApiClient;
  owner: Person;
  watcher: Watcher;
}

export function act(node: Node, text: string): void {
  line(`${who(node.name)} >> ${text}`);
}
export function ok(node: Node | null, text: string): void {
  line(`${who(node?.name ?? '')} ok ${text}`);
}

/** Resolves when `probe` finds what was expected; otherwise fails with what it last saw. */
export async function until<T>(
  node: Node,
  expected: string,
  probe: () => Promise<[T | undefined | false, string]>,
  timeoutMs = 20_000,
): Promise<T> {
  let seen = 'nothing yet';
  try {
    return await node.client.waitFor(
      async () => {
        const [value, description] = await probe();
        seen = description;
        return value;
      },
      timeoutMs,
      expected,
    );
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('timed out'))
      throw new Unexpected(`${node.name}: ${expected}`, seen);
    throw error;
  }
}

/** The demo's own DHT: bootstrap nodes on loopback, so its installations find each other by key alone. */
export async function startTestnet(): Promise<{ testnet: Testnet; bootstrap: string }> {
  const testnet = await createTestnet(3, { host: '127.0.0.1' });
  return { testnet, bootstrap: testnet.bootstrap.map((node) => `${node.host}:${node.port}`).join(',') };
}

/**
 * The invitation as someone behind a home router would send it: with no address, only the
 * DHT key, so the acceptor can reach the inviter by the DHT alone.
 */
function withoutAddress(code: string): string {
  const invite = decodeInvite(code);
  if (invite.v !== 3) throw new Unexpected('a version 3 invitation with a DHT key', `version ${invite.v}`);
  const { address: _address, ...rest } = invite;
  return encodeInvite(rest).code;
}

export async function startNode(name: string, dataRoot: string | undefined, bootstrap: string): Promise<Node> {
  let dataDir: string;
  if (dataRoot) {
    dataDir = path.join(dataRoot, name);
    if (existsSync(dataDir) && readdirSync(dataDir).length > 0)
      throw new Unexpected(`${dataDir} to be new or empty`, 'a folder with files in it (use a new --data-root)');
    mkdirSync(dataDir, { recursive: true });
  } else dataDir = makeDataDir(`parley-demo-${name}-`);
  const serve = await startServe({ name, dataDir, extraArgs: ['--dht-bootstrap', bootstrap] });
  const client = await serve.connect();
  const { person } = await client.call('session.whoami', {});
  const watcher = new Watcher(name, client, person);
  watcher.start();
  line(`${who(name)}    started: data ${dataDir}, peer ${serve.info.peer ?? 'none'}, pid ${serve.process.pid}`);
  return { name, serve, client, owner: person, watcher };
}

export async function settle(nodes: Node[]): Promise<void> {
  await Promise.all(nodes.map((node) => node.watcher.settle()));
}

export async function createRole(node: Node, name: string, description: string) {
  const role = await node.client.call('roles.create', { name, description, agent: { adapter: 'scripted' } });
  act(node, `owner creates role ${name} (scripted agent)`);
  return role;
}

/** `inviter` invites `acceptor`; each exposes the given roles. Returns each side's connection id. */
export async function pair(inviter: Node, inviterRoles: string[], acceptor: Node, acceptorRoles: string[]) {
  const invitation = await inviter.client.call('connections.invite', { roles: inviterRoles });
  act(
    inviter,
    `owner invites ${acceptor.name}, exposing [${inviterRoles.join(', ')}]: ${invitation.link.slice(0, 40)}...`,
  );
  act(acceptor, `owner accepts the invitation (DHT key only, no address), exposing [${acceptorRoles.join(', ')}]`);
  const code = withoutAddress(invitation.code);
  await acceptor.client.call('connections.accept', { code, roles: acceptorRoles }).catch(async (error: unknown) => {
    // A DHT of three nodes just started may not have spread the inviter's key yet, on a busy
    // machine more so: as a person would, try once more, and say so.
    act(acceptor, `could not reach ${inviter.name} yet (${(error as Error).message.slice(0, 80)}…); trying once more`);
    await acceptor.client.call('connections.accept', { code, roles: acceptorRoles });
  });
  const sideOf = async (node: Node, peer: Node, peerRoles: string[]) =>
    until(node, `a connection named ${peer.name}, online, letting it address [${peerRoles.join(', ')}]`, async () => {
      const c = (await node.client.call('connections.list', {})).find((c) => c.name === peer.name);
      const roles = c?.peerRoles.map((r) => r.name).sort() ?? [];
      const match =
        c &&
        c.online &&
        c.status === 'active' &&
        c.path === 'holepunched' &&
        roles.join() === [...peerRoles].sort().join();
      return [match && c, describeConnection(c)];
    });
  const inviterSide = await sideOf(inviter, acceptor, acceptorRoles);
  const acceptorSide = await sideOf(acceptor, inviter, inviterRoles);
  ok(
    null,
    `${inviter.name} <-> ${acceptor.name} paired over mutual TLS, holepunched over the DHT: ${acceptor.name} may address ${inviterRoles.map((r) => `${inviter.name}/${r}`).join(', ') || 'nothing'}; ${inviter.name} may address ${acceptorRoles.map((r) => `${acceptor.name}/${r}`).join(', ') || 'nothing'}`,
  );
  return { inviterSide: inviterSide.id, acceptorSide: acceptorSide.id };
}

export async function say(node: Node, conversation: Conversation, text: string): Promise<void> {
  act(
    node,
    `${node.owner.name} (person) says in conversation #${conversation.id} with ${conversation.roleName}: ${quote(text)}`,
  );
  await node.client.call('conversations.send', { id: conversation.id, text });
}

export async function messageIn(node: Node, conversationId: number, body: string): Promise<string> {
  return until(node, `the message ${quote(body)} in conversation #${conversationId}`, async () => {
    const { messages } = await node.client.call('conversations.get', { id: conversationId });
    const found = messages.find((m) => m.body === body);
    return [found?.body, messages.map((m) => `${m.author.name}: ${quote(m.body)}`).join(' / ')];
  });
}

export async function thread(node: Node, id: number) {
  return node.client.call('threads.get', { id });
}

/**
 * Waits until the agent of `role` works on the text `body` in an agent conversation of
 * `node`, its process running, and says so; returns the agent's process ids.
 */
export async function agentAtWork(
  node: Node,
  role: string,
  at: { id: number; threadId: string },
  body: string,
): Promise<number[]> {
  const pids = await until(
    node,
    `${role} working on ${quote(body)} in thread ${short(at.threadId)}, its process running`,
    async () => {
      const detail = await thread(node, at.id);
      const text = detail.texts.find((t) => t.direction === 'in' && t.body === body);
      const running = agentPids(node.serve.process.pid!);
      return [
        detail.thread.run.state === 'running' && text !== undefined && running.length > 0 && running,
        `run ${detail.thread.run.state}, text ${text ? stateOf(text) : 'not here yet'}, agent processes [${running.join(', ')}]`,
      ];
    },
  );
  line(`${who(node.name)}    agent process ${pids.join(', ')} is running`);
  return pids;
}
