// When to dial a peer again: capped exponential backoff with full jitter, so two sides
// do not redial in step. The tries count up with every dial that did not bring a link,
// and only a dial of ours that worked starts them over: a peer that dials in (and
// drops) must not make us dial the address it named any sooner.

export interface Backoff {
  minMs: number;
  maxMs: number;
}

/** The wait before the next dial after `attempt` tries; `random` in [0, 1). */
export function redialDelay(attempt: number, backoff: Backoff, random: number): number {
  const ceiling = Math.min(backoff.maxMs, backoff.minMs * 2 ** Math.min(attempt, 52));
  return random * ceiling;
}

/** The tries counted after a link opened: back to none only if we dialled it. */
export function attemptsAfterOpen(attempt: number, dialledByUs: boolean): number {
  return dialledByUs ? 0 : attempt;
}

/**
 * Which of two links to one peer survives when both sides dialled at once: the one
 * dialled by the smaller installation ID, as both sides decide alike.
 */
export function keepNewLink(existingDialledBy: string, newDialledBy: string, ours: string, theirs: string): boolean {
  const smaller = ours < theirs ? ours : theirs;
  return existingDialledBy !== smaller || newDialledBy === smaller;
}
