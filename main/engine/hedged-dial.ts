// A dial by DHT key with a second one beside it when the first is slow. hyperdht can
// leave a first connect unanswered (on a DHT whose nodes are still learning each other,
// the client waits out a passive connect of its own), while a second lookup a moment
// later finds the peer at once: racing one in after a while turns those 8 s into a few.

/** How long a first dial by key has to itself before a second joins it. */
export const DHT_HEDGE_MS = 2_500;

/** What a dial gives once open: closed here when it opened too late to be used. */
interface Opened {
  ws: { terminate(): void };
}

/**
 * `dial`, and once more beside it if the first has neither opened nor failed within
 * `afterMs`. The first to open wins: the other is cancelled, or closed before anything is
 * said on it should it open as well. A first dial that fails before the second starts
 * fails as it is; once both run, the dial fails only when both have, with the first's error.
 */
export function hedged<T extends Opened>(
  dial: (signal: AbortSignal) => Promise<T>,
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
      dial(controller.signal).then(
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
    cancel.addEventListener('abort', cancelAll, { once: true });
    start();
    if (cancel.aborted) cancelAll();
    timer = setTimeout(() => {
      timer = null;
      if (!settled && !cancel.aborted) start();
    }, afterMs);
    timer.unref?.();
  });
}
