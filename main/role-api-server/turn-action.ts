// The reply guard's bookkeeping (DESIGN §11.7): what a turn in an agent conversation
// did, read from what the role API answered it.
import type { ReportResult, SendResult } from '../role-api/protocol';
import type { TurnAction } from '../runs/run-manager';

/** What a turn sent, as the role API answered it. */
export type TurnSent = { command: 'send' | 'reply'; result: SendResult } | { command: 'report'; result: ReportResult };

/**
 * A text on the turn's own agent conversation (`ownThread`) is a reply, anything posted
 * to its root a report, a send to another agent conversation a relay.
 */
export function turnActionOf(ownThread: number, { command, result }: TurnSent): TurnAction {
  if (command === 'report')
    return result.reported === 'thread' && result.threadRowId === ownThread ? 'replied' : 'reported';
  return result.threadRowId === ownThread ? 'replied' : 'relayed';
}
