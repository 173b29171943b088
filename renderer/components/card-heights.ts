// The heights of collapsed thread cards, learned from the ones measured. A list of 100,000
// agent conversations is laid out from estimates; every estimate that turns out wrong when
// its row is measured moves every row after it, so estimates have to be right. Cards with
// the same lines, the same peer and the same badges have the same height at one width.
import type { ThreadSummary } from '../../shared/domain';
import { waitingForAgent } from '../thread-facts';
import { type ConnectionState } from '../connection-facts';
import { isActive } from './ui';

/**
 * What decides a collapsed card's height: the lines it shows, what sits in its head beside
 * the title, and whose names the lines carry (a longer name may wrap a line).
 */
export function cardShape(thread: ThreadSummary, linkState: ConnectionState | null): string {
  const shownState = linkState === 'revoked' || thread.status === 'open' ? linkState : null;
  return [
    thread.connection.id,
    thread.peerRole,
    thread.localRole,
    thread.startedBy,
    thread.status,
    isActive(thread.run) ? 'working' : '',
    shownState ?? '',
    thread.status === 'closed' && thread.closeReason ? 'reason' : '',
    thread.lastText ? 'last' : '',
    thread.counts.failed > 0 || waitingForAgent(thread) > 0 ? 'counts' : '',
  ].join('|');
}

export class CardHeights {
  private width = 0;
  private readonly byShape = new Map<string, number>();

  height(shape: string): number | undefined {
    return this.byShape.get(shape);
  }

  /** Records a measured card: the first of its shape at this width (a new width forgets them all). */
  learn(shape: string, width: number, height: number): void {
    const rounded = Math.round(width);
    if (rounded !== this.width) {
      this.width = rounded;
      this.byShape.clear();
    }
    if (!this.byShape.has(shape)) this.byShape.set(shape, height);
  }
}
