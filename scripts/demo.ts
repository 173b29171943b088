// `npm run demo`: three headless installations (alice, bob and carol) on loopback, each
// a real `parley serve` process with its own data folder and ports, paired over mutual
// TLS carried by the DHT (a small loopback testnet the demo starts itself, never the
// public bootstrap nodes; invitations hold only the DHT key), with scripted agents. It plays ADR 0035's story and prints what happened as a
// plain-text transcript, one event per line, then the three UI addresses.
//
//   node dist/demo.js [--exit] [--data-root DIR]
//
// --exit        stop everything after the story and exit 0 (a smoke test: any state
//               other than the expected one prints expected/seen and exits 1);
// --data-root   keep the installations in DIR/alice, DIR/bob and DIR/carol (new or
//               empty folders) instead of temporary ones that are removed at the end.
import createTestnet, { type Testnet } from '@hyperswarm/testnet';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { AppEvent } from '../shared/api-contract';
import type { ConnectionSummary, Conversation, Person, TextView, ThreadSummary } from '../shared/domain';
import { processAlive } from '../main/runs/process-tree';
import type { ApiClient } from '../test-support/api-client';
import { agentPids } from '../test-support/processes';
import { makeDataDir, removeDataDir, startServe, type ServeProcess } from '../test-support/serve-process';
import { decodeInvite, encodeInvite } from '../main/engine/invitation';

// Never the public DHT from the project's own runs: its installations (and their children) stay off it.
process.env.PARLEY_DHT_BOOTSTRAP ??= 'off';

// ------------------------------------------------------------------ output

const startedAt = Date.now();
function line(text: string): void {
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1).padStart(5);
  process.stdout.write(`${seconds}s  ${text}\n`);
}
const heading = (text: string) => process.stdout.write(`\n== ${text}\n`);
const quote = (text: string) => JSON.stringify(text.length > 160 ? `${text.slice(0, 157)}...` : text);
/** Thread IDs are 22 random characters; the first 6 tell them apart in a transcript. */
const short = (threadId: string) => threadId.slice(0, 6);

/** An installation in the state the demo did not expect. */
class Unexpected extends Error {
  constructor(
    readonly expected: string,
    readonly seen: string,
  ) {
    super(`expected ${expected}; saw ${seen}`);
  }
}

// ------------------------------------------------------------------ the installations

interface Node {
  name: string;
  serve: ServeProcess;
  client: ApiClient;
  owner: Person;
  watcher: Watcher;
}

/** Who did something, padded so the columns line up. */
const who = (name: string) => name.padEnd(5);

function act(node: Node, text: string): void {
  line(`${who(node.name)} >> ${text}`);
}
function ok(node: Node | null, text: string): void {
  line(`${who(node?.name ?? '')} ok ${text}`);
}

/** Resolves when `probe` finds what was expected; otherwise fails with what it last saw. */
async function until<T>(
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

function expectNow(condition: boolean, expected: string, seen: string): asserts condition {
  if (!condition) throw new Unexpected(expected, seen);
}

const describeTexts = (texts: TextView[]) =>
  texts.map((t) => `${t.direction} #${t.seq} ${quote(t.body)} ${stateOf(t)}`).join(', ') || 'no texts';
const stateOf = (t: TextView) => (t.reason ? `${t.state} (${t.reason})` : t.state);
const describeThread = (t: ThreadSummary | undefined) =>
  t
    ? `thread ${short(t.threadId)} ${t.localRole} <-> ${t.connection.name}/${t.peerRole}, ${t.status}${t.closeReason ? ` (${t.closeReason})` : ''}, started by ${t.startedBy}, run ${t.run.state}, texts ${JSON.stringify(t.counts)}`
    : 'no such thread';
const describeConnection = (c: ConnectionSummary | undefined) =>
  c
    ? `${c.name}: ${c.status}, ${c.online ? 'online' : 'offline'}, path ${c.path ?? 'none'}, peer roles [${c.peerRoles.map((r) => r.name).join(', ')}]${c.lastError ? `, last error: ${c.lastError}` : ''}`
    : 'no such connection';

// ------------------------------------------------------------------ the live transcript

interface SeenThread {
  label: string;
  texts: Map<number, string>;
  turns: Map<number, { index: number; status: string }>;
  outputs: Set<number>;
  status: string;
}

/**
 * Prints what changes in one installation, as its owner sees it through the app API:
 * messages in conversations, agent conversations opening and closing, their texts and
 * the texts' states, their agents' turns and outputs, connections.
 */
class Watcher {
  private readonly threads = new Map<number, SeenThread>();
  private readonly wireIds = new Map<number, string>();
  private readonly conversations = new Map<number, { label: string; messages: Set<number>; deleted: boolean }>();
  private readonly connections = new Map<number, string>();
  private readonly waiting = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  private off: (() => void) | null = null;

  constructor(
    private readonly name: string,
    private readonly client: ApiClient,
    private readonly owner: Person,
  ) {}

  start(): void {
    this.off = this.client.onEvent((event: AppEvent) => {
      if (event.type === 'changed') this.schedule(event.kind, event.id);
    });
  }

  stop(): void {
    this.off?.();
  }

  /** Refreshes everything known, after whatever is queued. */
  async settle(): Promise<void> {
    for (const id of this.threads.keys()) this.schedule('thread', id);
    for (const id of this.conversations.keys()) this.schedule('conversation', id);
    this.schedule('connection', 0);
    await this.queue;
  }

  private schedule(kind: string, id: number): void {
    if (kind !== 'thread' && kind !== 'conversation' && kind !== 'connection') return;
    const key = kind === 'connection' ? kind : `${kind}:${id}`;
    if (this.waiting.has(key)) return;
    this.waiting.add(key);
    this.queue = this.queue.then(async () => {
      this.waiting.delete(key);
      try {
        if (kind === 'thread') await this.refreshThread(id);
        else if (kind === 'conversation') await this.refreshConversation(id);
        else await this.refreshConnections();
      } catch (error) {
        if ((error as { code?: string }).code !== 'not_found' && !String(error).includes('socket closed'))
          this.print('watch', `could not read ${kind} ${id}: ${(error as Error).message}`);
      }
    });
  }

  private print(where: string, what: string): void {
    line(`${who(this.name)}    ${where} | ${what}`);
  }

  threadLabel(threadRowId: number): string {
    const wire = this.wireIds.get(threadRowId);
    return wire ? `thread ${short(wire)}` : `thread #${threadRowId}`;
  }

  private async refreshThread(id: number): Promise<void> {
    const detail = await this.client.call('threads.get', { id });
    const t = detail.thread;
    this.wireIds.set(t.id, t.threadId);
    let seen = this.threads.get(id);
    if (!seen) {
      seen = {
        label: `thread ${short(t.threadId)} ${t.localRole} <-> ${t.connection.name}/${t.peerRole}`,
        texts: new Map(),
        turns: new Map(),
        outputs: new Set(),
        status: 'open',
      };
      this.threads.set(id, seen);
      const root =
        t.startedBy === 'peer'
          ? `started by ${t.connection.name} (its own root)`
          : `started here, root: ${t.root.kind === 'thread' ? this.threadLabel(t.root.id) : `${t.root.kind} #${t.root.id}`}`;
      this.print(seen.label, `opened: ${root}`);
    }
    const label = seen.label;
    for (const text of detail.texts) {
      const state = stateOf(text);
      const before = seen.texts.get(text.id);
      if (before === undefined) this.print(label, `${text.direction} #${text.seq} ${quote(text.body)} [${state}]`);
      else if (before !== state) this.print(label, `${text.direction} #${text.seq} now ${state}`);
      seen.texts.set(text.id, state);
    }
    // Each turn, then what it printed as its final output (one line per output line).
    const outputs = new Map(detail.runLog.map((entry) => [entry.turnId, entry.output]));
    const printOutput = (turnId: number) => {
      const output = outputs.get(turnId);
      if (output === undefined || seen.outputs.has(turnId)) return;
      seen.outputs.add(turnId);
      for (const text of output.split('\n')) this.print(label, `${t.localRole}'s output: ${text}`);
    };
    for (const turn of [...detail.turns].sort((a, b) => a.id - b.id)) {
      const status = turn.reason && turn.status !== 'done' ? `${turn.status} (${turn.reason})` : turn.status;
      const before = seen.turns.get(turn.id);
      const index = before?.index ?? seen.turns.size + 1;
      if (before?.status !== status) this.print(label, `${t.localRole}'s turn ${index} ${status}`);
      seen.turns.set(turn.id, { index, status });
      printOutput(turn.id);
    }
    for (const turnId of outputs.keys()) printOutput(turnId);
    const status =
      t.status === 'closed'
        ? `closed (${t.closeReason ?? 'no reason'})${t.root.gone ? ', its root is gone' : ''}`
        : 'open';
    if (status !== seen.status) this.print(label, status);
    seen.status = status;
  }

  private async refreshConversation(id: number): Promise<void> {
    const known = this.conversations.get(id);
    if (known?.deleted) return;
    let detail;
    try {
      detail = await this.client.call('conversations.get', { id });
    } catch (error) {
      if (known && (error as { code?: string }).code === 'not_found') {
        known.deleted = true;
        this.print(known.label, 'deleted');
        return;
      }
      throw error;
    }
    const conversation: Conversation = detail.conversation;
    let seen = known;
    if (!seen) {
      seen = {
        label: `conversation #${id} ${this.owner.name} <-> ${conversation.roleName}`,
        messages: new Set(),
        deleted: false,
      };
      this.conversations.set(id, seen);
      this.print(seen.label, 'opened');
    }
    for (const message of detail.messages) {
      if (seen.messages.has(message.id)) continue;
      seen.messages.add(message.id);
      const author = message.author.kind === 'person' ? `${message.author.name} (person)` : message.author.name;
      this.print(seen.label, `${author}: ${quote(message.body)}`);
    }
  }

  private async refreshConnections(): Promise<void> {
    for (const c of await this.client.call('connections.list', {})) {
      const state = `${c.status}, ${c.online ? `online (${c.path ?? 'no path'})` : 'offline'}; ${this.name} may address [${c.peerRoles.map((r) => r.name).join(', ')}], exposes [${c.exposedRoles.join(', ')}]`;
      if (this.connections.get(c.id) !== state) this.print(`connection ${c.name}`, state);
      this.connections.set(c.id, state);
    }
  }
}

// ------------------------------------------------------------------ the story

/** The demo's own DHT: bootstrap nodes on loopback, so its installations find each other by key alone. */
async function startTestnet(): Promise<{ testnet: Testnet; bootstrap: string }> {
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

async function startNode(name: string, dataRoot: string | undefined, bootstrap: string): Promise<Node> {
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

async function settle(nodes: Node[]): Promise<void> {
  await Promise.all(nodes.map((node) => node.watcher.settle()));
}

async function createRole(node: Node, name: string, description: string) {
  const role = await node.client.call('roles.create', { name, description, agent: { adapter: 'scripted' } });
  act(node, `owner creates role ${name} (scripted agent)`);
  return role;
}

/** `inviter` invites `acceptor`; each exposes the given roles. Returns each side's connection id. */
async function pair(inviter: Node, inviterRoles: string[], acceptor: Node, acceptorRoles: string[]) {
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

async function say(node: Node, conversation: Conversation, text: string): Promise<void> {
  act(
    node,
    `${node.owner.name} (person) says in conversation #${conversation.id} with ${conversation.roleName}: ${quote(text)}`,
  );
  await node.client.call('conversations.send', { id: conversation.id, text });
}

async function messageIn(node: Node, conversationId: number, body: string): Promise<string> {
  return until(node, `the message ${quote(body)} in conversation #${conversationId}`, async () => {
    const { messages } = await node.client.call('conversations.get', { id: conversationId });
    const found = messages.find((m) => m.body === body);
    return [found?.body, messages.map((m) => `${m.author.name}: ${quote(m.body)}`).join(' / ')];
  });
}

async function thread(node: Node, id: number) {
  return node.client.call('threads.get', { id });
}

async function play(nodes: { alice: Node; bob: Node; carol: Node }): Promise<void> {
  const { alice, bob, carol } = nodes;
  const all = [alice, bob, carol];

  heading('Setup: roles and pairing');
  const assistant = await createRole(alice, 'assistant', "alice's assistant");
  await createRole(bob, 'researcher', "bob's researcher");
  await createRole(carol, 'analyst', "carol's analyst");
  const aliceBob = await pair(bob, ['researcher'], alice, ['assistant']);
  const bobsConnectionToAlice = aliceBob.inviterSide;
  await pair(carol, ['analyst'], bob, []);
  await settle(all);

  heading("1. A person's question: alice asks bob/researcher, the answer comes back to her conversation");
  const conversation = await alice.client.call('conversations.open', { roleId: assistant.id });
  await say(alice, conversation, 'ask bob/researcher: what is new?');
  await messageIn(alice, conversation.id, 'bob/researcher says: answer from researcher: what is new?');
  const aliceThread = await until(
    alice,
    "one agent conversation under alice's conversation: question acked, answer handled",
    async () => {
      const list = await alice.client.call('threads.list', { root: { kind: 'conversation', id: conversation.id } });
      const t = list[0];
      return [
        list.length === 1 && t && t.counts.acked === 1 && t.counts.handled === 1 && t,
        list.map(describeThread).join('; '),
      ];
    },
  );
  const bobThread = await until(
    bob,
    `the same agent conversation (${short(aliceThread.threadId)}) as one alice started`,
    async () => {
      const list = await bob.client.call('threads.list', { peerStarted: true });
      const t = list.find((x) => x.threadId === aliceThread.threadId);
      return [t && t.counts.handled === 1 && t.counts.acked === 1 && t, list.map(describeThread).join('; ') || 'none'];
    },
  );
  expectNow(
    bobThread.startedBy === 'peer' && bobThread.root.kind === 'thread' && bobThread.root.id === bobThread.id,
    `bob's thread ${short(bobThread.threadId)} to be peer-started and its own root`,
    describeThread(bobThread),
  );
  await settle(all);
  ok(alice, `the answer is in conversation #${conversation.id}`);
  ok(
    null,
    `thread ${short(aliceThread.threadId)}: at alice rooted in conversation #${conversation.id}, at bob started by alice (its own root); texts acked/handled on both sides`,
  );

  heading('2. A relay: bob/researcher asks carol/analyst for alice, the answer comes back down the chain');
  await say(alice, conversation, 'ask bob/researcher: ask carol/analyst: numbers?');
  await messageIn(alice, conversation.id, 'bob/researcher says: carol/analyst says: answer from analyst: numbers?');
  const bobToCarol = await until(
    bob,
    `an agent conversation with carol/analyst rooted in thread ${short(bobThread.threadId)}`,
    async () => {
      const list = await bob.client.call('threads.list', { root: { kind: 'thread', id: bobThread.id } });
      const t = list.find((x) => x.peerRole === 'analyst' && x.startedBy === 'local');
      return [t && t.counts.acked === 1 && t.counts.handled === 1 && t, list.map(describeThread).join('; ') || 'none'];
    },
  );
  const carolThread = await until(carol, `thread ${short(bobToCarol.threadId)} as one bob started`, async () => {
    const list = await carol.client.call('threads.list', { peerStarted: true });
    const t = list.find((x) => x.threadId === bobToCarol.threadId);
    return [t && t.run.state === 'idle' && t.counts.acked === 1 && t, list.map(describeThread).join('; ') || 'none'];
  });
  const carolTexts = (await thread(carol, carolThread.id)).texts;
  expectNow(!carolTexts.some((t) => /alice/i.test(t.body)), 'nothing about alice at carol', describeTexts(carolTexts));
  const underConversation = await alice.client.call('threads.list', {
    root: { kind: 'conversation', id: conversation.id },
  });
  expectNow(
    underConversation.length === 1 && underConversation[0]!.id === aliceThread.id,
    `alice's second question to bob/researcher in the same thread ${short(aliceThread.threadId)}`,
    underConversation.map(describeThread).join('; '),
  );
  await settle(all);
  ok(alice, 'the relayed answer is in her conversation');
  ok(
    null,
    `chain: alice ${short(aliceThread.threadId)} -> bob, bob ${short(bobToCarol.threadId)} (rooted in ${short(bobThread.threadId)}) -> carol; carol sees a thread bob started and nothing about alice`,
  );

  heading('3. A stop: bob stops the agent working on a long request');
  await say(alice, conversation, 'ask bob/researcher: sleep 30');
  const working = await until(
    bob,
    `researcher working on "sleep 30" in thread ${short(bobThread.threadId)}, its process running`,
    async () => {
      const detail = await thread(bob, bobThread.id);
      const text = detail.texts.find((t) => t.direction === 'in' && t.body === 'sleep 30');
      const pids = agentPids(bob.serve.process.pid!);
      const running = detail.thread.run.state === 'running' && text !== undefined && pids.length > 0;
      return [
        running && pids,
        `run ${detail.thread.run.state}, text ${text ? stateOf(text) : 'not here yet'}, agent processes [${pids.join(', ')}]`,
      ];
    },
  );
  line(`${who('bob')}    agent process ${working.join(', ')} is running`);
  act(bob, `owner stops the agent of thread ${short(bobThread.threadId)} (threads.stop)`);
  const stopped = await bob.client.call('threads.stop', { id: bobThread.id });
  expectNow(stopped.stopped, 'threads.stop to answer {stopped: true}', JSON.stringify(stopped));
  const afterStop = await thread(bob, bobThread.id);
  const lastTurn = afterStop.turns.at(-1);
  expectNow(
    lastTurn?.status === 'stopped' && lastTurn.reason === `Stopped by ${bob.owner.name}`,
    `the last turn stopped by ${bob.owner.name}`,
    JSON.stringify(lastTurn),
  );
  const alive = working.filter((pid) => processAlive(pid));
  expectNow(
    alive.length === 0 && agentPids(bob.serve.process.pid!).length === 0,
    'no agent process left at bob',
    `alive: [${alive.join(', ')}]`,
  );
  const dropped = afterStop.texts.find((t) => t.direction === 'in' && t.body === 'sleep 30');
  expectNow(
    dropped?.state === 'handled',
    '"sleep 30" to count as handled (dropped, not retried)',
    dropped ? stateOf(dropped) : 'missing',
  );
  expectNow(afterStop.thread.run.state === 'idle', 'the run idle', afterStop.thread.run.state);
  await settle(all);
  ok(
    bob,
    `turn stopped (${lastTurn.reason}); process ${working.join(', ')} gone; "sleep 30" handled, not retried; run idle`,
  );

  heading('4. A pause, told: bob pauses the connection to alice; alice hears of it, her assistant is refused at home');
  act(bob, 'owner pauses the connection to alice');
  const paused = await bob.client.call('connections.pause', { id: bobsConnectionToAlice });
  expectNow(
    paused.status === 'paused' && paused.online,
    'the connection paused and still online',
    describeConnection(paused),
  );
  const told = await until(alice, "bob's pause told to her (a status frame)", async () => {
    const c = (await alice.client.call('connections.list', {})).find((x) => x.name === bob.name);
    return [c?.peerPausedAt ? c.peerPausedAt : undefined, c ? describeConnection(c) : 'no connection to bob'];
  });
  ok(alice, `bob's pause was told: connection bob paused by bob since ${told}`);
  const textsBefore = (await thread(alice, aliceThread.id)).texts.length;
  await say(alice, conversation, 'ask bob/researcher: are you there?');
  const refusal = await until(alice, 'her assistant refused at once with paused', async () => {
    const { messages } = await alice.client.call('conversations.get', { id: conversation.id });
    const found = messages.find((m) => m.body.startsWith(`error: ${bob.name} has paused the connection`));
    return [found?.body, messages.map((m) => `${m.author.name}: ${quote(m.body)}`).join(' / ')];
  });
  const afterRefusal = await thread(alice, aliceThread.id);
  const atBob = await thread(bob, bobThread.id);
  expectNow(
    afterRefusal.texts.length === textsBefore && !atBob.texts.some((t) => t.body === 'are you there?'),
    'no text of it at alice or at bob: nothing went on the wire',
    `${describeTexts(afterRefusal.texts)} / bob: ${describeTexts(atBob.texts)}`,
  );
  await settle(all);
  ok(alice, `her assistant was refused at home: ${quote(refusal)}; nothing went out`);
  act(bob, 'owner unpauses the connection to alice');
  const unpaused = await bob.client.call('connections.unpause', { id: bobsConnectionToAlice });
  expectNow(unpaused.status === 'active', 'the connection active again', describeConnection(unpaused));
  await until(alice, "bob's unpause told to her", async () => {
    const c = (await alice.client.call('connections.list', {})).find((x) => x.name === bob.name);
    return [c?.peerPausedAt === null, c ? describeConnection(c) : 'no connection to bob'];
  });
  // Give anything that would wrongly restart a moment to do so.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const afterUnpause = await thread(bob, bobThread.id);
  expectNow(
    afterUnpause.thread.run.state === 'idle' &&
      afterUnpause.thread.run.pending === 0 &&
      afterUnpause.turns.length === afterStop.turns.length &&
      agentPids(bob.serve.process.pid!).length === 0,
    "after unpause: bob's run idle with nothing pending and no new turn, no agent process",
    `bob run ${JSON.stringify(afterUnpause.thread.run)}, turns ${afterStop.turns.length} -> ${afterUnpause.turns.length}`,
  );
  await settle(all);
  ok(bob, 'unpaused: nothing restarted, nothing resent');

  heading("5. A withdrawal down the chain: alice takes back a relayed ask while carol's analyst works on it");
  await say(alice, conversation, 'ask bob/researcher: ask carol/analyst: sleep 30');
  const carolPids = await until(
    carol,
    `analyst working on "sleep 30" in thread ${short(carolThread.threadId)}, its process running`,
    async () => {
      const detail = await thread(carol, carolThread.id);
      const pids = agentPids(carol.serve.process.pid!);
      return [
        detail.thread.run.state === 'running' && pids.length > 0 && pids,
        `run ${detail.thread.run.state}, agent processes [${pids.join(', ')}]`,
      ];
    },
  );
  line(`${who('carol')}  agent process ${carolPids.join(', ')} is running`);
  act(
    alice,
    `${alice.owner.name} (person) withdraws the ask of thread ${short(aliceThread.threadId)} (threads.withdraw)`,
  );
  await alice.client.call('threads.withdraw', { id: aliceThread.id });
  const carolStopped = await until(
    carol,
    `analyst's turn stopped as withdrawn by ${bob.name}, its process gone`,
    async () => {
      const detail = await thread(carol, carolThread.id);
      const last = detail.turns.at(-1);
      const gone = carolPids.every((pid) => !processAlive(pid));
      return [
        last?.status === 'stopped' && last.reason === `Withdrawn by ${bob.name}` && gone && detail,
        `last turn ${JSON.stringify(last)}, processes alive: [${carolPids.filter((pid) => processAlive(pid)).join(', ')}]`,
      ];
    },
  );
  const bobHop = await until(bob, `both hops withdrawn at bob, carol's confirmation in`, async () => {
    const fromAlice = (await thread(bob, bobThread.id)).thread;
    const toCarol = (await thread(bob, bobToCarol.id)).thread;
    return [
      fromAlice.withdrawn?.by === alice.name && toCarol.withdrawn?.told && { fromAlice, toCarol },
      `from alice: ${JSON.stringify(fromAlice.withdrawn)}; to carol: ${JSON.stringify(toCarol.withdrawn)}`,
    ];
  });
  const aliceSide = await until(alice, "bob's confirmation of her withdrawal", async () => {
    const t = (await thread(alice, aliceThread.id)).thread;
    return [t.withdrawn?.told && t, JSON.stringify(t.withdrawn)];
  });
  await settle(all);
  ok(
    null,
    `withdrawn down the chain: alice ${short(aliceThread.threadId)} (by ${aliceSide.withdrawn!.by}) -> bob ${short(bobHop.fromAlice.threadId)} (by ${bobHop.fromAlice.withdrawn!.by}) -> bob ${short(bobHop.toCarol.threadId)} -> carol ${short(carolThread.threadId)} (its turn ${carolStopped.turns.at(-1)!.status}: ${carolStopped.turns.at(-1)!.reason}); each hop confirmed`,
  );

  heading(
    "6. A root deletion: alice deletes her conversation while bob works; its open ask is withdrawn and bob's agent stops",
  );
  const turnsBefore = new Set((await thread(bob, bobThread.id)).turns.map((t) => t.id));
  await say(alice, conversation, 'ask bob/researcher: sleep 8');
  await until(bob, `researcher working on "sleep 8" in thread ${short(bobThread.threadId)}`, async () => {
    const detail = await thread(bob, bobThread.id);
    const turn = detail.turns.find((t) => !turnsBefore.has(t.id));
    const text = detail.texts.find((t) => t.direction === 'in' && t.body === 'sleep 8');
    return [
      turn?.status === 'running' && text,
      `turns ${JSON.stringify(detail.turns.map((t) => t.status))}, ${describeTexts(detail.texts)}`,
    ];
  });
  act(alice, `${alice.owner.name} (person) deletes conversation #${conversation.id}`);
  await alice.client.call('conversations.delete', { id: conversation.id });
  const orphaned = await alice.client.call('threads.list', { orphaned: true });
  const closedAtAlice = orphaned.find((t) => t.id === aliceThread.id);
  expectNow(
    closedAtAlice?.status === 'closed' && closedAtAlice.closeReason === 'root deleted' && closedAtAlice.root.gone,
    `alice's thread ${short(aliceThread.threadId)} closed (root deleted), its root gone, readable by owners`,
    orphaned.map(describeThread).join('; ') || 'no orphaned threads',
  );
  ok(alice, `thread ${short(aliceThread.threadId)} closed with its root; history kept`);
  const stoppedAtBob = await until(
    bob,
    `researcher's turn on "sleep 8" stopped as withdrawn by ${alice.name}`,
    async () => {
      const detail = await thread(bob, bobThread.id);
      const turn = detail.turns.find((t) => !turnsBefore.has(t.id));
      return [
        turn?.status === 'stopped' &&
          turn.reason === `Withdrawn by ${alice.name}` &&
          detail.thread.run.state === 'idle' &&
          turn,
        `turns ${JSON.stringify(detail.turns.map((t) => [t.status, t.reason]))}; ${describeThread(detail.thread)}`,
      ];
    },
  );
  await settle(all);
  ok(
    bob,
    `researcher's turn on "sleep 8" stopped (${stoppedAtBob.reason}): nothing more is done for a deleted conversation`,
  );
}

// ------------------------------------------------------------------ main

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      exit: { type: 'boolean', default: false },
      'data-root': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write('usage: node dist/demo.js [--exit] [--data-root DIR]\n');
    return 0;
  }
  const dataRoot = values['data-root'] ? path.resolve(values['data-root']) : undefined;
  const nodes: Node[] = [];
  let testnet: Testnet | null = null;
  const cleanup = async (keepData: boolean) => {
    for (const node of nodes) node.watcher.stop();
    await Promise.all(nodes.map((node) => node.serve.stop()));
    await testnet?.destroy();
    if (!dataRoot && !keepData) for (const node of nodes) removeDataDir(node.serve.dataDir);
  };
  process.once('exit', () => {
    // A last resort if something threw past the cleanup.
    for (const node of nodes) if (node.serve.process.exitCode === null) node.serve.process.kill('SIGKILL');
  });
  try {
    heading(
      'Starting a DHT of three nodes on loopback, then alice, bob and carol (parley serve, separate data folders)',
    );
    const dht = await startTestnet();
    testnet = dht.testnet;
    line(`dht      bootstrap nodes ${dht.bootstrap} (loopback only; the public DHT is never used)`);
    for (const name of ['alice', 'bob', 'carol']) nodes.push(await startNode(name, dataRoot, dht.bootstrap));
    const [alice, bob, carol] = nodes as [Node, Node, Node];
    await play({ alice, bob, carol });
  } catch (error) {
    await Promise.all(nodes.map((node) => node.watcher.settle().catch(() => undefined)));
    if (error instanceof Unexpected) {
      process.stdout.write(`\nDEMO FAILED\n  expected: ${error.expected}\n  seen:     ${error.seen}\n`);
    } else {
      process.stdout.write(`\nDEMO FAILED\n  ${(error as Error).stack ?? String(error)}\n`);
    }
    for (const node of nodes) {
      const stderr = node.serve.stderr().trim();
      if (stderr) process.stdout.write(`\n${node.name}'s server said:\n${stderr.split('\n').slice(-20).join('\n')}\n`);
    }
    if (!dataRoot && nodes.length > 0)
      process.stdout.write(`\nData kept for a look: ${nodes.map((node) => node.serve.dataDir).join(' ')}\n`);
    await cleanup(true);
    return 1;
  }

  heading('The story is done. The three installations (open in a browser):');
  for (const node of nodes)
    process.stdout.write(`  ${who(node.name)} ${node.serve.info.ui}#token=${node.serve.info.token}\n`);
  if (values.exit) {
    process.stdout.write('\nStopping (--exit).\n');
    await cleanup(false);
    return 0;
  }
  process.stdout.write('\nRunning; what happens from now on is printed below. Ctrl-C stops all three.\n\n');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  process.stdout.write('\nStopping.\n');
  await cleanup(false);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`demo: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
