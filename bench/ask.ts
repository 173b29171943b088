// ask: what a person waits for when their agent asks a peer's agent. Two installations
// in separate processes (`parley serve` children, paired over mutual TLS on loopback,
// each on a core of its own where there are two), scripted agents on both sides:
//
//   alice → her assistant: "ask bob/helper: question N"
//     assistant's turn: `parley send --to bob/helper question N`
//   bob's helper, in the agent conversation alice started: `parley reply "answer from helper: …"`
//   alice's assistant, in that agent conversation (the answer came back):
//     `parley report "bob/helper says: answer from helper: …"` → a message in alice's conversation
//
// Timed from `conversations.send` to that message seen through alice's app API, one ask
// at a time, interleaved with the baseline: a bare `node -e 0` spawned in the same
// environment. Every sample, ask or baseline, starts once both installations' runs are
// idle and their processes have used no CPU for a moment (bench/stats.ts `untilIdle`):
// what an answer leaves to do in the background (the runs' next sandboxes starting) once
// fell on the next sample, and made every other baseline a third slower. Three `parley`
// commands start on the way, one per hop; the three agents' own processes, Parley's
// scripted worker, are started ahead in their sandboxes (docs/security.md, "And started
// ahead") and only read their turn.
//
// `stagesMs` splits the round trip by the timestamps both installations record (turns
// started, texts committed, the report's message): medians per stage.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import type { ResultOf } from '../shared/api-contract';
import type { ApiClient } from '../test-support/api-client';
import { removeDataDir, startServe, type ServeProcess } from '../test-support/serve-process';
import { interleave, median, ms, round, untilIdle, type Emit, type Progress } from './stats';

interface Side {
  serve: ServeProcess;
  api: ApiClient;
}

/**
 * Each installation on a core of its own, with its agents (`taskset`), where the machine
 * has two and taskset is there: two people's installations run on two machines, and on
 * shared cores what one does after its turn (its run's next sandbox starting) slowed the
 * other's agent starting the next hop by 30–50 ms. Null: both share every core.
 */
function coreOf(index: number): string[] | undefined {
  if (os.availableParallelism() < 2 || process.platform !== 'linux') return undefined;
  const taskset = ['/usr/bin/taskset', '/bin/taskset'].find((file) => existsSync(file));
  return taskset ? [taskset, '-c', String(index)] : undefined;
}

async function side(name: string, env: NodeJS.ProcessEnv, core: string[] | undefined): Promise<Side> {
  const serve = await startServe({ name, env, wrap: core });
  return { serve, api: await serve.connect() };
}

/** Bob invites alice, offering his helper; resolves once both see each other online. */
async function pairSides(alice: Side, bob: Side): Promise<void> {
  const { code } = await bob.api.call('connections.invite', { roles: ['helper'] });
  await alice.api.call('connections.accept', { code, roles: [] });
  await Promise.all([
    alice.api.waitFor(
      async () => (await alice.api.call('connections.list', {})).find((c) => c.online && c.peerRoles.length === 1),
      20_000,
      'alice to see bob online with his helper',
    ),
    bob.api.waitFor(
      async () => (await bob.api.call('connections.list', {})).find((c) => c.online),
      20_000,
      'bob to see alice online',
    ),
  ]);
}

const at = (iso: string) => Date.parse(iso);

interface Round {
  elapsedMs: number;
  stages: Record<string, number>;
}

export async function askBench(emit: Emit, progress: Progress, options: { scale?: number } = {}): Promise<void> {
  const rounds = Math.max(5, Math.round(20 * (options.scale ?? 1)));
  const env = { ...process.env };
  const cores = [coreOf(0), coreOf(1)];
  const [alice, bob] = await Promise.all([side('alice', env, cores[0]), side('bob', env, cores[1])]);
  try {
    // bob's helper answers a peer, which it does only inside the sandbox: without one the question waits forever.
    const sandbox = await bob.api.call('sandbox.get', {});
    if (!sandbox.available)
      throw new Error(`the ask line needs the agents' sandbox, and it cannot run here: ${sandbox.reason}`);
    const assistant = await alice.api.call('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    await bob.api.call('roles.create', {
      name: 'helper',
      description: 'Answers questions',
      agent: { adapter: 'scripted' },
    });
    await pairSides(alice, bob);
    const conversation = await alice.api.call('conversations.open', { roleId: assistant.id });
    let serial = 0;

    /** Until alice's conversation and both agent conversations have no turn running or queued. */
    const quiet = async () => {
      await alice.api.waitFor(
        async () => {
          const detail = await alice.api.call('conversations.get', { id: conversation.id });
          const threads = await alice.api.call('threads.list', { root: { kind: 'conversation', id: conversation.id } });
          return detail.conversation.run.state === 'idle' && threads.every((t) => t.run.state === 'idle');
        },
        30_000,
        'alice to be idle',
      );
      await bob.api.waitFor(
        async () => (await bob.api.call('threads.list', { peerStarted: true })).every((t) => t.run.state === 'idle'),
        30_000,
        'bob to be idle',
      );
    };

    const ask = async (): Promise<Round> => {
      const question = `question ${++serial}`;
      const expected = `bob/helper says: answer from helper: ${question}`;
      const t0 = process.hrtime.bigint();
      const sentAt = Date.now();
      await alice.api.call('conversations.send', { id: conversation.id, text: `ask bob/helper: ${question}` });
      let detail: ResultOf<'conversations.get'> | undefined;
      await alice.api.waitFor(
        async () => {
          detail = await alice.api.call('conversations.get', { id: conversation.id });
          return detail.messages.some((m) => m.body === expected);
        },
        30_000,
        `the answer to ${question}`,
      );
      const elapsedMs = ms(t0, process.hrtime.bigint());
      const seenAt = Date.now();
      const stages = await stagesOf(alice, bob, conversation.id, detail!, question, expected, sentAt, seenAt);
      await quiet();
      return { elapsedMs, stages };
    };

    // Each sample starts once both installations have nothing left to do, as when a
    // person asks again after reading the answer.
    const servePids = [alice, bob].map((s) => s.serve.process.pid!);
    let busy = 0;
    const settled = async () => {
      if (!(await untilIdle(servePids))) busy++;
    };
    const asks: Round[] = [];
    const samples = await interleave(
      {
        ask: async () => {
          await settled();
          const round = await ask();
          asks.push(round);
          return round.elapsedMs;
        },
        node: async () => {
          await settled();
          return bareNode(env);
        },
      },
      { rounds, warmup: 2 },
    );
    const recorded = asks.slice(-samples.ask.length);
    const p50Ms = median(samples.ask);
    const nodeMs = median(samples.node);
    const ratio = p50Ms / nodeMs;
    const stageNames = Object.keys(recorded[0]!.stages);
    const stagesMs = Object.fromEntries(
      stageNames.map((name) => [name, round(median(recorded.map((r) => r.stages[name]!)))]),
    );
    progress(`ask: ${samples.ask.map(round).join(' ')}\nbench: ask: node ${samples.node.map(round).join(' ')}`);
    emit({
      name: 'ask',
      p50Ms: round(p50Ms),
      nodeMs: round(nodeMs),
      ratio: round(ratio),
      goal: 'ratio<=6',
      met: ratio <= 6,
      rounds: samples.ask.length,
      stagesMs,
      nodeStartVariables: Object.keys(env).filter((name) => /^NODE_/.test(name)),
      /** Each installation and its agents on a core of its own; the baseline on any. */
      coreEach: cores.every((core) => core !== undefined),
      /** Samples taken without both installations going quiet first (they stayed busy for 3 s). */
      startedBusy: busy,
      loadAverage: round(os.loadavg()[0]!),
    });
  } finally {
    for (const s of [alice, bob]) {
      s.api.close();
      await s.serve.stop();
      removeDataDir(s.serve.dataDir);
    }
  }
}

/** Where one round trip's time went, from what both installations recorded. */
async function stagesOf(
  alice: Side,
  bob: Side,
  conversationId: number,
  detail: ResultOf<'conversations.get'>,
  question: string,
  expected: string,
  sentAt: number,
  seenAt: number,
): Promise<Record<string, number>> {
  const asked = detail.messages.find((m) => m.body === `ask bob/helper: ${question}`)!;
  const report = detail.messages.find((m) => m.body === expected)!;
  const assistantTurn = detail.turns.filter((t) => at(t.startedAt) >= at(asked.createdAt))[0]!;
  const [aliceThread] = await alice.api.call('threads.list', { root: { kind: 'conversation', id: conversationId } });
  const aliceDetail = await alice.api.call('threads.get', { id: aliceThread!.id, textsLimit: 10 });
  const out = aliceDetail.texts.find((t) => t.direction === 'out' && t.body === question)!;
  const back = aliceDetail.texts.find((t) => t.direction === 'in' && t.body === `answer from helper: ${question}`)!;
  const answerTurn = aliceDetail.turns.filter((t) => at(t.startedAt) >= at(back.createdAt))[0]!;
  const [bobThread] = await bob.api.call('threads.list', { peerStarted: true });
  const bobDetail = await bob.api.call('threads.get', { id: bobThread!.id, textsLimit: 10 });
  const received = bobDetail.texts.find((t) => t.direction === 'in' && t.body === question)!;
  const reply = bobDetail.texts.find((t) => t.direction === 'out' && t.body === `answer from helper: ${question}`)!;
  const helperTurn = bobDetail.turns.filter((t) => at(t.startedAt) >= at(received.createdAt))[0]!;
  return {
    'send → assistant turn started': at(assistantTurn.startedAt) - sentAt,
    'assistant turn → text committed (agent + parley send)': at(out.createdAt) - at(assistantTurn.startedAt),
    'text → committed at bob': at(received.createdAt) - at(out.createdAt),
    'bob: text → helper turn started': at(helperTurn.startedAt) - at(received.createdAt),
    'helper turn → reply committed (agent + parley reply)': at(reply.createdAt) - at(helperTurn.startedAt),
    'reply → committed at alice': at(back.createdAt) - at(reply.createdAt),
    'alice: reply → answer turn started': at(answerTurn.startedAt) - at(back.createdAt),
    'answer turn → report committed (agent + parley report)': at(report.createdAt) - at(answerTurn.startedAt),
    'report → seen through the app API': seenAt - at(report.createdAt),
  };
}

/** One bare `node -e 0`, spawned and waited for like an agent process. */
function bareNode(env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn('node', ['-e', '0'], { env, stdio: 'ignore' });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve(ms(t0, process.hrtime.bigint())) : reject(new Error(`node: ${code}`)),
    );
  });
}
