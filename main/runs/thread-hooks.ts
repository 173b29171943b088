// What the connection engine does for runs in agent conversations: the run manager is
// handed these by the installation rather than importing the engine.
import type { AgentContext, PeerDirectoryEntry, TurnOutcome } from '../agents/types';
import type { SendResult } from '../role-api/protocol';
import type { RunRow } from '../store/queries/runs';

/** What the connection engine does for runs in agent conversations. */
export interface ThreadHooks {
  describe(run: RunRow): AgentContext;
  changed(threadRowId: number): void;
  /**
   * The reply guard: a turn in an agent conversation the peer started ended without
   * replying, so its final output goes back as the reply, with the checks of `parley
   * reply`. `alongside` (the turn's end) is written in the same commit as the text.
   * Rejects with the reason when it cannot be sent, having written nothing.
   */
  replyWithOutput(run: RunRow, turnId: number, text: string, alongside: () => void): Promise<SendResult>;
  /**
   * An answer came back and the turn it woke passed nothing on: the root shows that it
   * arrived, written in one commit with `alongside` (the turn's end).
   */
  answerArrived(run: RunRow, turnId: number, outcome: TurnOutcome, alongside: () => void): Promise<void>;
  /** Whom roles can ask: the connections and the peer roles each lets them address. */
  peers(): PeerDirectoryEntry[];
  /**
   * A turn was given texts from the peer (`working`), or such a turn is over without
   * having answered (`stopped`, `failed`, `ended`): the peer that asked is told.
   */
  turnState(run: RunRow, turnId: number, state: 'working' | 'stopped' | 'failed' | 'ended' | 'relayed'): void;
}
