// A step-by-step timing of the run manager's turn start path (startTurn in
// main/runs/run-manager.ts), replayed with the same queries on a real installation's
// database. Not part of `npm run bench`; build and run it by hand when turn-overhead
// needs explaining:
//   npx esbuild bench/profile-start.ts --bundle --platform=node --format=esm \
//     --packages=external --outfile=dist/bench/profile-start.js && node dist/bench/profile-start.js
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { adapters } from '../main/agents';
import type { AgentInput } from '../main/agents/types';
import { openInstallation } from '../main/installation';
import { log } from '../main/log';
import { groupAlive, processStartTime, spawnInGroup } from '../main/runs/process-tree';
import { transaction } from '../main/store/database';
import { getRole } from '../main/store/queries/roles';
import {
  endTurn,
  ensureRun,
  getRun,
  insertInput,
  insertTurn,
  pendingInputs,
  runnableRuns,
  setTurnProcess,
  takeInputs,
} from '../main/store/queries/runs';
import { hashToken, newToken } from '../main/tokens';
import { removeDataDir } from '../test-support/data-folder';

const ROUNDS = 40;
const now = () => process.hrtime.bigint();

async function main(): Promise<void> {
  log.setQuiet(true);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-profile-'));
  const inst = await openInstallation({ dataDir, name: 'profile' });
  const owner = inst.owner();
  const session = { person: owner };
  const role = (await inst.call(session, 'roles.create', {
    name: 'true',
    agent: { adapter: 'command', command: ['true'] },
  })) as { id: number };
  const chat = (await inst.call(session, 'conversations.open', { roleId: role.id })) as { id: number };
  const context = { kind: 'conversation' as const, id: chat.id };
  const steps = new Map<string, number[]>();
  const record = (name: string, from: bigint) => {
    const list = steps.get(name) ?? [];
    list.push(Number(now() - from) / 1e6);
    steps.set(name, list);
  };
  const db = inst.db;
  const run = ensureRun(db, context, role.id);
  // Exercise a bare spawn too, for comparison.
  for (let i = 0; i < ROUNDS; i++) {
    let t = now();
    insertInput(db, run.id, 'message', `hello ${i}`, owner.name, true);
    record('0 insertInput (autocommit, not in the measured span)', t);

    t = now();
    const runIds = runnableRuns(db, 4);
    record('1 runnableRuns', t);
    t = now();
    const row = getRun(db, runIds[0]!)!;
    record('2 getRun', t);
    t = now();
    const token = newToken('prt');
    const hash = hashToken(token);
    record('3 newToken+hashToken', t);
    t = now();
    const { turnId, inputs } = transaction(db, () => {
      const pending = pendingInputs(db, row);
      const turnId = insertTurn(db, row.id, 0, hash);
      takeInputs(
        db,
        turnId,
        pending.map((input) => input.id),
      );
      return { turnId, inputs: pending };
    });
    record('4 take transaction (commit = fsync)', t);
    t = now();
    const fullRole = getRole(db, row.role_id)!;
    const agentContext = inst.runs.describeContext(row);
    record('5 getRole+describeContext', t);
    t = now();
    const launch = adapters.command.prepare({
      role: fullRole,
      session: row.session,
      peers: [],
      trust: 'own',
      privateDir: path.join(inst.dataDir, 'turns'),
      inputs: inputs.map((input): AgentInput => ({
        kind: input.kind,
        from: input.author_name,
        body: input.body,
        at: input.created_at,
      })),
      context: agentContext,
      env: { PARLEY_TOKEN: token },
      defaultCwd: dataDir,
      paths: { node: process.execPath, scriptedAgent: '' },
    });
    record('6 adapter.prepare', t);
    t = now();
    const child = spawnInGroup(launch.command, launch.args, { cwd: launch.cwd, env: launch.env });
    record('7 spawnInGroup', t);
    t = now();
    setTurnProcess(db, turnId, child.pid!, processStartTime(child.pid!));
    record('8 setTurnProcess (autocommit = fsync) + procStart', t);
    t = now();
    child.stdin!.on('error', () => {});
    child.stdin!.end(launch.stdin);
    record('9 stdin.end', t);
    await new Promise((resolve) => child.once('close', resolve));
    endTurn(db, turnId, 'done', '', null);

    t = now();
    const bare = spawn('true', [], { stdio: ['pipe', 'pipe', 'pipe'] });
    record('b bare spawn() call', t);
    await new Promise((resolve) => bare.once('close', resolve));
  }
  // The stop path's parts: a node agent (default SIGTERM) with a child, in its own group.
  for (let i = 0; i < 20; i++) {
    const agent = spawnInGroup(
      'node',
      [
        '-e',
        "require('child_process').spawn('sleep',['30'],{stdio:'ignore'}).once('spawn',()=>console.log('ready'));setTimeout(()=>{},60000)",
      ],
      { cwd: dataDir, env: process.env },
    );
    await new Promise((resolve) => agent.stdout!.once('data', resolve));
    const closed = new Promise((resolve) => agent.once('close', resolve));
    let t = now();
    transaction(db, () =>
      db.prepare("UPDATE inputs SET state = 'handled' WHERE run_id = ? AND state = 'pending'").run(run.id),
    );
    record('s1 drop-pending transaction (fsync)', t);
    t = now();
    process.kill(-agent.pid!, 'SIGTERM');
    await closed;
    record("s2 SIGTERM → leader 'close' event", t);
    t = now();
    const alive = groupAlive(agent.pid!);
    record('s3 groupAlive scan of /proc', t);
    if (alive) {
      t = now();
      while (groupAlive(agent.pid!)) await new Promise((resolve) => setTimeout(resolve, 1));
      record('s4 extra wait until the child is gone', t);
    }
    t = now();
    transaction(db, () => insertInput(db, run.id, 'notice', 'stopped', 'parley', false));
    record('s5 commit-stopped transaction (fsync)', t);
  }
  for (const [name, values] of [...steps].sort()) {
    const sorted = values.slice(values.length > 10 ? 5 : 0).sort((a, b) => a - b);
    const median = sorted[sorted.length >> 1]!;
    process.stderr.write(
      `${name.padEnd(55)} n=${String(sorted.length).padEnd(3)} median ${median.toFixed(3)} ms   max ${sorted.at(-1)!.toFixed(3)} ms\n`,
    );
  }
  await inst.close();
  removeDataDir(dataDir);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`profile failed: ${String(error)}\n`);
    process.exit(1);
  },
);
