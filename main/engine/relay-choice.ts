// Which relay a dial by DHT key goes through, and when: only relays somebody chose (ours,
// or the ones the peer named), and only once holepunching failed. Pure, tested by tables.

/**
 * Holepunching is a race of packets: an abort while a router's mapping was still being
 * learnt (too few answers from the DHT yet, a slow machine) often succeeds a moment
 * later. Tried again once when time is left; two routers that both randomise ports never
 * succeed, so that is not retried.
 */
export function holepunchWorthRetrying(error: unknown, attempt: number, msLeft: number): boolean {
  const code = codeOf(error);
  return attempt < 2 && msLeft > 2_000 && code.startsWith('HOLEPUNCH') && code !== 'HOLEPUNCH_DOUBLE_RANDOMIZED_NATS';
}

/** Whether the dial failed at holepunching (not at finding the peer, its firewall or the pin). */
export function holepunchFailed(error: unknown): boolean {
  return codeOf(error).includes('HOLEPUNCH');
}

/** Whether a stream asking to come through `relay` (null: not relayed) comes through one somebody chose. */
export function chosenRelay(relay: string | null, ours: readonly string[], theirs: readonly string[]): boolean {
  return relay === null || ours.includes(relay) || theirs.includes(relay);
}

/** The relays to try, each once: ours first (we know them), then the peer's. */
export function relaysToTry(ours: readonly string[], theirs: readonly string[]): string[] {
  return [...new Set([...ours, ...theirs])];
}

export type DhtStep = { kind: 'retry' } | { kind: 'relay'; relay: string } | { kind: 'give up' };

/**
 * After a failed dial by key (`relay`: the one it went through, or null), what next: a
 * failed holepunch goes to the first relay (hyperdht still tries to holepunch beside it,
 * and leaves the relay when it can), or is tried once more when there is none; a failed
 * relay passes to the next while time is left.
 */
export function nextDhtStep(
  error: unknown,
  attempt: number,
  msLeft: number,
  relay: string | null,
  relays: readonly string[],
): DhtStep {
  if (relay === null) {
    if (holepunchFailed(error) && relays.length > 0) return { kind: 'relay', relay: relays[0]! };
    return holepunchWorthRetrying(error, attempt, msLeft) ? { kind: 'retry' } : { kind: 'give up' };
  }
  const next = relays[relays.indexOf(relay) + 1];
  return next !== undefined && msLeft > 2_000 && !cancelled(error)
    ? { kind: 'relay', relay: next }
    : { kind: 'give up' };
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

function cancelled(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('cancelled');
}
