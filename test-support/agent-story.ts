// The story every real agent is tested with, end to end: two installations on loopback
// (alice with an `assistant`, bob with a `researcher`), paired over mutual TLS, both
// roles run by the same kind of real agent, both agents' models played by one model
// server on loopback. Each role's requests carry a key of their own, so the test can
// tell whose agent asked the model what.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ConversationDetail } from '../shared/api-contract';
import type { AgentSettings } from '../shared/domain';
import { runningTurns } from '../main/store/queries/runs';
import type { TestInstallation } from './installation';
import { startModelServer, type ModelRequest, type ModelServer, type ModelServerOptions } from './model-server';
import { openPeer, pair } from './network';

/** What a role needs to run its agent against the model server: its own home folder and key. */
export interface StoryRole {
  server: ModelServer;
  /** A private folder for the agent's HOME and its configuration. */
  home: string;
  /** The key the agent sends; the model server records it with each request. */
  key: string;
}

export interface Story {
  server: ModelServer;
  alice: TestInstallation;
  bob: TestInstallation;
  /** alice's conversation with her assistant. */
  conversationId: number;
  aliceKey: string;
  bobKey: string;
  /** The model requests made by alice's assistant (or bob's researcher). */
  requestsOf(key: string): ModelRequest[];
  /** The conversation's detail. */
  detail(): Promise<ConversationDetail>;
  /** Sends a message from alice and resolves once a turn it started has ended. */
  say(text: string): Promise<ConversationDetail>;
  /** Waits for a message in alice's conversation. */
  message(match: (body: string) => boolean, what: string): Promise<string>;
  /** The pid of alice's running turn, once it runs. */
  runningPid(): Promise<number>;
  /** What both installations and the model server saw, for a failing test's message. */
  diagnose(): Promise<string>;
  /** Closes alice's installation and opens it again on the same data folder and port. */
  restartAlice(): Promise<void>;
  close(): Promise<void>;
}

export async function startStory(
  agentFor: (role: StoryRole) => AgentSettings,
  options: { model?: ModelServerOptions; stopGraceMs?: number } = {},
): Promise<Story> {
  const server = await startModelServer(options.model);
  const base = mkdtempSync(path.join(os.tmpdir(), 'parley-story-'));
  const home = (name: string) => {
    const dir = path.join(base, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const peerOptions = { stopGraceMs: options.stopGraceMs ?? 3_000 };
  let alice = await openPeer('alice', peerOptions);
  const bob = await openPeer('bob', peerOptions);
  const aliceKey = 'sk-alice-assistant';
  const bobKey = 'sk-bob-researcher';
  const assistant = await alice.owner('roles.create', {
    name: 'assistant',
    agent: agentFor({ server, home: home('alice-home'), key: aliceKey }),
  });
  await bob.owner('roles.create', {
    name: 'researcher',
    agent: agentFor({ server, home: home('bob-home'), key: bobKey }),
  });
  await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
  const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
  const detail = () => alice.owner('conversations.get', { id: conversation.id });

  const story: Story = {
    server,
    get alice() {
      return alice;
    },
    bob,
    conversationId: conversation.id,
    aliceKey,
    bobKey,
    requestsOf: (key) => server.requests.filter((request) => request.key === key),
    detail,
    async say(text) {
      const before = (await detail()).turns.length;
      await alice.owner('conversations.send', { id: conversation.id, text });
      return alice.waitFor(
        async () => {
          const d = await detail();
          const last = d.turns.at(-1);
          return d.turns.length > before && last && last.status !== 'running' ? d : undefined;
        },
        `the turn for "${text}"`,
        60_000,
      );
    },
    message(match, what) {
      return alice.waitFor(async () => (await detail()).messages.find((m) => match(m.body))?.body, what, 120_000);
    },
    async runningPid() {
      // The conversation's own turn: an agent conversation's run (the one that reported the
      // peer's answer) may still be winding down beside it.
      const runId = (await detail()).conversation.run.id;
      return alice.waitFor(
        () => runningTurns(alice.installation.db).find((turn) => turn.run_id === runId)?.pid ?? undefined,
        'a running turn of the conversation',
        60_000,
      );
    },
    async diagnose() {
      const lines: string[] = [];
      const d = await detail();
      lines.push('alice’s conversation:', ...d.messages.map((m) => `  ${m.author.name}: ${m.body}`));
      lines.push(...d.turns.map((turn) => `  turn ${turn.id} ${turn.status}${turn.reason ? `: ${turn.reason}` : ''}`));
      for (const [who, t, params] of [
        ['alice', alice, { root: { kind: 'conversation', id: conversation.id } }],
        ['bob', bob, { peerStarted: true }],
      ] as const) {
        for (const thread of await t.owner('threads.list', params)) {
          const threadDetail = await t.owner('threads.get', { id: thread.id });
          lines.push(
            `${who}’s thread ${thread.id} (${thread.localRole} ↔ ${thread.peerRole}), run ${thread.run.state}:`,
          );
          lines.push(...threadDetail.texts.map((text) => `  ${text.direction} ${text.state}: ${text.body}`));
          lines.push(
            ...threadDetail.turns.map(
              (turn) => `  turn ${turn.id} ${turn.status}${turn.reason ? `: ${turn.reason}` : ''}`,
            ),
          );
          lines.push(...threadDetail.live.map((line) => `  live: ${line}`));
        }
      }
      lines.push('model requests:');
      for (const request of server.requests) {
        const last = request.messages.at(-1);
        lines.push(
          `  #${request.seq} ${request.key === aliceKey ? 'alice' : request.key === bobKey ? 'bob' : request.key} ${request.path} ` +
            `last=${last?.role}:${(last?.text ?? '').slice(-120).replace(/\s+/g, ' ')} → ${JSON.stringify(request.reply)}${request.aborted ? ' (aborted)' : ''}`,
        );
      }
      return lines.join('\n');
    },
    async restartAlice() {
      const port = Number(alice.installation.peerAddress!.split(':')[1]);
      alice = await alice.restart({ peerPort: port });
    },
    async close() {
      await alice.close();
      await bob.close();
      await server.close();
      rmSync(base, { recursive: true, force: true });
    },
  };
  return story;
}
