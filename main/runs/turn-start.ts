// Starting a turn: the run's pending inputs taken by a new turn, its agent's launch
// prepared by its adapter, and what the run manager keeps of the turn while it runs.
import { mkdirSync } from 'node:fs';
import type { Role, TurnTrust } from '../../shared/domain';
import { startWatch } from '../agents/model-watch';
import type { AgentContext, AgentInput, AgentLaunch, PeerDirectoryEntry } from '../agents/types';
import { transaction, type Db } from '../store/database';
import { listPeople } from '../store/queries/people';
import { insertTurn, pendingInputs, takeInputs, type InputRow, type RunRow } from '../store/queries/runs';
import { hashToken } from '../tokens';
import type { ActiveTurn } from './active-turn';
import type { RunManagerOptions } from './run-options';
import { WORKING } from './turn-phase';

/** In one transaction: a new turn, whose token is `token`, takes every input pending for the run. */
export function claimInputs(
  db: Db,
  run: RunRow,
  token: string,
): { turnId: number; inputs: InputRow[]; attempt: number } {
  return transaction(db, () => {
    const pending = pendingInputs(db, run);
    // A re-run after a crash takes back the inputs of the interrupted turn.
    const attempt = pending.some((input) => input.turn_id !== null) ? 1 : 0;
    const turnId = insertTurn(db, run.id, attempt, hashToken(token));
    takeInputs(
      db,
      turnId,
      pending.map((input) => input.id),
    );
    return { turnId, inputs: pending, attempt };
  });
}

export type LaunchOptions = Pick<
  RunManagerOptions,
  'adapters' | 'workDir' | 'agentEnv' | 'paths' | 'trustOf' | 'roleFolder'
>;

export interface TurnToPrepare {
  run: RunRow;
  role: Role | undefined;
  inputs: InputRow[];
  token: string;
  /** The turn's own temporary folder, made here. */
  runTmp: string;
}

export interface PreparedTurn {
  role: Role;
  launch: AgentLaunch;
  context: AgentContext;
  trust: TurnTrust;
}

/**
 * What the turn's adapter will run, with where the run works, for whom, and what it was
 * given. Throws when the turn cannot start (its role or its context is gone, its folder
 * cannot be made, its adapter refuses).
 */
export function prepareLaunch(
  db: Db,
  options: LaunchOptions,
  engine: { describe(run: RunRow): AgentContext; peers(): PeerDirectoryEntry[] },
  { run, role, inputs, token, runTmp }: TurnToPrepare,
): PreparedTurn {
  if (!role) throw new Error('the role no longer exists');
  const context = engine.describe(run);
  const trust = options.trustOf?.(run, context) ?? context.trust?.level ?? 'answer';
  mkdirSync(runTmp, { recursive: true, mode: 0o700 });
  const defaultCwd = options.roleFolder?.(role.id) ?? options.workDir;
  mkdirSync(defaultCwd, { recursive: true, mode: 0o700 });
  const adapter = options.adapters[role.agent.adapter];
  const launch = adapter.prepare({
    role,
    session: run.session,
    people: listPeople(db).map((person) => person.name),
    // Notices first: they say what happened before the requests that follow.
    inputs: [...inputs.filter((i) => i.kind === 'notice'), ...inputs.filter((i) => i.kind !== 'notice')].map(
      (input): AgentInput => ({
        kind: input.kind,
        from: input.author_name,
        body: input.body,
        at: input.created_at,
      }),
    ),
    context,
    peers: engine.peers(),
    trust,
    env: { ...options.agentEnv, PARLEY_TOKEN: token },
    defaultCwd,
    privateDir: runTmp,
    paths: options.paths,
  });
  return { role, launch, context, trust };
}

/** The turn as the run manager keeps it from its start, working, before its process is spawned. */
export function newActiveTurn(
  turnId: number,
  run: RunRow,
  token: string,
  { launch, context }: PreparedTurn,
  inputs: InputRow[],
): ActiveTurn {
  return {
    turnId,
    run,
    tree: null,
    marker: `PARLEY_TOKEN=${token}`,
    phase: WORKING,
    answerPermissions: () => {},
    exited: Promise.resolve(),
    ending: null,
    leaderFirst: launch.stopsItsChildren === true,
    context,
    texts: inputs.filter((input) => input.kind === 'text').length,
    answers: inputs.some((input) => input.answers === 1),
    sent: new Set(),
    settled: Promise.resolve(),
    timer: null,
    session: run.session,
    live: [],
    liveTimer: null,
    modelWatch: startWatch(Date.now()),
    modelTimer: null,
    retrying: null,
  };
}
