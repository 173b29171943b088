// What an agent adapter sees of a turn, and what it hands back: one process per
// turn, whose output the adapter knows how to read.
import type { Role, TurnTrust } from '../../shared/domain';
import type { AgentContext, HistoryEntry, PeerDirectoryEntry, ReportResult, SendResult } from '../role-api/protocol';
import type { RoleRef } from '../store/queries/roles';
import type { RunRow, TurnRow } from '../store/queries/runs';
import type { ModelSignal } from './model-watch';
import { fenced, type Fence } from './peer-words';

export type AgentInputKind = 'message' | 'comment' | 'text' | 'notice';

export interface AgentInput {
  kind: AgentInputKind;
  /** Who it is from: a person's name, `PEER/ROLE` for a text, `parley` for a notice. */
  from: string;
  body: string;
  at: string;
}

// What the run works on, and whom it can ask: the role API's contract defines both.
export type { AgentContext, PeerDirectoryEntry } from '../role-api/protocol';

/** Who calls the role API: a working turn (a run token), or a role (a token an owner made for scripts). */
export type Caller = { kind: 'run'; role: RoleRef; run: RunRow; turn: TurnRow } | { kind: 'role'; role: RoleRef };

/**
 * What the role API asks of the connection engine, which implements it: sends that cross
 * connections, their history, whom roles can ask. Kept here, below both, so that the
 * engine need not import the role API server.
 */
export interface PeerGateway {
  send(caller: Extract<Caller, { kind: 'run' }>, to: string, text: string): Promise<SendResult>;
  reply(caller: Extract<Caller, { kind: 'run' }>, text: string): Promise<SendResult>;
  reportOnThread(caller: Extract<Caller, { kind: 'run' }>, text: string): Promise<ReportResult>;
  /** Every text between `role` and that peer role, in the agent conversations (by row id) `include` lets through. */
  history(role: RoleRef, withPeerRole: string, include: (threadRowId: number) => boolean): Promise<HistoryEntry[]>;
  /** Whom roles can ask (DESIGN §11.8). */
  peers(): PeerDirectoryEntry[];
}

export interface TurnRequest {
  role: Role;
  session: string | null;
  /** This installation's people: a peer's line that starts with one of their names is quoted. */
  people?: string[];
  inputs: AgentInput[];
  context: AgentContext;
  /** Whom the role can ask, as `parley peers` lists it when the turn starts. */
  peers: PeerDirectoryEntry[];
  /**
   * `own` when the run works for this installation's people; otherwise the trust level of
   * the connection whose peer the run works for (a peer-started agent conversation and
   * every run rooted in one). Adapters set their agent's own permission mode from it.
   */
  trust: TurnTrust;
  /** PARLEY_TOKEN, PARLEY_API, PATH with `parley` on it. */
  env: Record<string, string>;
  /** Used when the role sets no working folder. */
  defaultCwd: string;
  /** A folder in the data folder only this user can read, for a turn's private files (its adapter removes them). */
  privateDir: string;
  /** Files the adapters need, e.g. the scripted agent's script. */
  paths: { node: string; scriptedAgent: string };
}

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when stdout went over the cap and was cut. */
  truncated: boolean;
  /** Set when the program could not be started at all: why (also in stderr). */
  notStarted?: string;
  /** Set when Parley lost the program while it ran (the sandbox's host that started it ended): why. */
  lost?: string;
}

export type TurnOutcome = { ok: true; output: string; session?: string | null } | { ok: false; error: string };

export interface StreamUpdate {
  session?: string | null;
  /** A line of live output for people watching the run. */
  live?: string;
  /** The turn cannot succeed (a refused key, say): Parley ends the agent and fails the turn with this. */
  fail?: string;
  /** What the line says about the agent's model: waiting on it, retrying it, or heard from it. */
  model?: ModelSignal;
}

export interface AgentLaunch {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin: string;
  /**
   * The program is one of Parley's own workers, which takes the turn's token from a first
   * line of stdin ahead of the turn (turn-input.ts): a sandbox started ahead of its turn
   * may start the program itself then, and the turn only writes to it.
   */
  readsTokenFirst?: true;
  /** Called for each stdout line as it arrives. */
  onLine?: (line: string) => StreamUpdate | void;
  /**
   * On Stop the first SIGTERM goes to this process alone: it ends what it started itself
   * (the ACP worker cancels its agent's session first), within the grace; the rest of the
   * tree is signalled once it has exited, or at the end of the grace.
   */
  stopsItsChildren?: boolean;
  /**
   * The agent waits on its model (StreamUpdate.model) at most this long before the turn
   * ends, failed with `fail()`'s sentence.
   */
  modelTimeout?: { limitSec: number; fail(): string };
  finish(result: ProcessResult): TurnOutcome;
}

export interface AgentAdapter {
  prepare(request: TurnRequest): AgentLaunch;
}

/**
 * The inputs as plain text, for agents that read a prompt: a notice as `[notice] …`, a
 * person's message as `name: …`, and a peer's text inside the turn's fence, so nothing
 * in it can pass for either.
 */
export function inputsAsText(inputs: readonly AgentInput[], fence: Fence, people: readonly string[] = []): string {
  // A peer's line that starts with the name of someone quoted here is quoted itself.
  const names = [
    ...people,
    ...inputs.filter((input) => input.kind === 'message' || input.kind === 'comment').map((input) => input.from),
  ];
  return inputs
    .map((input) =>
      input.kind === 'notice'
        ? `[notice] ${input.body}`
        : input.kind === 'text'
          ? fenced(fence, `from ${input.from}`, input.body, names)
          : `${input.from}: ${input.body}`,
    )
    .join('\n\n');
}

/** Whether any input is a peer's words (the prompt then says what its fences are). */
export const hasPeerText = (inputs: readonly AgentInput[]): boolean => inputs.some((input) => input.kind === 'text');
