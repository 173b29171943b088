// cli-start: what every agent action pays before it does anything — `parley context`
// with a valid run token, as an agent runs it (the `parley` launcher on the turn's PATH,
// the turn's environment), against `node -e 0` with the same environment. Interleaved,
// medians. Also reported: the CLI without the launcher (`node dist/cli.js context`),
// `parley help` (start-up without a request) and `parley mcp` answering `initialize`
// and `tools/list` over stdio.
//
// The run token belongs to a real turn: a command agent that hands its environment to
// the benchmark over a socket and waits until the benchmark stops it.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openInstallation } from '../main/installation';
import { distPaths } from '../main/paths';
import { SignalServer, writeAgentScripts } from './agents';
import { interleave, keepAlive, median, ms, round, type Emit, type Progress } from './stats';
import { removeDataDir } from '../test-support/data-folder';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
  /** CPU time of the process (and whatever it ran), or null where /proc is not there. */
  cpuMs: number | null;
}

/**
 * CPU time of this process's children that have ended (cutime + cstime of /proc/self/stat),
 * in ms: spawned one at a time, the difference across one spawn is that child's. Much
 * steadier than wall time when other work shares the cores; 10 ms ticks, so read it as a
 * mean over many runs.
 */
function childrenCpuMs(): number | null {
  let stat: string;
  try {
    stat = readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return null;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 of the whole line (cutime, cstime), counted from 3 after the name.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS_PER_SEC;
}
const CLOCK_TICKS_PER_SEC = 100;

/** Spawns a command, writes `input` to its stdin (or closes it), and times it until it has exited and its pipes closed. */
export function timedRun(command: string, args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const cpu0 = childrenCpuMs();
    const t0 = process.hrtime.bigint();
    const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    child.once('error', reject);
    child.once('close', (code) => {
      const elapsedMs = ms(t0, process.hrtime.bigint());
      const cpu1 = childrenCpuMs();
      resolve({ code, stdout, stderr, elapsedMs, cpuMs: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0 });
    });
  });
}

/** The MCP handshake and a tools/list, one JSON-RPC message per line; the server exits when stdin ends. */
const MCP_SESSION =
  [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  ]
    .map((message) => JSON.stringify(message))
    .join('\n') + '\n';

export async function cliStartBench(emit: Emit, progress: Progress, options: { scale?: number } = {}): Promise<void> {
  const rounds = Math.max(5, Math.round(30 * (options.scale ?? 1)));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-cli-'));
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-cli-scratch-'));
  const scripts = writeAgentScripts(scratch);
  const signals = new SignalServer(path.join(scratch, 'signal.sock'));
  await signals.listen();
  const inst = await openInstallation({ dataDir, name: 'bench', defaultRole: false });
  try {
    const session = { person: inst.owner() };
    const role = (await inst.call(session, 'roles.create', {
      name: 'holder',
      agent: { adapter: 'command', command: ['node', scripts.holder, signals.socketPath] },
    })) as { id: number };
    const chat = (await inst.call(session, 'conversations.open', { roleId: role.id })) as { id: number };
    await inst.call(session, 'conversations.send', { id: chat.id, text: 'hold' });
    const agentEnv = JSON.parse((await signals.next()).text) as Record<string, string>;
    // What the CLI needs and nothing that changes how node starts; the agent's whole
    // environment (inherited from Parley's) is measured as well.
    const env = {
      PATH: agentEnv.PATH,
      HOME: agentEnv.HOME,
      PARLEY_TOKEN: agentEnv.PARLEY_TOKEN,
      PARLEY_API: agentEnv.PARLEY_API,
    };
    const cpu: Record<string, number[]> = {};
    const check = (what: string, ran: Ran, expect: (stdout: string) => boolean) => {
      if (ran.code !== 0 || !expect(ran.stdout))
        throw new Error(
          `${what}: exit ${ran.code}, stdout ${ran.stdout.slice(0, 200)}, stderr ${ran.stderr.slice(0, 400)}`,
        );
      if (ran.cpuMs !== null) (cpu[what] ??= []).push(ran.cpuMs);
      return ran.elapsedMs;
    };
    const meanCpu = (what: string) => {
      const values = cpu[what]?.slice(3) ?? [];
      return values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
    };
    const isRunContext = (stdout: string) => (JSON.parse(stdout) as { token?: string }).token === 'run';
    const samples = await interleave(
      {
        node: async () => check('node -e 0', await timedRun('node', ['-e', '0'], env), () => true),
        parley: async () => check('parley context', await timedRun('parley', ['context'], env), isRunContext),
        direct: async () =>
          check('node dist/cli.js context', await timedRun('node', [distPaths.cli, 'context'], env), isRunContext),
        nodeAgentEnv: async () =>
          check('node -e 0 (agent env)', await timedRun('node', ['-e', '0'], agentEnv), () => true),
        parleyAgentEnv: async () =>
          check('parley context (agent env)', await timedRun('parley', ['context'], agentEnv), isRunContext),
        help: async () =>
          check('parley help', await timedRun('parley', ['help'], env), (out) => out.startsWith('Usage: parley')),
        mcp: async () =>
          check(
            'parley mcp',
            await timedRun('parley', ['mcp'], env, MCP_SESSION),
            (out) => out.includes('"id":2') && out.includes('"name":"send"'),
          ),
      },
      { rounds, warmup: 3 },
    );
    await inst.call(session, 'conversations.stop', { id: chat.id });
    const nodeMs = median(samples.node);
    const parleyMs = median(samples.parley);
    const ratio = parleyMs / nodeMs;
    progress(
      `cli-start: node ${samples.node.map(round).join(' ')}\n` +
        `bench: cli-start: parley ${samples.parley.map(round).join(' ')}`,
    );
    emit({
      name: 'cli-start',
      parleyMs: round(parleyMs),
      nodeMs: round(nodeMs),
      ratio: round(ratio),
      goal: 'ratio<=1.3',
      met: ratio <= 1.3,
      rounds: samples.node.length,
      // The same command without the launcher (sh + exec), the CLI with no request, and the MCP server's handshake.
      directMs: round(median(samples.direct)),
      helpMs: round(median(samples.help)),
      mcpMs: round(median(samples.mcp)),
      mcpRatio: round(median(samples.mcp) / nodeMs),
      // With the agent's whole environment, as Parley passes it on (NODE_OPTIONS, NODE_EXTRA_CA_CERTS… change node's start).
      agentEnvParleyMs: round(median(samples.parleyAgentEnv)),
      agentEnvNodeMs: round(median(samples.nodeAgentEnv)),
      agentEnvVariables: Object.keys(agentEnv).filter((name) => /^NODE_/.test(name)),
      overheadMs: round(median(samples.parley.map((value, i) => value - samples.node[i]!))),
      // CPU time, mean per run: steadier than wall time when other work shares the cores.
      cpu: {
        parleyMs: round(meanCpu('parley context')),
        nodeMs: round(meanCpu('node -e 0')),
        ratio: round(meanCpu('parley context') / meanCpu('node -e 0')),
        helpMs: round(meanCpu('parley help')),
        mcpMs: round(meanCpu('parley mcp')),
      },
      loadAverage: round(os.loadavg()[0]!),
    });
  } finally {
    await keepAlive(() => inst.close());
    await signals.close();
    removeDataDir(dataDir);
    rmSync(scratch, { recursive: true, force: true });
  }
}
