// The wire benchmark's third baseline: the peer people would pick instead of Parley's
// wire, an A2A server and client from the official JS SDK (@a2a-js/sdk), two processes on
// loopback. The server is the SDK's express app (DefaultRequestHandler with an
// InMemoryTaskStore, jsonRpcHandler, the agent card) whose executor echoes each message
// back as the agent's message; the client is the SDK's JSON-RPC client (ClientFactory)
// calling SendMessage (A2A 1.0's name for message/send) with the same concurrency as
// Parley: N "threads", each its own contextId, each waiting for its answer before it sends
// the next. Nothing is durable on either side, and it is plain HTTP, no TLS: both favour
// A2A over Parley (durable, mutual TLS).
//
// Parley ÷ this is `ratioA2a`.
import { createServer } from 'node:http';
import type { Message, SendMessageRequest } from '@a2a-js/sdk';
import type { AgentExecutor } from '@a2a-js/sdk/server';
import { runProcessPair } from './process-pair';

export interface A2aStats {
  threads: number;
  msgsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
  errors: Record<string, number>;
}

const BODY_BYTES = 64;
const WARMUP_MS = 300;
const round = (value: number) => Math.round(value * 100) / 100;

function textMessage(role: number, text: string, contextId: string, taskId = ''): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId,
    role,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** `bench/run.js a2a-server`: the SDK's express app with an echoing executor; prints its port. */
export async function a2aServer(): Promise<void> {
  const [{ A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, Role }, server, expressSdk, { default: express }] = await Promise.all(
    [import('@a2a-js/sdk'), import('@a2a-js/sdk/server'), import('@a2a-js/sdk/server/express'), import('express')],
  );
  const app = express();
  // As one would deploy it for a thousand clients at once: a listen backlog that takes
  // them all (the default 511 resets the rest), and connections kept open between
  // requests for longer than the client waits (the default 5 s closes them under it).
  const listening = createServer(app);
  listening.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => listening.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
  const port = (listening.address() as { port: number }).port;
  const executor: AgentExecutor = {
    execute(context, bus) {
      const text = context.userMessage.parts[0]?.content;
      bus.publish(
        server.AgentEvent.message(
          textMessage(Role.ROLE_AGENT, text?.$case === 'text' ? text.value : '', context.contextId, context.taskId),
        ),
      );
      bus.finished();
      return Promise.resolve();
    },
    cancelTask: () => Promise.resolve(),
  };
  const card = {
    name: 'Echo',
    description: 'Echoes every message',
    supportedInterfaces: [
      {
        url: `http://127.0.0.1:${port}/`,
        protocolBinding: 'JSONRPC',
        tenant: '',
        protocolVersion: A2A_PROTOCOL_VERSION,
      },
    ],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [],
    documentationUrl: '',
    signatures: [],
  };
  const requestHandler = new server.DefaultRequestHandler(card, new server.InMemoryTaskStore(), executor);
  app.use(`/${AGENT_CARD_PATH}`, expressSdk.agentCardHandler({ agentCardProvider: requestHandler }));
  app.use(expressSdk.jsonRpcHandler({ requestHandler, userBuilder: expressSdk.UserBuilder.noAuthentication }));
  process.stdout.write(`${port}\n`);
}

/** `bench/run.js a2a-client PORT THREADS MS`: stop-and-wait SendMessage per thread; prints its figures. */
export async function a2aClient(port: number, threads: number, durationMs: number): Promise<void> {
  const [{ Role }, { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory }] = await Promise.all([
    import('@a2a-js/sdk'),
    import('@a2a-js/sdk/client'),
  ]);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory()] }),
  );
  const client = await factory.createFromUrl(`http://127.0.0.1:${port}`);
  // Every thread's first answer opens its connection (the client's pool makes one per
  // request in flight); the measurement starts once each thread has had one, and counts the
  // answers that arrive within it, whenever they were sent.
  const latencies: number[] = [];
  let start = Infinity;
  let stopAt = Infinity;
  let answered = 0;
  let failed = 0;
  const errors: Record<string, number> = {};
  let warm: () => void = () => {};
  const warmedUp = new Promise<void>((resolve) => (warm = resolve));
  const loop = async (i: number) => {
    const contextId = `a2a-thread-${String(i).padStart(6, '0')}`;
    for (let seq = 1; performance.now() < stopAt; seq++) {
      const text = `${i}:${seq}|`.padEnd(BODY_BYTES, 'x');
      const request: SendMessageRequest = {
        tenant: '',
        message: textMessage(Role.ROLE_USER, text, contextId),
        configuration: undefined,
        metadata: {},
      };
      const t0 = performance.now();
      try {
        const answer = await client.sendMessage(request);
        const part = 'parts' in answer ? answer.parts[0]?.content : undefined;
        if (part?.$case !== 'text' || part.value !== text) throw new Error('not an echo');
      } catch (error) {
        failed++;
        const cause = (error as { cause?: { code?: string } }).cause?.code;
        const what = cause ?? (error as Error).message.slice(0, 80);
        errors[what] = (errors[what] ?? 0) + 1;
        continue;
      }
      const at = performance.now();
      if (seq === 1 && ++answered === threads) warm();
      if (at >= start && at <= stopAt) latencies.push(at - t0);
    }
  };
  const running = Promise.all(Array.from({ length: threads }, (_, i) => loop(i)));
  await warmedUp;
  await new Promise((resolve) => setTimeout(resolve, WARMUP_MS));
  start = performance.now();
  stopAt = start + durationMs;
  await running;
  latencies.sort((a, b) => a - b);
  const pct = (q: number) => round(latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)]!);
  const result: A2aStats = {
    threads,
    msgsPerSec: Math.round((latencies.length / durationMs) * 1000),
    p50Ms: pct(0.5),
    p99Ms: pct(0.99),
    failed,
    errors,
  };
  process.stdout.write(JSON.stringify(result));
}

/** Runs the A2A server and client as two processes; resolves with the client's figures. */
export function measureA2a(threads: number, durationMs: number): Promise<A2aStats> {
  return runProcessPair<A2aStats>(
    'a2a baseline',
    () => ['a2a-server'],
    (_scratch, port) => ['a2a-client', String(port), String(threads), String(durationMs)],
  );
}
