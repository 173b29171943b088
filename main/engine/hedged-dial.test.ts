// A slow first dial by key gets a second beside it; whichever opens first is used, and
// nothing is left open or running behind it.
import { describe, expect, it } from 'vitest';
import { hedged } from './hedged-dial';

/** A dial the test opens, fails or leaves hanging; it knows whether it was cancelled or closed. */
class FakeDial {
  cancelled = false;
  terminated = false;
  /** What the dial was given to ask for its partner at once. */
  hurry: () => void = () => {};
  readonly started: Promise<void>;
  private begin!: () => void;
  private open!: (value: { ws: { terminate(): void }; n: number }) => void;
  private fail!: (error: Error) => void;

  constructor(
    readonly n: number,
    /** Like a dial whose TLS had already finished when it was cancelled: it opens anyway. */
    private readonly opensAnyway = false,
  ) {
    this.started = new Promise((resolve) => (this.begin = resolve));
  }

  run(signal: AbortSignal, hurry: () => void): Promise<{ ws: { terminate(): void }; n: number }> {
    this.hurry = hurry;
    this.begin();
    return new Promise((resolve, reject) => {
      this.open = resolve;
      this.fail = reject;
      signal.addEventListener('abort', () => {
        this.cancelled = true;
        if (!this.opensAnyway) reject(new Error('cancelled: another path won'));
      });
    });
  }

  opens(): void {
    this.open({ ws: { terminate: () => (this.terminated = true) }, n: this.n });
  }

  fails(message: string): void {
    this.fail(new Error(message));
  }
}

function twoDials(secondOpensAnyway = false) {
  const dials = [new FakeDial(1), new FakeDial(2, secondOpensAnyway)];
  let next = 0;
  return {
    dials,
    /** How many dials were started. */
    started: () => next,
    dial: (signal: AbortSignal, hurry: () => void) => dials[next++]!.run(signal, hurry),
  };
}

describe('a dial by key with a second beside it when slow', () => {
  it('uses the first when it opens in time, and starts no second', async () => {
    const { dials, dial } = twoDials();
    const result = hedged(dial, 60_000, new AbortController().signal);
    await dials[0]!.started;
    dials[0]!.opens();
    expect((await result).n).toBe(1);
    expect(dials[0]!.cancelled).toBe(false);
  });

  it('starts a second when the first hangs, uses it once it opens, and cancels the first', async () => {
    const { dials, dial } = twoDials();
    const result = hedged(dial, 1, new AbortController().signal);
    await dials[1]!.started;
    dials[1]!.opens();
    expect((await result).n).toBe(2);
    expect(dials[0]!.cancelled).toBe(true);
  });

  it('starts the second at once when the first asks for it (its stream is open and silent)', async () => {
    const { dials, dial, started } = twoDials();
    const result = hedged(dial, 60_000, new AbortController().signal);
    await dials[0]!.started;
    dials[0]!.hurry();
    await dials[1]!.started;
    // Asked again, by either: there is no third.
    dials[0]!.hurry();
    dials[1]!.hurry();
    expect(started()).toBe(2);
    dials[1]!.opens();
    expect((await result).n).toBe(2);
    expect(dials[0]!.cancelled).toBe(true);
  });

  it('starts no second when the first asks once it has opened or failed', async () => {
    for (const ends of ['opens', 'fails'] as const) {
      const { dials, dial, started } = twoDials();
      const result = hedged(dial, 60_000, new AbortController().signal);
      await dials[0]!.started;
      if (ends === 'opens') dials[0]!.opens();
      else dials[0]!.fails('HOLEPUNCH_ABORTED');
      await result.catch(() => undefined);
      dials[0]!.hurry();
      expect(started(), ends).toBe(1);
    }
  });

  it('closes the other when both open: only one is used', async () => {
    const { dials, dial } = twoDials(true);
    const result = hedged(dial, 1, new AbortController().signal);
    await dials[1]!.started;
    dials[0]!.opens();
    expect((await result).n).toBe(1);
    expect(dials[1]!.cancelled).toBe(true);
    // It opened all the same: closed before anything is said on it.
    dials[1]!.opens();
    await Promise.resolve();
    expect(dials[1]!.terminated).toBe(true);
    expect(dials[0]!.terminated).toBe(false);
  });

  it('fails as the first failed when it fails before a second starts', async () => {
    const { dials, dial } = twoDials();
    const result = hedged(dial, 60_000, new AbortController().signal);
    await dials[0]!.started;
    dials[0]!.fails('PEER_NOT_FOUND');
    await expect(result).rejects.toThrow('PEER_NOT_FOUND');
  });

  it('waits for the second when the first fails after it started, and uses it', async () => {
    const { dials, dial } = twoDials();
    const result = hedged(dial, 1, new AbortController().signal);
    await dials[1]!.started;
    dials[0]!.fails('Opening handshake has timed out');
    dials[1]!.opens();
    expect((await result).n).toBe(2);
  });

  it('fails with the first one’s error once both have failed', async () => {
    const { dials, dial } = twoDials();
    const result = hedged(dial, 1, new AbortController().signal);
    await dials[1]!.started;
    dials[0]!.fails('Opening handshake has timed out');
    dials[1]!.fails('HOLEPUNCH_ABORTED');
    await expect(result).rejects.toThrow('Opening handshake has timed out');
  });

  it('cancels both when the caller cancels (another path won)', async () => {
    const { dials, dial } = twoDials();
    const cancel = new AbortController();
    const result = hedged(dial, 1, cancel.signal);
    await dials[1]!.started;
    cancel.abort();
    await expect(result).rejects.toThrow('cancelled');
    expect(dials.map((d) => d.cancelled)).toEqual([true, true]);
  });
});
