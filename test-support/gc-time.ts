// The garbage collector's pause time in this process, counted from when this module is
// loaded, for benchmarks that compare two senders' CPU: a sender that keeps more objects
// alive per text pays for it here. Entries arrive a little after each pause.
import { PerformanceObserver } from 'node:perf_hooks';

let totalMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) totalMs += entry.duration;
}).observe({ entryTypes: ['gc'] });

/** Milliseconds of collector pauses so far. */
export function gcMs(): number {
  return totalMs;
}
