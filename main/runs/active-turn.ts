// What the run manager keeps of a turn while its agent runs: its process tree, where it
// is in its life (./turn-phase), what it was given and what it sent, its timers.
import type { AgentContext } from '../agents/types';
import type { ModelWatch } from '../agents/model-watch';
import type { RunRow } from '../store/queries/runs';
import type { ProcessTree } from './process-tree';
import type { TurnPhase } from './turn-phase';

/**
 * What a turn sent, as the role API saw it: an answer on its own agent conversation, a
 * report to its root, or a send to another agent conversation (a relay, whose answer
 * comes back to a run that answers for this one).
 */
export type TurnAction = 'replied' | 'reported' | 'relayed';

export interface ActiveTurn {
  turnId: number;
  run: RunRow;
  /** The agent's process tree, once it started. */
  tree: ProcessTree | null;
  /** In the environment of every process of the turn: how its tree is found once processes left it. */
  marker: string;
  /** Where the turn is: working, failing, its stop committed, or stopping (./turn-phase). */
  phase: TurnPhase;
  /** After a stop's commit: answers the agent's requests that the stop cancelled. */
  answerPermissions: () => void;
  /** Resolves when the leader has exited. */
  exited: Promise<void>;
  /** Ending the tree, once begun (by a stop, a failure, or leftovers after the leader's exit). */
  ending: Promise<void> | null;
  /** On Stop, the leader alone gets the first signal (AgentLaunch.stopsItsChildren). */
  leaderFirst: boolean;
  /** What the run works on, as its agent was told (null when that could not be said). */
  context: AgentContext | null;
  /** How many texts from the peer the turn was given. */
  texts: number;
  /**
   * It was given a notice it answers for (an ask its run relayed ended unanswered): its
   * asker hears its state and gets its output as the reply, as for the peer's text.
   */
  answers: boolean;
  /** What it sent, as the role API told (the reply guard's own reply counts as `replied`). */
  sent: Set<TurnAction>;
  /** Resolves when the turn's end has been committed. */
  settled: Promise<void>;
  timer: NodeJS.Timeout | null;
  session: string | null;
  live: string[];
  liveTimer: NodeJS.Timeout | null;
  /** How long the agent has waited on its model (AgentLaunch.modelTimeout), and the timer that ends the wait. */
  modelWatch: ModelWatch;
  modelTimer: NodeJS.Timeout | null;
  /** While the agent retries its model: its line saying so; null once the model answers. */
  retrying: string | null;
}
