// What a run manager is given: the store and events, the adapters, where agents work and
// their environment, its limits, and the sandbox turns start in.
import type { AdapterName, TurnTrust } from '../../shared/domain';
import type { AgentAdapter, AgentContext } from '../agents/types';
import type { EventHub } from '../events';
import type { TurnSandboxOptions } from '../sandbox/turn-sandbox';
import type { Db } from '../store/database';
import type { RunRow } from '../store/queries/runs';

export interface RunManagerOptions {
  db: Db;
  events: EventHub;
  adapters: Record<AdapterName, AgentAdapter>;
  /** Where agents work when their role names no folder. */
  workDir: string;
  /** Environment every agent gets: PARLEY_API and a PATH with `parley` first. */
  agentEnv: Record<string, string>;
  paths: { node: string; scriptedAgent: string };
  maxConcurrentTurns?: number;
  defaultTurnTimeoutSec?: number;
  /** How long an agent has between SIGTERM and SIGKILL. */
  stopGraceMs?: number;
  /** Cap on an agent's stdout kept for its output. */
  maxOutputBytes?: number;
  /** False holds every turn (inputs still commit): the wire benchmark measures without agents. */
  startTurns?: boolean;
  /** How long an agent's request to use a tool waits for a person. */
  permissionTimeoutMs?: number;
  /** The OS sandbox every agent starts in (main/sandbox); without it agents start as they are. */
  sandbox?: TurnSandboxOptions;
  /** Turns' private files and temporary folders; by default `turns` beside `workDir`. */
  turnsDir?: string;
  /** Whom a turn works for, which decides its sandbox and its agent's own mode; by default 'own'. */
  trustOf?: (run: RunRow, context: AgentContext) => TurnTrust;
  /** A role that names no folder works in its own, made on first use; by default `workDir` itself. */
  roleFolder?: (roleId: number) => string;
}
