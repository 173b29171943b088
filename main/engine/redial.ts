// When to dial a peer again, and the timers that do: capped exponential backoff with
// full jitter, so two sides do not redial in step. The tries count up with every dial that did not bring a link,
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

/** The next dial of one connection while it is offline. */
export interface Dialer {
  timer: NodeJS.Timeout | null;
  /** Dials that did not bring a link since the last one of ours that did. */
  attempt: number;
  dialling: boolean;
  /** When the timer fires (ms since the epoch). */
  at: number | null;
}

/** Every connection's next dial: one timer each, its wait growing with the dials that failed. */
export class Redials {
  private readonly dialers = new Map<number, Dialer>();

  constructor(
    private readonly backoff: Backoff,
    private readonly dial: (connectionId: number, dialer: Dialer) => Promise<void>,
  ) {}

  /** Dials after `delayMs`, or after the backoff; nothing when a dial is already due or under way. */
  schedule(connectionId: number, delayMs?: number): void {
    let dialer = this.dialers.get(connectionId);
    if (!dialer) {
      dialer = { timer: null, attempt: 0, dialling: false, at: null };
      this.dialers.set(connectionId, dialer);
    }
    if (dialer.timer || dialer.dialling) return;
    const delay = delayMs ?? redialDelay(dialer.attempt, this.backoff, Math.random());
    dialer.attempt++;
    const state = dialer;
    state.at = Date.now() + delay;
    state.timer = setTimeout(() => {
      state.timer = null;
      state.at = null;
      void this.dial(connectionId, state);
    }, delay);
    state.timer.unref();
  }

  /** The next dial while offline, for owners to see. */
  next(connectionId: number): { attempt: number; at: string } | null {
    const dialer = this.dialers.get(connectionId);
    if (!dialer?.timer || dialer.at === null) return null;
    return { attempt: dialer.attempt, at: new Date(dialer.at).toISOString() };
  }

  /** A link opened: the tries start over if we dialled it. */
  opened(connectionId: number, dialledByUs: boolean): void {
    const dialer = this.dialers.get(connectionId);
    if (dialer) dialer.attempt = attemptsAfterOpen(dialer.attempt, dialledByUs);
  }

  /** Nothing redials the connection any more. */
  forget(connectionId: number): void {
    const dialer = this.dialers.get(connectionId);
    if (dialer?.timer) clearTimeout(dialer.timer);
    this.dialers.delete(connectionId);
  }

  close(): void {
    for (const dialer of this.dialers.values()) if (dialer.timer) clearTimeout(dialer.timer);
    this.dialers.clear();
  }
}
