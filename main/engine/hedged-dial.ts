// A dial by DHT key with a second one beside it when the first is slow. hyperdht can
// leave a first connect unanswered (on a DHT whose nodes are still learning each other,
// the client waits out a passive connect of its own), while a second lookup a moment
// later finds the peer at once: racing one in after a while turns those 8 s into a few.
// Between peers on one host or LAN, hyperdht 6.33–6.34 can also open the dialler's side
// of a stream the other side never sees (holepunchto/hyperdht#304): it stays silent until
// UDX gives up on it, and only a new dial gets through. Such a dial asks for its partner
// at once rather than at the hedge's time.

/** How long a first dial by key has to itself before a second joins it. */
export const DHT_HEDGE_MS = 2_500;

/**
 * How long a dial's stream may stay open with not a byte from the peer before a second
 * dial joins it: the peer's first TLS answer needs one round trip, well under this.
 */
export const DHT_SILENT_MS = 1_000;

/** What a dial gives once open: closed here when it opened too late to be used. */
interface Opened {
  ws: { terminate(): void };
}

/**
 * `dial`, and once more beside it if the first has neither opened nor failed within
 * `afterMs`, or sooner when the first calls its `hurry`. The first to open wins: the
 * other is cancelled, or closed before anything is said on it should it open as well. A
 * first dial that fails before the second starts fails as it is; once both run, the dial
 * fails only when both have, with the first's error.
 */
export function hedged<T extends Opened>(
  dial: (signal: AbortSignal, hurry: () => void) => Promise<T>,
  afterMs: number,
  cancel: AbortSignal,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const controllers: AbortController[] = [];
    let settled = false;
    let running = 0;
    let firstError: Error | undefined;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const finish = () => {
      settled = true;
      if (timer) clearTimeout(timer);
      cancel.removeEventListener('abort', cancelAll);
    };
    const cancelAll = () => {
      for (const controller of controllers) controller.abort();
    };
    const start = () => {
      const controller = new AbortController();
      controllers.push(controller);
      running++;
      dial(controller.signal, startPartner).then(
        (opened) => {
          running--;
          if (settled) {
            opened.ws.terminate();
            return;
          }
          finish();
          for (const other of controllers) if (other !== controller) other.abort();
          resolve(opened);
        },
        (error: Error) => {
          running--;
          firstError ??= error;
          if (settled) return;
          // Failed before a partner started: none will, and it fails as it is.
          if (controllers.length === 1 || running === 0) {
            finish();
            reject(firstError);
          }
        },
      );
    };
    /** Starts the second dial, once, unless it is too late for one. */
    const startPartner = () => {
      if (controllers.length !== 1 || settled || cancel.aborted) return;
      if (timer) clearTimeout(timer);
      timer = null;
      start();
    };
    cancel.addEventListener('abort', cancelAll, { once: true });
    start();
    if (cancel.aborted) cancelAll();
    if (controllers.length === 1 && !settled) {
      timer = setTimeout(startPartner, afterMs);
      timer.unref?.();
    }
  });
}
